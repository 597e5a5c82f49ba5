"""``auditor serve``'s receiver under load: acknowledge latency (p50/p99) with 4 and 16 clients,
spans/s stored as a ratio to the file adapter's rate on the same bodies, and memory over a soak.

Input: the ``single_retrieval`` OpenInference fixture (17 spans) copied under fresh trace ids,
``TRACES_PER_REQUEST`` traces per ``ExportTraceServiceRequest`` (510 spans, about what the SDK's
``BatchSpanProcessor`` sends at once, 512). The very same request bodies are written as one
length-prefixed protobuf stream (the Collector file exporter's ``format: proto``) and read through
the ``otlp-proto`` file adapter in this process: that is the reference rate (parsing only, no store).

The server is a real ``auditor serve`` process on a fresh SQLite store per run, with the audit
workers held back (a quiet window of an hour) so the figures are the receiver's. Each of
``CLIENTS`` threads posts bodies back to back over a kept-alive connection (saturation), honouring
429 with ``Retry-After`` as an exporter does; a request's time from send to 200 is its acknowledge
latency. The server answers once a body is committed and reads it into spans behind the answer,
so two rates are given: spans acknowledged per second (until the last 200) and spans *stored*
per second (until ``/healthz`` shows no body left to read): the second is the one compared with the
file adapter. Then the same clients *paced*: together they offer ``PACED_SHARE`` (0.9) of the
file adapter's spans/s, each sending one body every interval (the target load: can the receiver
store spans that fast and still answer each request quickly?). A run offered exactly the target
stores at most that (less its last body's read), so 4 clients are paced once more at
``CAPACITY_SHARE`` (1.0) of the file adapter's rate: what the receiver stores when offered more
than the target. At saturation the acknowledge
latency is queueing by construction (N clients back to back wait N service times); the paced
runs give the latency at a stated load. The soak posts at saturation for ``soak_seconds`` (``--soak``), sampling the server's
resident set (``VmRSS``) twice a second: a bounded server's memory levels off while the stored
spans keep growing on disk.
"""

from __future__ import annotations

import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from auditor.trace import Trace
from auditor.trace._ingest import iter_file
from benchmarks.bigstore import PG_URL, pg_available, pg_schema

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "single_retrieval" / "openinference.otlp.pb"
TRACES_PER_REQUEST = 30
#: The paced runs offer this share of the file adapter's spans/s (the stored-rate target).
PACED_SHARE = 0.9
#: One more paced run (4 clients) offers this share: the stored rate when more than the target is offered.
CAPACITY_SHARE = 1.0
#: The paced runs send this many times the saturation runs' requests.
PACED_TIMES = 4
#: Client threads of the saturation runs; the soak uses the first.
CLIENTS = (4, 16)
#: The stores each run is made on (PostgreSQL skipped with a note when it does not answer).
STORES = ("sqlite", "postgresql")
PROTO = {"Content-Type": "application/x-protobuf"}


def requests(count: int, offset: int = 0) -> list[bytes]:
    """``count`` request bodies, each ``TRACES_PER_REQUEST`` copies of the fixture under fresh trace ids."""
    template = trace_service_pb2.ExportTraceServiceRequest.FromString(FIXTURE.read_bytes())
    bodies = []
    for r in range(count):
        request = trace_service_pb2.ExportTraceServiceRequest()
        for t in range(TRACES_PER_REQUEST):
            trace_id = ((offset + r) * TRACES_PER_REQUEST + t + 1).to_bytes(16, "big")
            for resource_spans in template.resource_spans:
                copy = request.resource_spans.add()
                copy.CopyFrom(resource_spans)
                for scope_spans in copy.scope_spans:
                    for span in scope_spans.spans:
                        span.trace_id = trace_id
        bodies.append(request.SerializeToString())
    return bodies


def spans_in(body: bytes) -> int:
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    return sum(len(s.spans) for rs in request.resource_spans for s in rs.scope_spans)


def file_rate(bodies: list[bytes], workdir: Path) -> dict[str, Any]:
    """The same bodies as a length-prefixed proto stream, read through the file adapter."""
    path = workdir / "same-spans.otlp.pb"
    path.write_bytes(b"".join(struct.pack(">I", len(b)) + b for b in bodies))
    for _ in iter_file(path, "otlp-proto"):  # warm-up: imports and first-use costs are not throughput
        break
    spans, started = 0, time.perf_counter()
    for item in iter_file(path, "otlp-proto"):
        if isinstance(item, Trace):
            spans += len(item.spans)
    seconds = time.perf_counter() - started
    return {"spans": spans, "seconds": seconds, "spans_per_second": spans / seconds}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class _Server:
    def __init__(self, db: str) -> None:
        self.port = _free_port()
        env = {
            **os.environ,
            "AUDITOR_SERVE_QUIET": "3600",
            "AUDITOR_SERVE_ROOT_WAIT": "3600",
            "AUDITOR_SERVE_QUEUE": "100000000",
            "AUDITOR_SERVE_RATE": "100000",
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from auditor.cli import main; main()",
                "serve",
                "--port",
                str(self.port),
                "--db",
                db,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("auditor serve did not start")
            time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def _post_all(
    url: str, bodies: list[bytes], clients: int, until: float | None = None
) -> tuple[list[float], int, int]:
    """Post ``bodies`` from ``clients`` threads (again and again until ``until``, if given).

    A 429 is honoured as an exporter would: wait ``Retry-After`` seconds and send the body again
    (the wait is not counted as acknowledge latency; each attempt is timed on its own). Returns
    each acknowledged request's latency, the number acknowledged and the number of 429s.
    """
    latencies: list[float] = []
    failures: list[str] = []
    throttled = [0]
    lock = threading.Lock()

    def client(mine: list[bytes]) -> None:
        with httpx.Client(timeout=60) as http:
            while True:
                for body in mine:
                    while True:
                        started = time.perf_counter()
                        answer = http.post(url + "/v1/traces", content=body, headers=PROTO)
                        took = time.perf_counter() - started
                        if answer.status_code != 429:
                            break
                        with lock:
                            throttled[0] += 1
                        time.sleep(float(answer.headers.get("retry-after", "1")))
                    if answer.status_code != 200:
                        failures.append(f"{answer.status_code} {answer.text[:200]}")
                        return
                    with lock:
                        latencies.append(took)
                    if until is not None and time.monotonic() > until:
                        return
                if until is None:
                    return

    threads = [threading.Thread(target=client, args=(bodies[i::clients],)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"the server refused a request: {failures[0]}")
    return latencies, len(latencies), throttled[0]


def _post_paced(url: str, bodies: list[bytes], clients: int, interval: float) -> list[float]:
    """Post ``bodies`` from ``clients`` threads, each sending one every ``interval`` seconds
    (staggered; a late answer delays that client's next send, it never sends a burst to catch up).

    Returns each request's acknowledge latency.
    """
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    origin = time.monotonic()

    def client(index: int, mine: list[bytes]) -> None:
        due = origin + interval * index / clients
        with httpx.Client(timeout=60) as http:
            for body in mine:
                time.sleep(max(0.0, due - time.monotonic()))
                started = time.perf_counter()
                answer = http.post(url + "/v1/traces", content=body, headers=PROTO)
                took = time.perf_counter() - started
                if answer.status_code != 200:
                    failures.append(f"{answer.status_code} {answer.text[:200]}")
                    return
                with lock:
                    latencies.append(took)
                due = max(due + interval, time.monotonic())

    threads = [threading.Thread(target=client, args=(i, bodies[i::clients])) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"the server refused a request: {failures[0]}")
    return latencies


def _drained(url: str, timeout: float = 600.0) -> None:
    """Wait until the server has read every acknowledged body into spans (``/healthz`` backlog 0)."""
    deadline = time.monotonic() + timeout
    # One kept-alive client: a new one per look builds a TLS context (about 15 ms of CPU), and that
    # much polling took a core's share from the server it measures.
    with httpx.Client(timeout=10) as http:
        while http.get(url + "/healthz").json()["backlog"]["bodies"]:
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not read its backlog in time")
            time.sleep(0.02)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextmanager
def fresh_store(kind: str, tmp: Path, name: str) -> Iterator[str]:
    """The URL of a new, empty store: a SQLite file in ``tmp``, or a PostgreSQL schema of its own
    (migrated here, as ``auditor db upgrade`` would: the server does not migrate PostgreSQL)."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp / f'{name}.db'}"
        return
    from auditor.store import upgrade

    with pg_schema(PG_URL) as url:
        upgrade(url)
        yield url


@contextmanager
def server_on(kind: str, tmp: Path, name: str) -> Iterator[_Server]:
    """A fresh server on a fresh store of ``kind``, stopped afterwards."""
    with fresh_store(kind, tmp, name) as db:
        server = _Server(db)
        try:
            yield server
        finally:
            server.stop()


def _load(
    server: _Server, clients: int, bodies: list[bytes], per_request: int, offset: int
) -> dict[str, Any]:
    """One saturation run with ``clients`` threads."""
    _post_all(server.url, requests(clients, offset=offset), clients)  # warm-up, not counted
    _drained(server.url)
    started = time.perf_counter()
    latencies, acknowledged, throttled = _post_all(server.url, bodies, clients)
    acked = time.perf_counter() - started
    _drained(server.url)
    stored = time.perf_counter() - started
    spans = acknowledged * per_request
    return {
        "clients": clients,
        "requests": acknowledged,
        "spans": spans,
        "throttled": throttled,
        "ack_seconds": acked,
        "stored_seconds": stored,
        "acked_spans_per_second": spans / acked,
        "spans_per_second": spans / stored,
        "ack_p50_ms": statistics.median(latencies) * 1000,
        "ack_p99_ms": _percentile(latencies, 0.99) * 1000,
    }


def _paced(
    server: _Server, clients: int, bodies: list[bytes], per_request: int, rate: float
) -> dict[str, Any]:
    """``clients`` threads offering ``rate`` spans/s between them."""
    interval = clients * per_request / rate
    _post_all(server.url, requests(clients, offset=40_000), clients)  # warm-up, not counted
    _drained(server.url)
    started = time.perf_counter()
    latencies = _post_paced(server.url, bodies, clients, interval)
    sent = time.perf_counter() - started
    _drained(server.url)
    stored = time.perf_counter() - started
    return {
        "clients": clients,
        "requests": len(latencies),
        "offered_spans_per_second": rate,
        "interval_seconds": interval,
        "send_seconds": sent,
        "stored_seconds": stored,
        "spans_per_second": len(latencies) * per_request / stored,
        "ack_p50_ms": statistics.median(latencies) * 1000,
        "ack_p99_ms": _percentile(latencies, 0.99) * 1000,
    }


def _soak(server: _Server, clients: int, count: int, per_request: int, seconds: float) -> dict[str, Any]:
    """Saturation for ``seconds``, the server's resident set sampled twice a second."""
    _post_all(server.url, requests(clients, offset=30_000), clients)  # warm-up
    _drained(server.url)
    samples: list[float] = [_rss_mb(server.process.pid)]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            samples.append(_rss_mb(server.process.pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.perf_counter()
    try:
        latencies, soaked, throttled = _post_all(
            server.url, requests(count, offset=20_000), clients, until=time.monotonic() + seconds
        )
        _drained(server.url)
    finally:
        done.set()
        sampler.join()
    stored = time.perf_counter() - started
    samples.append(_rss_mb(server.process.pid))
    half = len(samples) // 2
    return {
        "clients": clients,
        "seconds": seconds,
        "spans": soaked * per_request,
        "throttled": throttled,
        "spans_per_second": soaked * per_request / stored,
        "ack_p50_ms": statistics.median(latencies) * 1000,
        "ack_p99_ms": _percentile(latencies, 0.99) * 1000,
        "rss_start_mb": samples[0],
        "rss_peak_mb": max(samples),
        "rss_end_mb": samples[-1],
        "rss_second_half_growth_mb": samples[-1] - min(samples[half:]) if samples[half:] else 0.0,
        "rss_samples": len(samples),
        # About 30 evenly spaced samples: enough to tell a slope from the noise afterwards.
        "rss_series_mb": [round(x, 1) for x in samples[:: max(1, len(samples) // 30)]],
    }


def run(
    workdir: Path | None = None,
    quick: bool = False,
    count: int | None = None,
    soak_seconds: float | None = None,
    clients: tuple[int, ...] = CLIENTS,
    stores: tuple[str, ...] = STORES,
) -> dict[str, Any]:
    """The figures on each of ``stores``; ``quick`` for a smoke run (fewer requests, a short soak)."""
    count = count or (16 if quick else 64)
    soak_seconds = soak_seconds or (2.0 if quick else 30.0)
    bodies = requests(count)
    # The paced runs send PACED_TIMES as many (fresh trace ids): at the target rate that is about
    # 15 s, enough requests for a p99 that is not simply the slowest of a few.
    paced_bodies = requests(count * PACED_TIMES, offset=count)
    per_request = spans_in(bodies[0])
    skipped: dict[str, str] = {}
    if "postgresql" in stores and (why := pg_available()) is not None:
        skipped["postgresql"] = why
        stores = tuple(s for s in stores if s != "postgresql")
    with tempfile.TemporaryDirectory(prefix="auditor-bench-serve-") as tmp:
        work = workdir or Path(tmp)
        file_rates = [file_rate(bodies, work)["spans_per_second"]]
        # The target load: the spans/s the receiver must store (0.9 of the file adapter's rate).
        target = PACED_SHARE * file_rates[0]
        runs: dict[str, dict[str, Any]] = {}
        for n, kind in enumerate(stores):
            offset = 100_000 * (n + 1)
            loads, paced = [], []
            for i, c in enumerate(clients):
                with server_on(kind, Path(tmp), f"serve-{c}") as server:
                    loads.append(_load(server, c, bodies, per_request, offset=offset + 10_000 * (i + 1)))
            for c in clients:
                with server_on(kind, Path(tmp), f"serve-paced-{c}") as server:
                    paced.append(_paced(server, c, paced_bodies, per_request, target))
            with server_on(kind, Path(tmp), "serve-paced-capacity") as server:
                more = CAPACITY_SHARE * file_rates[0]
                paced.append(_paced(server, clients[0], paced_bodies, per_request, more))
            with server_on(kind, Path(tmp), "serve-soak") as server:
                soak = _soak(server, clients[0], count, per_request, soak_seconds)
            runs[kind] = {"loads": loads, "paced": paced, "soak": soak}
        # Again at the end: on a shared machine the rate drifts; the higher of the two is the
        # reference (the stricter ratio for the server).
        file_rates.append(file_rate(bodies, work)["spans_per_second"])
    for figures in runs.values():
        for load in [*figures["loads"], *figures["paced"], figures["soak"]]:
            load["ratio_to_file"] = load["spans_per_second"] / max(file_rates)
    return {
        "spans_per_request": per_request,
        "file_spans_per_second": max(file_rates),
        "file_spans_per_second_runs": file_rates,
        "stores": runs,
        "skipped": skipped,
    }


def table(results: dict[str, Any]) -> tuple[str, list[str], list[list[Any]]]:
    """Title, header and rows for the benchmark table (one block of rows per store)."""
    r = results
    rows: list[list[Any]] = []
    for kind, figures in r["stores"].items():
        rows += [
            [
                f"{kind}: {load['clients']} clients, {load['requests']} requests",
                f"{load['ack_p50_ms']:.1f}",
                f"{load['ack_p99_ms']:.1f}",
                f"{load['acked_spans_per_second']:.0f}",
                f"{load['spans_per_second']:.0f}",
                f"{load['ratio_to_file']:.2f}x",
                load["throttled"],
                "",
            ]
            for load in figures["loads"]
        ]
        rows += [
            [
                f"{kind}: {load['clients']} clients paced, {load['offered_spans_per_second']:.0f} spans/s offered",
                f"{load['ack_p50_ms']:.1f}",
                f"{load['ack_p99_ms']:.1f}",
                "",
                f"{load['spans_per_second']:.0f}",
                f"{load['ratio_to_file']:.2f}x",
                "",
                "",
            ]
            for load in figures["paced"]
        ]
        soak = figures["soak"]
        rows.append(
            [
                f"{kind}: soak {soak['seconds']:.0f} s, {soak['clients']} clients",
                f"{soak['ack_p50_ms']:.1f}",
                f"{soak['ack_p99_ms']:.1f}",
                "",
                f"{soak['spans_per_second']:.0f}",
                f"{soak['ratio_to_file']:.2f}x",
                soak["throttled"],
                f"{soak['rss_start_mb']:.0f} / {soak['rss_peak_mb']:.0f} / {soak['rss_end_mb']:.0f} "
                f"(2nd half {soak['rss_second_half_growth_mb']:+.1f})",
            ]
        )
    for kind, why in r.get("skipped", {}).items():
        rows.append([f"{kind}: skipped ({why})", "", "", "", "", "", "", ""])
    return (
        f"auditor serve: OTLP/HTTP receiver ({r['spans_per_request']} spans a request; "
        f"file adapter {r['file_spans_per_second']:.0f} spans/s on the same bodies)",
        [
            "store and load",
            "ack p50 ms",
            "ack p99 ms",
            "spans/s acknowledged",
            "spans/s stored",
            "stored / file",
            "429s",
            "RSS start / peak / end MB",
        ],
        rows,
    )
