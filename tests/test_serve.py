"""``auditor serve`` end to end: the real OTel SDK exporter against a real server process.

The fixture's spans are exported with ``opentelemetry-exporter-otlp-proto-http`` (gzip, as an
instrumented agent would) and the same spans are written to a file with the SDK's encoder; the
server's stored audit must equal ``auditor audit`` of that file. Then: a re-sent batch changes
nothing, a late span re-audits the trace as a second, distinguishable pass, and a server killed
between acknowledging and auditing loses nothing and audits the trace once after its restart, and
one killed (``kill -9``) while acknowledged bodies still wait to be read into spans loses none of
their spans (on SQLite and PostgreSQL).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]
import httpx
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind

from auditor.run import audit
from auditor.store import BodyQueue, Store, received_traces, upgrade
from tests.conftest import FIXTURES
from tests.support.otlp_replay import sdk_span, sdk_spans, write_pb
from tests.support.serve import Server, running_server
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (SQLite and PostgreSQL stores)

FIXTURE = FIXTURES / "single_retrieval" / "openinference.otlp.jsonl"
QUICK = {"AUDITOR_SERVE_QUIET": "0.3"}
PB = "application/x-protobuf"


def export(server: Server, spans: list[ReadableSpan]) -> SpanExportResult:
    exporter = OTLPSpanExporter(
        endpoint=server.url + "/v1/traces", headers=server.headers, compression=Compression.Gzip, timeout=10
    )
    try:
        return exporter.export(spans)
    finally:
        exporter.shutdown()


def answers_of(answers: list[Any]) -> list[dict[str, Any]]:
    """Answers as JSON (the API's form), in id order; the API's ``run_id`` (a file audit has none yet) left out."""
    out = [dict(a) if isinstance(a, dict) else a.model_dump(mode="json") for a in answers]
    for answer in out:
        answer.pop("run_id", None)
    return sorted(out, key=lambda a: a["answer_id"])


def late_span(spans: list[ReadableSpan]) -> ReadableSpan:
    """A new tool span under the fixture's root, ending after everything else."""
    root = next(s for s in spans if s.parent is None)
    assert root.context is not None and root.end_time is not None
    end = max(s.end_time or 0 for s in spans)
    data = {
        "traceId": format(root.context.trace_id, "032x"),
        "spanId": "00000000000000aa",
        "parentSpanId": format(root.context.span_id, "016x"),
        "name": "late-tool",
        "kind": SpanKind.INTERNAL.value + 1,
        "startTimeUnixNano": str(end + 1_000),
        "endTimeUnixNano": str(end + 2_000),
        "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}}],
    }
    return sdk_span(data, root.resource, root.instrumentation_scope)  # type: ignore[arg-type]


def test_served_audit_equals_the_file_audit_and_late_spans_reaudit(tmp_path: Path) -> None:
    spans = sdk_spans(FIXTURE)
    expected = audit([write_pb(spans, tmp_path / "same-spans.pb")], store=False)
    assert expected.answers, "the fixture has answers to compare"
    trace_id = expected.answers[0].trace_id
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=QUICK) as server:
        assert export(server, spans) is SpanExportResult.SUCCESS
        first = server.wait_for("/api/audits", lambda d: len(d["audits"]) == 1)["audits"][0]
        assert (first["trace_id"], first["generation"], first["spans"], first["error"]) == (
            trace_id,
            1,
            17,
            None,
        )
        served = server.get("/api/answers", trace_id=trace_id, run_id=first["run_id"])
        assert answers_of(served["answers"]) == answers_of(expected.answers)
        assert served["next"] is None

        # The same batch again (an exporter retry): nothing new, no second audit.
        assert export(server, spans) is SpanExportResult.SUCCESS
        time.sleep(1.0)
        assert len(server.get("/api/audits")["audits"]) == 1

        # A late span: a second pass, its own run, the first kept.
        assert export(server, [late_span(spans)]) is SpanExportResult.SUCCESS
        audits = server.wait_for("/api/audits", lambda d: len(d["audits"]) == 2)["audits"]
        assert [a["generation"] for a in audits] == [1, 2]  # the re-sent batch made no generation
        assert audits[1]["spans"] == 18 and audits[1]["run_id"] != first["run_id"]
        runs = {r["id"] for r in server.get("/api/runs")["runs"]}
        assert {first["run_id"], audits[1]["run_id"]} <= runs
        both = server.get("/api/answers", trace_id=trace_id)["answers"]
        assert len(both) == 2 * len(expected.answers)
        one = server.get(f"/api/answers/{expected.answers[0].answer_id}", run_id=first["run_id"])
        assert one["answer_id"] == expected.answers[0].answer_id


def test_a_restart_between_acknowledge_and_audit_loses_nothing(db_url: str) -> None:  # noqa: F811
    db = db_url
    upgrade(db)  # PostgreSQL is migrated on purpose (`auditor db upgrade`); SQLite would be anyway
    spans = sdk_spans(FIXTURE)
    # A quiet window far longer than the test: the server acknowledges, then dies before auditing
    # (the acknowledged body either read into spans already, or still waiting to be read).
    with running_server(db, env={"AUDITOR_SERVE_QUIET": "600"}) as server:
        assert export(server, spans) is SpanExportResult.SUCCESS
        health = server.get("/healthz")
        # (two reads: the body may be read into spans between them, so both can count it)
        assert health["pending"] <= 1 and 1 <= health["pending"] + health["backlog"]["bodies"] <= 2, health
        server.kill()
    with running_server(db, env=QUICK) as server:
        audits = server.wait_for("/api/audits", lambda d: len(d["audits"]) >= 1)["audits"]
        time.sleep(1.0)  # several polls later, still audited once
        assert server.get("/api/audits")["audits"] == audits
        assert len(audits) == 1 and audits[0]["spans"] == 17 and audits[0]["error"] is None
        assert server.get("/healthz")["pending"] == 0
        assert server.get("/api/answers", run_id=audits[0]["run_id"])["answers"]


def bodies(count: int, traces: int, first: int = 1) -> tuple[list[bytes], dict[str, int]]:
    """``count`` protobuf requests of ``traces`` copies of the fixture each, every copy under its own
    trace id; and the spans each trace id holds, counted from the requests themselves."""
    template = ExportTraceServiceRequest.FromString(
        (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()
    )
    out, held = [], {}
    for r in range(count):
        request = ExportTraceServiceRequest()
        for t in range(traces):
            trace_id = (first + r * traces + t).to_bytes(16, "big")
            for resource_spans in template.resource_spans:
                copy = request.resource_spans.add()
                copy.CopyFrom(resource_spans)
                for scope_spans in copy.scope_spans:
                    for span in scope_spans.spans:
                        span.trace_id = trace_id
                        held[trace_id.hex()] = held.get(trace_id.hex(), 0) + 1
        out.append(request.SerializeToString())
    return out, held


def _readers_of(pid: int) -> int:
    """The server's reader processes: its children started with ``spawn`` (not the resource tracker)."""
    found = 0
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
        found += b"multiprocessing.spawn" in command and b"resource_tracker" not in command
    return found


def test_several_readers_store_every_span_once(db_url: str) -> None:  # noqa: F811
    """``AUDITOR_SERVE_READERS`` reader processes run side by side, each claiming bodies of its own:
    every span of every acknowledged request is stored."""
    upgrade(db_url)
    requests, held = bodies(16, 30)
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_RATE": "100000", "AUDITOR_SERVE_READERS": "3"}
    with running_server(db_url, env=env) as server:
        with httpx.Client(timeout=30) as client:
            for body in requests:
                answer = client.post(server.url + "/v1/traces", content=body, headers={"Content-Type": PB})
                assert answer.status_code == 200, answer.text
        server.wait_for("/healthz", lambda d: d["backlog"]["bodies"] == 0)
        assert _readers_of(server.process.pid) == 3
    with Store(db_url) as store:
        stored = {t.trace_id: t.spans for t in received_traces(store, 10_000)}
    assert stored == held


def test_a_kill_with_acknowledged_bodies_not_yet_read_loses_none_of_them(db_url: str) -> None:  # noqa: F811
    """``kill -9`` while acknowledged bodies still wait to be read into spans: after a restart every
    span of every acknowledged request is stored (the write path that answers before reading)."""
    upgrade(db_url)
    requests, held = bodies(12, 30)
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_RATE": "100000"}
    with running_server(db_url, env=env) as server:
        with httpx.Client(timeout=30) as client:
            for body in requests:  # back to back: acknowledging outpaces reading
                answer = client.post(server.url + "/v1/traces", content=body, headers={"Content-Type": PB})
                assert answer.status_code == 200, answer.text
        server.kill()
    with Store(db_url) as store:
        waiting, _ = BodyQueue(store).backlog()
        assert waiting > 0, "every body was read before the kill: the test did not reach its case"
    with running_server(db_url, env=env) as server:
        server.wait_for("/healthz", lambda d: d["backlog"]["bodies"] == 0)
    with Store(db_url) as store:
        stored = {t.trace_id: t.spans for t in received_traces(store, 10_000)}
    assert stored == held


def test_a_backlog_over_its_bound_is_429_and_resource_exhausted_with_a_retry_hint(tmp_path: Path) -> None:
    """While ``AUDITOR_SERVE_BACKLOG`` acknowledged bodies wait to be read, OTLP/HTTP answers 429 with
    ``Retry-After: 1`` and OTLP/gRPC ``RESOURCE_EXHAUSTED`` with a 1 s ``RetryInfo`` (retryable, per
    the OTLP specification); once read, requests are taken again and nothing acknowledged is lost."""
    from tests.test_serve_grpc import call, retry_delay

    (big,), held = bodies(1, 120)  # 2,040 spans: reading it takes a while on any machine
    (small,), small_held = bodies(1, 1, first=1000)
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_RATE": "100000", "AUDITOR_SERVE_BACKLOG": "1"}
    with running_server(db, env=env, grpc=True) as server, httpx.Client(timeout=30) as client:
        first = client.post(server.url + "/v1/traces", content=big, headers={"Content-Type": PB})
        refused = client.post(server.url + "/v1/traces", content=small, headers={"Content-Type": PB})
        code, _, trailers = call(server, small, token=None)
        assert first.status_code == 200, first.text
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1", refused.text
        assert b"AUDITOR_SERVE_BACKLOG" in refused.content  # a google.rpc.Status in protobuf
        assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and retry_delay(trailers) == 1.0
        server.wait_for("/healthz", lambda d: d["backlog"]["bodies"] == 0)
        again = client.post(server.url + "/v1/traces", content=small, headers={"Content-Type": PB})
        assert again.status_code == 200, again.text
        server.wait_for("/healthz", lambda d: d["backlog"]["bodies"] == 0)
    with Store(db) as store:
        stored = {t.trace_id: t.spans for t in received_traces(store, 10_000)}
    assert stored == held | small_held  # the refused requests stored nothing; the accepted, all
