"""The serve fault corpus (tests/support/serve_faults.py) against a real ``auditor serve``, on SQLite and
PostgreSQL: every hostile body (OTLP/HTTP JSON and protobuf, OTLP/gRPC) and API request gets a clear
answer.

The promise: a 2xx (with a partial success naming what was rejected) or a 4xx with a one-line
reason; never a 5xx (gRPC: never UNKNOWN, INTERNAL or UNAVAILABLE), never a hang. A 2xx stores or
rejects every span the body holds (read by the test's own oracle, once the server has read the
acknowledged body into spans), so ``200 {}`` over nothing stored is caught; the good trace beside a damaged one is stored whole. CI runs a fixed sample per store;
``AUDITOR_FAULTS=full`` runs the whole corpus; afterwards every stored trace is audited the way a
worker would, with no traceback. The counts (tried / clean / clean error / recorded
problem) per store are printed at the end of the run.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc  # type: ignore[import-untyped]
import httpx
import pytest
from click.testing import CliRunner
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from auditor.cli import cli
from auditor.serve._workers import binary_records, json_lines
from auditor.store import Intake, Store, new_owner, received_traces
from tests.support.serve import Server, drain, running_server
from tests.support.serve_data import store_audits
from tests.support.serve_faults import PROTOBUF, ApiCase, BodyCase, serve_corpus, serve_sample, spans_in
from tests.test_serve_grpc import call
from tests.test_store import pg_schema, pg_url  # noqa: F401  (the session's PostgreSQL server)

pytestmark = pytest.mark.serve_live

FULL = os.environ.get("AUDITOR_FAULTS") == "full"
CASES = serve_sample(serve_corpus(per_family=100 if FULL else 30), 0 if FULL else 320)
#: Seconds one request may take before it counts as a hang.
HANG_SECONDS = 20
LIMIT = 1_000_000
#: What the corpus saw per store, printed by ``pytest_terminal_summary`` in conftest.py.
COUNTS: dict[str, Counter[str]] = {}
#: gRPC codes a hostile request may get: accepted, refused as malformed, or over the size limit.
GRPC_OK = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    traces = tmp_path_factory.mktemp("serve-faults")
    if request.param == "sqlite":
        url = f"sqlite:///{traces / 'serve.db'}"
        store_audits(url, traces / "traces")  # answers, so cursors and filters have rows to page
        yield url
        return
    with pg_schema(request.getfixturevalue("pg_url")) as url:
        store_audits(url, traces / "traces")
        yield url


@pytest.fixture(scope="module")
def server(store_url: str) -> Iterator[Server]:
    env = {
        "AUDITOR_SERVE_QUIET": "600",  # nothing is audited (or removed) while the corpus runs
        "AUDITOR_SERVE_MAX_BODY": str(LIMIT),
        "AUDITOR_SERVE_RATE": "100000",
        "AUDITOR_SERVE_QUEUE": "100000",
    }
    with running_server(store_url, env=env, grpc=True) as running:
        yield running


@pytest.fixture(scope="module")
def store(store_url: str) -> Iterator[Store]:
    with Store(store_url) as opened:
        yield opened


def _received(store: Store) -> dict[str, int]:
    """Spans stored per trace, once every acknowledged body has been read into spans."""
    drain(store, HANG_SECONDS)
    return {t.trace_id: t.spans for t in received_traces(store, 1_000_000)}


def _one_line(text: object) -> bool:
    return isinstance(text, str) and bool(text.strip()) and "\n" not in text and len(text) < 600


def _send(server: Server, case: BodyCase) -> tuple[str, int, str]:
    """``(outcome, rejected, reason)``: outcome is "ok" or "refused"; a 5xx, a bad code or a hang fails."""
    if case.family == "grpc":
        code, reply, _ = call(server, case.body, token=None, gzip_it="grpc-encoding" in case.headers)
        assert code in GRPC_OK, f"{case.id}: gRPC {code}"
        if code is not grpc.StatusCode.OK:
            return "refused", 0, ""
        assert reply is not None
        response = trace_service_pb2.ExportTraceServiceResponse.FromString(reply)
        return "ok", response.partial_success.rejected_spans, response.partial_success.error_message
    try:
        answer = httpx.post(
            server.url + "/v1/traces", content=case.body, headers=case.headers, timeout=HANG_SECONDS
        )
    except httpx.TimeoutException:
        pytest.fail(f"{case.id}: hang (no answer within {HANG_SECONDS} s)")
    assert answer.status_code < 500, f"{case.id}: {answer.status_code} {answer.text[:500]}"
    protobuf = answer.headers.get("content-type", "").startswith(PROTOBUF)
    if answer.status_code >= 400:
        assert 400 <= answer.status_code < 500
        if protobuf:
            status = status_pb2.Status.FromString(answer.content)
            assert _one_line(status.message), f"{case.id}: {answer.content!r}"
        else:
            assert _one_line(answer.json().get("message")), f"{case.id}: {answer.text[:500]}"
        return "refused", 0, ""
    assert answer.status_code == 200, f"{case.id}: {answer.status_code}"
    if protobuf:
        response = trace_service_pb2.ExportTraceServiceResponse.FromString(answer.content)
        return "ok", response.partial_success.rejected_spans, response.partial_success.error_message
    partial = answer.json().get("partialSuccess", {})
    return "ok", int(partial.get("rejectedSpans", "0")), str(partial.get("errorMessage", ""))


def _body_case(server: Server, store: Store, case: BodyCase, counts: Counter[str]) -> None:
    before = _received(store)
    outcome, rejected, reason = _send(server, case)
    if outcome == "refused":
        assert not case.keep, f"{case.id}: refused, but the good trace beside the damage must be stored"
        counts["clean error"] += 1
        return
    after = _received(store)
    stored = sum(after.values()) - sum(before.values())
    media = PROTOBUF if case.family == "grpc" else case.headers.get("Content-Type", "")
    held = spans_in(case.body, media.split(";")[0].strip().lower(), case.headers.get("Content-Encoding"))
    # Every span the body holds is stored or counted as rejected: no silent "200 {}".
    assert stored + rejected >= held, f"{case.id}: {held} spans sent, {stored} stored, {rejected} rejected"
    assert stored <= held, f"{case.id}: {stored} spans stored from a body of {held}"
    for trace_id in case.keep:
        assert after.get(trace_id, 0) - before.get(trace_id, 0) == case.keep_spans, (
            f"{case.id}: the good trace {trace_id} was not stored whole"
        )
    if rejected:
        assert _one_line(reason), f"{case.id}: {rejected} rejected with no one-line reason: {reason!r}"
    counts["recorded problem" if rejected else "clean"] += 1


def _api_case(server: Server, case: ApiCase, counts: Counter[str]) -> None:
    url = server.url + case.path + (f"?{case.query}" if case.query else "")
    try:
        answer = httpx.get(httpx.URL(url), timeout=HANG_SECONDS)
    except httpx.TimeoutException:
        pytest.fail(f"{case.id}: hang (no answer within {HANG_SECONDS} s)")
    assert answer.status_code < 500, f"{case.id}: {answer.status_code} {answer.text[:500]}"
    if answer.status_code >= 400:
        if case.path.startswith("/api/"):
            detail = answer.json().get("detail")
            if isinstance(detail, list):  # FastAPI's 422: one entry per parameter, each with its reason
                assert detail and all(_one_line(d.get("msg")) for d in detail), f"{case.id}: {detail}"
            else:
                assert _one_line(detail), f"{case.id}: {answer.text[:500]}"
        counts["clean error"] += 1
        return
    if case.path.startswith("/api/"):
        json.loads(answer.text)
    counts["clean"] += 1


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_serve_fault_case_keeps_the_promise(
    case: BodyCase | ApiCase, server: Server, store: Store, store_url: str
) -> None:
    counts = COUNTS.setdefault("sqlite" if store_url.startswith("sqlite") else "postgresql", Counter())
    counts["tried"] += 1
    if isinstance(case, BodyCase):
        _body_case(server, store, case, counts)
    else:
        _api_case(server, case, counts)


def test_the_stored_hostile_spans_audit_without_a_traceback(
    server: Server, store: Store, tmp_path: Path
) -> None:
    """After the corpus: every trace the server stored, claimed as a worker would and audited as one
    file (the worker's own path: records, protobuf ones turned into JSON -> OTLP JSON Lines -> ``auditor audit``), ends with a known
    exit status and no traceback; what the receiver kept must be readable downstream."""
    intake, owner = Intake(store), new_owner()
    records: list[str] = []
    while (claim := intake.claim(owner, quiet=0, root_wait=0, lease=600)) is not None:
        records.extend(json_lines(claim.records, binary_records()))
    assert records, "the corpus stored nothing"
    path = tmp_path / "received.otlp.jsonl"
    path.write_bytes("".join(r + "\n" for r in records).encode("utf-8"))
    result = CliRunner().invoke(
        cli, ["audit", str(path), "--format", "otlp-json", "--no-store", "--json", "-"], catch_exceptions=True
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 3, 4), result.stderr[-2000:]
    assert "Traceback" not in result.stdout + result.stderr
    assert json.loads(result.stdout)["run"]["inputs"][0]["traces"] >= 1
