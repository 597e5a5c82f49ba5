"""What ``auditor serve`` runs with, read once from flags and the settings table, and checked.

Safe by default: the server binds the loopback interface; binding anything else without a bearer
token is refused unless the caller says ``insecure`` on purpose.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field

from auditor.errors import UsageError
from auditor.llm import price_table
from auditor.serve._budget import SpendCap, Then, parse_cap, parse_then
from auditor.settings import SETTINGS, positive_number, run_lease, setting
from auditor.store import Retention, retention
from auditor.trace import TraceSampling, parse_sampling

DEFAULT_HOST = "127.0.0.1"
#: The OTLP/HTTP port (the OpenTelemetry SDKs' default for ``http/protobuf``).
DEFAULT_PORT = 4318
#: The OTLP/gRPC port (the OpenTelemetry SDKs' default for ``grpc``), served with ``--grpc``.
DEFAULT_GRPC_PORT = 4317


@dataclass(frozen=True)
class ServeConfig:
    """Everything the server needs; build it with :func:`serve_config`."""

    host: str
    port: int
    token: str | None
    db_url: str | None
    policy: str | None
    judge: str
    base_url: str | None
    workers: int
    quiet: float  # seconds without a new span before a trace whose root ended is audited
    root_wait: float  # seconds without a new span before a trace with no ended root is audited
    max_body: int  # bytes, before and after decompression
    queue: int  # traces waiting for an audit before requests are refused with 503
    lease: float  # a worker's lease on the trace it audits
    poll: float  # how often an idle worker looks for a ready trace
    rate: float = 100.0  # OTLP requests a second per client address before 429 / RESOURCE_EXHAUSTED
    grpc_port: int | None = None  # OTLP/gRPC served on this port too, when set
    hosts: tuple[str, ...] = ()  # names the server answers to besides its bound address ("*": any)
    proxies: tuple[str, ...] = ()  # addresses / networks whose X-Forwarded-For is believed
    header_timeout: float = 10.0  # seconds for a request's line and headers (408 after)
    body_timeout: float = 60.0  # seconds for a request's whole body (408 after)
    backlog: int = 500  # stored bodies waiting to be read before requests get 429 / RESOURCE_EXHAUSTED
    readers: int | None = None  # processes reading stored bodies into spans; None: by the store
    retention: Retention = field(default_factory=Retention)  # what the periodic prune deletes (none)
    prune_every: float = 3600.0  # seconds between prunes, when ``retention`` is set
    sampling: TraceSampling = field(
        default_factory=TraceSampling
    )  # the share of traces audited and the filter (_workers.py)
    cap: SpendCap | None = None  # the LLM judge's spending cap (_budget.py)
    cap_then: Then = "wait"  # once the cap is spent: traces wait, or are judged offline
    events_endpoint: str | None = None  # OTLP/HTTP logs URL receiving gen_ai.evaluation.result events


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_config(
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    insecure: bool = False,
    db_url: str | None = None,
    policy: str | None = None,
    judge: str | None = None,
    base_url: str | None = None,
    workers: int = 2,
    quiet: float | None = None,
    root_wait: float | None = None,
    max_body: int | None = None,
    queue: int | None = None,
    backlog: int | None = None,
    readers: int | None = None,
    rate: float | None = None,
    grpc_port: int | None = None,
    hosts: str | Sequence[str] | None = None,
    proxies: str | Sequence[str] | None = None,
    sample: str | float | None = None,
    filter: str | None = None,
    budget: str | None = None,
    budget_spent: str | None = None,
    events_endpoint: str | None = None,
) -> ServeConfig:
    """The server's configuration: arguments over ``AUDITOR_*`` variables over defaults.

    ``hosts`` are the names the server answers to besides its bound address (``AUDITOR_SERVE_HOSTS``,
    comma-separated; ``*`` for any): see :mod:`auditor.serve._guard`. ``proxies`` are the reverse
    proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed (``AUDITOR_SERVE_PROXIES``:
    addresses or networks, comma-separated; none by default, so a client cannot name its own address).
    ``sample`` and ``filter`` choose the traces audited (``AUDITOR_SERVE_SAMPLE``, ``AUDITOR_SERVE_FILTER``:
    :func:`auditor.trace.parse_sampling`); ``budget`` and ``budget_spent`` cap the LLM judge's spending
    (``AUDITOR_SERVE_BUDGET``, ``AUDITOR_SERVE_BUDGET_SPENT``: :mod:`auditor.serve._budget`);
    ``events_endpoint`` receives every verdict as an OTLP event (``AUDITOR_SERVE_EVENTS_ENDPOINT``).

    Raises:
        UsageError: a setting is not a positive number, a sample, filter or cap is malformed, a USD
            cap names a judge model without a price, a proxy is not an address or network, or ``host`` is not a loopback address and
            there is no token (``--token`` / ``AUDITOR_SERVE_TOKEN``) and ``insecure`` is not set.
    """
    token = setting("serve_token", token)
    if not _loopback(host) and not token and not insecure:
        raise UsageError(
            f"--host {host} would expose the server beyond this machine with no token: set "
            "AUDITOR_SERVE_TOKEN (or pass --token) so requests need `Authorization: Bearer <token>`, "
            "or pass --insecure to serve without one."
        )
    quiet_s = positive_number("serve_quiet", quiet)
    judge_spec = setting("judge", judge) or "offline"
    cap = parse_cap(setting("serve_budget", budget))
    _check_priced(cap, judge_spec)
    return ServeConfig(
        host=host,
        port=port,
        token=token or None,
        db_url=db_url,
        policy=setting("policy", policy),
        judge=judge_spec,
        base_url=setting("base_url", base_url),
        workers=workers,
        quiet=quiet_s,
        root_wait=max(quiet_s, positive_number("serve_root_wait", root_wait)),
        max_body=int(positive_number("serve_max_body", max_body)),
        queue=int(positive_number("serve_queue", queue)),
        backlog=int(positive_number("serve_backlog", backlog)),
        readers=_readers(readers),
        retention=retention(),
        prune_every=positive_number("serve_prune_every", unit="seconds"),
        lease=run_lease(),
        poll=min(1.0, quiet_s / 4),
        rate=positive_number("serve_rate", rate),
        grpc_port=grpc_port,
        hosts=_listed("serve_hosts", hosts),
        proxies=_networks(_listed("serve_proxies", proxies)),
        header_timeout=positive_number("serve_header_timeout", unit="seconds"),
        body_timeout=positive_number("serve_body_timeout", unit="seconds"),
        sampling=parse_sampling(
            setting("serve_sample", None if sample is None else str(sample)),
            setting("serve_filter", filter),
            source="AUDITOR_SERVE_SAMPLE / AUDITOR_SERVE_FILTER",
        ),
        cap=cap,
        cap_then=parse_then(setting("serve_budget_spent", budget_spent)),
        events_endpoint=setting("serve_events_endpoint", events_endpoint) or None,
    )


def _readers(given: int | None) -> int | None:
    """``AUDITOR_SERVE_READERS`` (or ``given``), or None when unset: :func:`readers_for` then chooses."""
    variable, _ = SETTINGS["serve_readers"]
    raw = str(given) if given is not None else setting("serve_readers") or ""
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(
            f"{variable}={raw!r} is not a whole number of processes: set it to one such as 2, or unset "
            "it (1 on SQLite, 2 on PostgreSQL)."
        )
    return value


def readers_for(config: ServeConfig, dialect: str) -> int:
    """The reader processes to start: the setting, else 2 on PostgreSQL (its backends insert side by
    side: measured on 2 cores, 0.87-0.89 of the file adapter's rate stored instead of 0.67-0.71)
    and 1 on SQLite (one writer at a time: a second reader only adds CPU beside the answers)."""
    if config.readers is not None:
        return config.readers
    return 2 if dialect == "postgresql" else 1


def _check_priced(cap: SpendCap | None, judge: str) -> None:
    """A USD cap needs the judge model's price (an unknown cost would stop every LLM audit)."""
    if cap is None or cap.unit != "usd" or not judge.startswith("openai:"):
        return
    model = judge.split(":", 1)[1]
    if model not in price_table(setting("llm_prices")):
        raise UsageError(
            f"AUDITOR_SERVE_BUDGET {cap.text()} is in USD but {model!r} has no price: set "
            f"AUDITOR_LLM_PRICES={model}=PROMPT/COMPLETION (USD per million tokens), or cap tokens instead."
        )


def _listed(name: str, given: str | Sequence[str] | None) -> tuple[str, ...]:
    """A list setting: ``given`` (a list, or a comma-separated string) > its variable; trimmed, no empties."""
    raw = setting(name, given) if given is None or isinstance(given, str) else given
    items = raw.split(",") if isinstance(raw, str) else list(raw or ())
    return tuple(item.strip() for item in items if item.strip())


def _networks(given: tuple[str, ...]) -> tuple[str, ...]:
    for item in given:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise UsageError(
                f"AUDITOR_SERVE_PROXIES (--trusted-proxy) holds {item!r}, which is not an IP address or "
                "network: list your reverse proxies' addresses, e.g. 10.0.0.5,10.1.0.0/16."
            ) from None
    return given
