"""Phoenix's REST spans as the OTLP JSON lines the ``otlp-json`` adapter reads (no server needed).

The Phoenix span below is written by hand in the shape ``GET /v1/projects/{project}/spans``
returns; the expected trace is read off it.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.sources.otlp_file import flatten, write_otlp_json
from auditor_otel.sources.phoenix import pulled_span

from auditor.trace import SpanKind, SpanStatus, Trace

TRACE = "0af7651916cd43dd8448eb211c80319c"

TOOL = {
    "id": "U3Bhbjo0",
    "name": "lookup_order",
    "context": {"trace_id": TRACE, "span_id": "b7ad6b7169203331"},
    "span_kind": "TOOL",
    "parent_id": "00f067aa0ba902b7",
    "start_time": "2026-03-03T10:00:01.250000+00:00",
    "end_time": "2026-03-03T10:00:01.500000+00:00",
    "status_code": "ERROR",
    "status_message": "order system slow",
    "attributes": {
        "tool": {"name": "lookup_order"},
        "input": {"value": '{"order_id": "A-1"}'},
        "output.value": "shipped",
    },
    "events": [
        {"name": "retry", "timestamp": "2026-03-03T10:00:01.300000+00:00", "attributes": {"attempt": 2}}
    ],
}
ROOT_SPAN = {
    "name": "agent",
    "context": {"trace_id": TRACE, "span_id": "00f067aa0ba902b7"},
    "span_kind": "UNKNOWN",
    "parent_id": None,
    "start_time": "2026-03-03T10:00:00+00:00",
    "end_time": "2026-03-03T10:00:02+00:00",
    "status_code": "OK",
    "attributes": {},
}


def test_nested_attributes_become_dotted_keys() -> None:
    nested = {"llm": {"input_messages": [{"message": {"role": "user", "content": "hi"}}], "model_name": "m"}}
    assert flatten(nested) == {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "hi",
        "llm.model_name": "m",
    }
    assert flatten({"tag.tags": ["a", "b"]}) == {"tag.tags": ["a", "b"]}  # a list of values stays a list


def test_a_phoenix_span_reads_back_as_the_span_it_was(tmp_path: Path) -> None:
    path = tmp_path / "pulled.otlp.jsonl"
    # Phoenix lists the newest first; the file holds the trace's spans in start order.
    assert (
        write_otlp_json(
            [pulled_span(TOOL), pulled_span(ROOT_SPAN)], path, {"openinference.project.name": "p"}
        )
        == 1
    )
    items = list(OtlpJsonAdapter().parse(io.BytesIO(path.read_bytes()), str(path)))
    traces = [i for i in items if isinstance(i, Trace)]
    assert len(traces) == 1 and len(items) == 1  # no problem reported
    root, tool = traces[0].spans
    assert (root.span_id, root.parent_id, root.status) == ("00f067aa0ba902b7", None, SpanStatus.OK)
    assert "openinference.span.kind" not in root.attributes  # Phoenix's UNKNOWN: no kind was sent
    assert tool.parent_id == "00f067aa0ba902b7"
    assert tool.kind == SpanKind.TOOL  # span_kind put back as openinference.span.kind
    assert tool.attributes["openinference.span.kind"] == "TOOL"
    assert tool.attributes["tool.name"] == "lookup_order"
    assert tool.attributes["input.value"] == '{"order_id": "A-1"}'
    assert (tool.status, tool.status_message) == (SpanStatus.ERROR, "order system slow")
    assert tool.start == datetime(2026, 3, 3, 10, 0, 1, 250000, tzinfo=UTC)
    assert tool.end == datetime(2026, 3, 3, 10, 0, 1, 500000, tzinfo=UTC)
    assert [(e.name, e.attributes) for e in tool.events] == [("retry", {"attempt": 2})]


def test_traces_are_written_in_the_order_they_started(tmp_path: Path) -> None:
    later = {
        **ROOT_SPAN,
        "context": {"trace_id": "1" * 32, "span_id": "1" * 16},
        "start_time": "2026-03-03T11:00:00+00:00",
        "end_time": "2026-03-03T11:00:01+00:00",
    }
    path = tmp_path / "two.otlp.jsonl"
    assert write_otlp_json([pulled_span(later), pulled_span(TOOL), pulled_span(ROOT_SPAN)], path, {}) == 2
    items = list(OtlpJsonAdapter().parse(io.BytesIO(path.read_bytes()), str(path)))
    assert [t.trace_id for t in items if isinstance(t, Trace)] == [TRACE, "1" * 32]
