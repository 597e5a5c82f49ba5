"""``serve()``: open the store, start the audit workers, run the application on uvicorn until stopped."""

from __future__ import annotations

import socket
from collections.abc import Callable

from auditor.errors import UsageError
from auditor.judges import build_judge
from auditor.llm import run_sync
from auditor.policy import load_policy
from auditor.serve._app import create_app
from auditor.serve._config import ServeConfig, readers_for
from auditor.serve._events import event_sender
from auditor.serve._ingest import IngestWorker
from auditor.serve._otlp import ADAPTERS, PROTOBUF
from auditor.serve._prune import Pruner
from auditor.serve._receiver import Receiver
from auditor.serve._timeouts import timed_protocol
from auditor.serve._workers import AuditWorkers
from auditor.store import BodyQueue, Intake, Store
from auditor.trace import SpanReceiver, installed_adapters


def receivers() -> dict[str, SpanReceiver]:
    """The installed adapters that read OTLP/HTTP request bodies, by media type."""
    found = {item.name: item.adapter for item in installed_adapters()}
    readers: dict[str, SpanReceiver] = {}
    for media, name in ADAPTERS.items():
        adapter = found.get(name)
        if isinstance(adapter, SpanReceiver):
            readers[media] = adapter
    return readers


def _check_port(config: ServeConfig) -> None:
    """Fail with one line, before any work, when an address cannot be bound (uvicorn would log and exit 1)."""
    ports = [(config.port, "--port")]
    if config.grpc_port is not None:
        ports.append((config.grpc_port, "--grpc-port"))
    for port, flag in ports:
        try:
            family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
                probe.bind((config.host, port))
        except OSError as err:
            raise UsageError(
                f"Cannot listen on {config.host}:{port} ({err.strerror or err}): pass another {flag}, "
                "or stop the process using it."
            ) from err


async def _check_judge(config: ServeConfig) -> None:
    """Build the judge once and reach its endpoint, so a bad spec, key or URL stops the start-up."""
    setup = build_judge(config.judge, base_url=config.base_url, use_cache=False)
    try:
        await setup.check()
    finally:
        await setup.aclose()


def serve(config: ServeConfig, announce: Callable[[str], None] | None = None) -> None:
    """Receive OTLP/HTTP on ``config.host:config.port`` and audit what arrives, until SIGINT/SIGTERM.

    ``announce`` is given one line saying where the server listens, once the checks have passed.

    Raises:
        UsageError: the OTel adapter is not installed, the store is an in-memory database (the
            workers' audits open it again), the policy cannot be loaded, the judge spec is bad or the port is taken.
        LLMError: an ``openai:`` judge's endpoint is unreachable or refuses the key (checked once
            at start-up, as ``auditor audit`` does before a run).
        StoreError: the store cannot be opened.
    """
    import uvicorn

    readers = receivers()
    if not readers:
        raise UsageError(
            "auditor serve reads OTLP with the OTel adapter: pip install auditor-otel (adapters/otel)."
        )
    policy = load_policy(config.policy)
    run_sync(lambda: _check_judge(config))
    _check_port(config)
    events = event_sender(config.events_endpoint)
    with Store(config.db_url, background_checkpoints=True) as store:
        if store.in_memory:
            raise UsageError(
                "auditor serve needs a store on disk or a server: pass --db sqlite:///FILE or a PostgreSQL URL."
            )
        intake, bodies = Intake(store), BodyQueue(store)
        ingest = IngestWorker(store.url, config.lease, readers_for(config, store.engine.dialect.name))
        receiver = Receiver(config, intake, bodies, ingest.stored)
        app = create_app(config, store, intake, readers, receiver)
        grpc_server = None
        if config.grpc_port is not None:
            if PROTOBUF not in readers:
                raise UsageError(
                    "OTLP/gRPC needs the otlp-proto adapter: pip install auditor-otel (adapters/otel)."
                )
            try:
                from auditor.serve._grpc import start_grpc
            except ImportError as exc:  # grpcio is in the serve extra, but may be missing
                raise UsageError(f"--grpc needs grpcio: pip install 'trace-auditor[serve]' ({exc})") from exc

            grpc_server = start_grpc(receiver, readers[PROTOBUF], config.host, config.grpc_port)
        ingest.start()
        workers = AuditWorkers(config, intake, policy, events).start()
        pruner = Pruner(config, store).start()
        if announce is not None:
            base = f"http://{config.host}:{config.port}"
            grpc_line = f", OTLP/gRPC on {config.host}:{config.grpc_port}" if grpc_server is not None else ""
            announce(f"auditor serve: OTLP/HTTP on {base}/v1/traces{grpc_line}, API on {base}/api/answers")
            for line in live_settings(config):
                announce(f"auditor serve: {line}")
        try:
            uvicorn.run(
                app,
                host=config.host,
                port=config.port,
                log_level="warning",
                # X-Forwarded-For names the client only when a proxy we trust says so: uvicorn
                # believes any loopback peer by default, which let one client dodge the rate limit.
                proxy_headers=bool(config.proxies),
                forwarded_allow_ips=list(config.proxies) or None,
                http=timed_protocol(config.header_timeout, config.body_timeout),  # slow clients: _timeouts.py
            )
        finally:
            if grpc_server is not None:
                grpc_server.stop(2.0)
            pruner.stop()
            ingest.stop()
            workers.stop()
            if events is not None:
                events.close()


def live_settings(config: ServeConfig) -> list[str]:
    """What the server audits and spends, said at start-up when it is not "every trace, no cap"."""
    lines = []
    sampling = config.sampling
    if not sampling.everything:
        share = f"{sampling.share:.4g} of traces (by trace id)" if sampling.share < 1 else "every trace"
        where = f" with a span matching {sampling.filter_text()}" if sampling.filtered else ""
        lines.append(f"auditing {share}{where}")
    if config.cap is not None and config.judge != "offline":
        then = "wait" if config.cap_then == "wait" else "are judged offline"
        lines.append(f"LLM judge capped at {config.cap.text()}; once spent, traces {then}")
    if config.events_endpoint:
        lines.append(f"verdicts sent as gen_ai.evaluation.result events to {config.events_endpoint}")
    return lines
