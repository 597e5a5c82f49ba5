"""``auditor serve`` end to end: the real OTel SDK exporter against a real server process.

The fixture's spans are exported with ``opentelemetry-exporter-otlp-proto-http`` (gzip, as an
instrumented agent would) and the same spans are written to a file with the SDK's encoder; the
server's stored audit must equal ``auditor audit`` of that file. Then: a re-sent batch changes
nothing, a late span re-audits the trace as a second, distinguishable pass, and a server killed
between acknowledging and auditing loses nothing and audits the trace once after its restart (on
SQLite and PostgreSQL).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind

from auditor.run import audit
from auditor.store import upgrade
from tests.conftest import FIXTURES
from tests.support.otlp_replay import sdk_span, sdk_spans, write_pb
from tests.support.serve import Server, running_server
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (SQLite and PostgreSQL stores)

FIXTURE = FIXTURES / "single_retrieval" / "openinference.otlp.jsonl"
QUICK = {"AUDITOR_SERVE_QUIET": "0.3"}


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
    # A quiet window far longer than the test: the server acknowledges, then dies before auditing.
    with running_server(db, env={"AUDITOR_SERVE_QUIET": "600"}) as server:
        assert export(server, spans) is SpanExportResult.SUCCESS
        assert server.get("/healthz")["pending"] == 1
        server.kill()
    with running_server(db, env=QUICK) as server:
        audits = server.wait_for("/api/audits", lambda d: len(d["audits"]) >= 1)["audits"]
        time.sleep(1.0)  # several polls later, still audited once
        assert server.get("/api/audits")["audits"] == audits
        assert len(audits) == 1 and audits[0]["spans"] == 17 and audits[0]["error"] is None
        assert server.get("/healthz")["pending"] == 0
        assert server.get("/api/answers", run_id=audits[0]["run_id"])["answers"]
