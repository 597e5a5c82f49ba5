"""The OTLP/HTTP receiver under abuse, against a real server: a client over its request rate gets
429 with ``Retry-After`` while others are served; a flood of oversized, inflating and hostile bodies
(sent at once, with and without a ``Content-Length``) is refused without the server's memory
growing with them, and it keeps acknowledging good requests afterwards.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from auditor.serve._receiver import RateLimiter
from tests.conftest import FIXTURES
from tests.support.serve import Server, running_server
from tests.test_serve_otlp import deep_protobuf

PB = (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()
PROTO = {"Content-Type": "application/x-protobuf"}
LIMIT = 1_000_000


def rss_kb(server: Server) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def post(server: Server, body: bytes | Iterator[bytes], headers: dict[str, str]) -> httpx.Response:
    return httpx.post(server.url + "/v1/traces", content=body, headers=headers, timeout=30)


def test_the_rate_limiter_refills_per_client() -> None:
    limiter = RateLimiter(2.0)
    assert [limiter.wait("a", at=0.0) for _ in range(2)] == [0.0, 0.0]  # a burst of one second's worth
    assert limiter.wait("a", at=0.0) == pytest.approx(0.5)
    assert limiter.wait("b", at=0.0) == 0.0  # another client has its own bucket
    assert limiter.wait("a", at=0.5) == 0.0  # refilled at two a second
    few = RateLimiter(1.0, clients=2)
    for client in ("x", "y", "z"):
        few.wait(client, at=0.0)
    assert len(few._buckets) == 2  # bounded: the least recently seen client is forgotten


def test_a_client_over_its_rate_gets_429_with_retry_after(tmp_path: Path) -> None:
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_RATE": "1"}
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=env) as server:
        # Empty requests (valid, no spans): cheap, so the next comes well within the second's refill.
        answers = [post(server, b"", PROTO) for _ in range(4)]
        statuses = [a.status_code for a in answers]
        assert statuses[0] == 200 and 429 in statuses[1:], statuses
        throttled = next(a for a in answers if a.status_code == 429)
        assert throttled.headers["retry-after"] == "1"
        assert b"AUDITOR_SERVE_RATE" in throttled.content
        assert throttled.headers["content-type"] == "application/x-protobuf"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_MAX_BODY": str(LIMIT), "AUDITOR_SERVE_RATE": "1000"}
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=env) as running:
        yield running


def test_a_flood_of_hostile_bodies_is_refused_and_costs_no_memory(server: Server) -> None:
    def endless() -> Iterator[bytes]:  # chunked, no Content-Length, never ends on its own
        chunk = b"\x00" * 65536
        for _ in range(LIMIT // 65536 * 4):
            yield chunk

    bomb = gzip.compress(b"\x00" * (LIMIT * 100))  # 100 MB once inflated
    many_spans = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "q"} for _ in range(20_000)]}]}
        ]
    }
    hostile: list[tuple[bytes | None, dict[str, str], int]] = [
        (b"\x00" * (LIMIT + 1), PROTO, 413),
        (bomb, {**PROTO, "Content-Encoding": "gzip"}, 413),
        (None, PROTO, 413),  # the endless stream
        (b"[" * (LIMIT - 1), {"Content-Type": "application/json"}, 400),
        (deep_protobuf(2000), PROTO, 400),
        (json.dumps(many_spans).encode(), {"Content-Type": "application/json"}, 200),  # all rejected
    ]
    before = rss_kb(server)
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(
                lambda item: post(server, item[0] if item[0] is not None else endless(), item[1]).status_code,
                hostile * 4,
            )
        )
    assert results == [expected for _, _, expected in hostile] * 4
    grown = rss_kb(server) - before
    assert grown < 150_000, f"the server grew by {grown} kB refusing the bodies"
    good = post(server, PB, PROTO)
    assert (
        good.status_code == 200
        and server.wait_for("/healthz", lambda d: d["backlog"]["bodies"] == 0)["pending"] == 1
    )
