"""OTLP ingest streams: a complete trace is yielded before the input ends, and memory is bounded.

These tests fail if an adapter goes back to buffering the whole file: they read through a stream
that records how far it has been read when the first trace comes out.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from auditor_otel.collect import EVICTED_REASON, PART_REASON
from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_proto import OtlpProtoAdapter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from otel_samples.otlp import T0, line, sid, span

from auditor.trace import Problem, Severity, Trace


def tid(k: int) -> str:
    return f"{k + 1:032x}"


def children_first(k: int) -> list[str]:
    """One trace as the Collector writes it: the child's batch, then the root's."""
    return [
        line([span(2, "child", parent=1, start=1, end=2, trace=tid(k))]),
        line([span(1, "root", start=0, end=3, trace=tid(k))]),
    ]


def items_with_position(
    adapter: OtlpJsonAdapter | OtlpProtoAdapter, data: bytes
) -> Iterator[tuple[int, Trace | Problem]]:
    stream = io.BytesIO(data)
    for item in adapter.parse(stream, "s.jsonl"):
        yield stream.tell(), item


def test_json_lines_yield_each_trace_long_before_the_end_of_the_stream() -> None:
    text = "".join(f"{row}\n" for k in range(400) for row in children_first(k))
    data = text.encode()
    seen = list(items_with_position(OtlpJsonAdapter(), data))
    traces = [(pos, item) for pos, item in seen if isinstance(item, Trace)]
    assert [item for _, item in seen if isinstance(item, Problem)] == []
    assert len(traces) == 400 and all(len(t.spans) == 2 for _, t in traces)
    first_pos, first = traces[0]
    assert first.trace_id == tid(0)
    # Emitted after the default quiet window (100 lines), i.e. about a quarter into the file.
    assert first_pos < len(data) // 2
    # And every trace but the last window's is out before the end.
    assert sum(1 for pos, _ in traces if pos < len(data)) >= 300


def test_without_a_quiet_window_a_trace_is_yielded_right_after_its_root_line() -> None:
    rows = children_first(0) + children_first(1)
    data = "".join(f"{row}\n" for row in rows).encode()
    adapter = OtlpJsonAdapter()
    adapter.quiet_batches = 0
    seen = list(items_with_position(adapter, data))
    first_pos, first = next((p, i) for p, i in seen if isinstance(i, Trace))
    assert first.trace_id == tid(0) and first_pos == len(rows[0]) + len(rows[1]) + 2


def test_root_first_lines_within_the_window_stay_one_trace() -> None:
    rows = [
        line([span(1, "root", start=0, end=3)]),
        line([span(2, "child", parent=1, start=1, end=2)]),
        line([span(3, "grandchild", parent=2, start=1, end=2)]),
    ]
    traces = [
        i for i in OtlpJsonAdapter().parse(io.BytesIO("\n".join(rows).encode()), "f") if isinstance(i, Trace)
    ]
    assert [len(t.spans) for t in traces] == [3]


def test_a_span_after_its_trace_was_emitted_becomes_a_later_part_with_a_warning() -> None:
    rows = [*children_first(0), line([span(3, "late", parent=1, start=2, end=4, trace=tid(0))])]
    adapter = OtlpJsonAdapter()
    adapter.quiet_batches = 0
    items = list(adapter.parse(io.BytesIO("\n".join(rows).encode()), "f.jsonl"))
    traces = [i for i in items if isinstance(i, Trace)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert [t.trace_id for t in traces] == [tid(0), tid(0)]
    assert [s.name for s in traces[1].spans] == ["late"]
    assert [(p.reason, p.line, p.severity, p.trace_id) for p in problems] == [
        (PART_REASON, 3, Severity.WARNING, tid(0))
    ]


def test_traces_that_never_complete_are_yielded_at_the_end_with_their_problems() -> None:
    orphan = line([span(5, "orphan", parent=4, trace=tid(99))])
    rows = [orphan, *children_first(0), *children_first(1)]
    adapter = OtlpJsonAdapter()
    adapter.quiet_batches = 0
    items = list(adapter.parse(io.BytesIO("\n".join(rows).encode()), "f.jsonl"))
    traces = [i for i in items if isinstance(i, Trace)]
    assert [t.trace_id for t in traces] == [tid(0), tid(1), tid(99)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert len(problems) == 1 and "is not in the trace" in problems[0].reason and problems[0].line == 1


def test_open_buffers_are_capped_by_emitting_the_oldest_open_trace() -> None:
    rows = [
        line([span(2, "a", parent=1, trace=tid(k)), span(3, "b", parent=1, trace=tid(k))]) for k in range(3)
    ]
    rows.append(line([span(1, "root", trace=tid(0))]))
    adapter = OtlpJsonAdapter()
    adapter.max_open_spans = 4
    items = list(adapter.parse(io.BytesIO("\n".join(rows).encode()), "f.jsonl"))
    traces = [i for i in items if isinstance(i, Trace)]
    assert sum(len(t.spans) for t in traces) == 7  # nothing is lost
    reasons = [i.reason for i in items if isinstance(i, Problem)]
    assert EVICTED_REASON.format(cap=4) in reasons
    assert PART_REASON in reasons  # trace 0's root arrived after it was evicted


def _record(k: int, spans: list[tuple[int, int | None]]) -> bytes:
    request = trace_service_pb2.ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for n, parent in spans:
        item = scope.spans.add()
        item.trace_id = bytes.fromhex(tid(k))
        item.span_id = bytes.fromhex(sid(n))
        if parent:
            item.parent_span_id = bytes.fromhex(sid(parent))
        item.name = f"s{n}"
        item.start_time_unix_nano = T0
        item.end_time_unix_nano = T0 + 1000
    body = request.SerializeToString()
    return len(body).to_bytes(4, "big") + body


def test_length_prefixed_proto_records_stream_record_by_record() -> None:
    data = b"".join(_record(k, [(2, 1)]) + _record(k, [(1, None)]) for k in range(300))
    adapter = OtlpProtoAdapter()
    assert adapter.sniff(data[:64])
    seen = list(items_with_position(adapter, data))
    traces = [(pos, i) for pos, i in seen if isinstance(i, Trace)]
    assert [i for _, i in seen if isinstance(i, Problem)] == []
    assert len(traces) == 300 and traces[0][1].trace_id == tid(0)
    assert traces[0][0] < len(data) // 2
