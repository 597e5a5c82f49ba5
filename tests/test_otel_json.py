"""OTLP JSON reading: layout, id and number leniencies, and every kind of bad input."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_proto import OtlpProtoAdapter
from otel_samples.otlp import T0, TRACE, line, parse, request, sid, span

from auditor.trace import Severity, SpanStatus


def test_trace_spread_over_lines_children_first_is_rebuilt() -> None:
    text = (
        "\n".join(
            [
                line([span(3, "grandchild", parent=2, start=2, end=3)]),
                line([span(2, "child", parent=1, start=1, end=4)]),
                line([span(1, "root", start=0, end=5)]),
            ]
        )
        + "\n"
    )
    traces, problems = parse(text)
    assert problems == []
    [trace] = traces
    assert [s.name for s in trace.spans] == ["root", "child", "grandchild"]
    assert [s.parent_id for s in trace.spans] == [None, sid(1), sid(2)]
    assert trace.source_format == "otlp-json"
    assert [s.source.line for s in trace.spans if s.source] == [3, 2, 1]
    assert trace.spans[0].start == datetime(2026, 2, 25, 6, 13, 20, tzinfo=UTC)


def test_several_traces_in_one_file_are_all_yielded() -> None:
    other = "1" * 32
    text = line([span(1, "a"), span(2, "b", trace=other)]) + "\n" + line([span(3, "c", parent=1)])
    traces, problems = parse(text)
    assert problems == []
    assert sorted((t.trace_id, len(t.spans)) for t in traces) == [(TRACE, 2), (other, 1)]


def test_ids_numbers_and_enums_are_read_leniently() -> None:
    root = span(1, "root", status={"code": "STATUS_CODE_ERROR", "message": "boom"}, unknownField={"x": 1})
    root["traceId"] = TRACE.upper()
    root["startTimeUnixNano"] = T0  # a number, not a string
    root["parentSpanId"] = ""
    child = span(2, "child", parent=1, attributes=[{"key": "n", "value": {"intValue": 7}}])
    child["traceId"] = base64.b64encode(bytes.fromhex(TRACE)).decode()
    child["spanId"] = base64.b64encode(bytes.fromhex(sid(2))).decode()
    traces, problems = parse(line([root, child]))
    assert problems == []
    [trace] = traces
    assert trace.trace_id == TRACE
    by_name = {s.name: s for s in trace.spans}
    assert by_name["root"].parent_id is None
    assert by_name["root"].status == SpanStatus.ERROR and by_name["root"].status_message == "boom"
    assert by_name["child"].span_id == sid(2) and by_name["child"].parent_id == sid(1)
    assert by_name["child"].attributes == {"n": 7}


def test_pretty_printed_single_document() -> None:
    doc = json.dumps(request([span(1, "root"), span(2, "child", parent=1)]), indent=2)
    traces, problems = parse(doc, "trace.json")
    assert problems == []
    assert [len(t.spans) for t in traces] == [2]
    assert traces[0].spans[1].parent_id == sid(1)


def test_malformed_and_truncated_lines_are_skipped_with_their_line_numbers() -> None:
    good = line([span(1, "root")])
    later = line([span(2, "child", parent=1)])
    text = good + "\n{not json\n" + later + "\n" + good[:40]
    traces, problems = parse(text, "f.jsonl")
    assert [(p.file, p.line, p.severity) for p in problems] == [
        ("f.jsonl", 2, Severity.ERROR),
        ("f.jsonl", 4, Severity.ERROR),
    ]
    assert "truncated" in problems[1].reason
    assert [s.name for s in traces[0].spans] == ["root", "child"]


def test_spans_without_ids_or_start_are_skipped_and_named() -> None:
    no_id = span(2, "no-id", parent=1)
    no_id["spanId"] = ""
    no_start = span(3, "no-start", parent=1)
    del no_start["startTimeUnixNano"]
    no_end = span(4, "no-end", parent=1, start=0.5)
    del no_end["endTimeUnixNano"]
    text = line([span(1, "root")]) + "\n" + line([no_id, no_start, no_end]) + "\n"
    traces, problems = parse(text)
    assert [(p.line, p.severity) for p in problems] == [
        (2, Severity.ERROR),
        (2, Severity.ERROR),
        (2, Severity.WARNING),
    ]
    assert "no valid span id" in problems[0].reason and "no start time" in problems[1].reason
    [trace] = traces
    assert [s.name for s in trace.spans] == ["root", "no-end"]
    assert trace.spans[1].end == trace.spans[1].start


def test_attributes_of_unexpected_types_are_dropped_with_a_warning() -> None:
    bad = span(1, "root")
    bad["attributes"] = [
        {"key": "n", "value": {"intValue": "abc"}},
        {"value": {"stringValue": "keyless"}},
        {"key": "ok", "value": {"stringValue": "yes"}},
    ]
    other = span(2, "child", parent=1)
    other["attributes"] = {"not": "a list"}
    traces, problems = parse(line([bad, other]))
    assert {p.severity for p in problems} == {Severity.WARNING}
    assert len(problems) == 3 and all(p.line == 1 for p in problems)
    assert traces[0].spans[0].attributes == {"n": None, "ok": "yes"}
    assert traces[0].spans[1].attributes == {}


def test_invalid_utf8_is_replaced_and_reported() -> None:
    raw = line([span(1, "root", attrs={"input.value": "caf\u00e9"})]).encode()
    raw = raw.replace(b"caf\\u00e9", b"caf\xff")
    traces, problems = parse(raw + b"\n")
    assert [(p.line, p.severity) for p in problems] == [(1, Severity.WARNING)]
    assert "UTF-8" in problems[0].reason
    assert traces[0].spans[0].attributes["input.value"] == "caf\ufffd"


def test_duplicates_orphans_and_cycles_are_reported_with_lines() -> None:
    text = "\n".join(
        [
            line([span(1, "root"), span(2, "a", parent=1)]),
            line([span(2, "a-again", parent=1)]),
            line([span(5, "orphan", parent=99)]),
            line([span(6, "x", parent=7), span(7, "y", parent=6)]),
        ]
    )
    traces, problems = parse(text)
    reasons = {(p.line, p.span_id): p.reason for p in problems}
    assert "duplicate" in reasons[(2, sid(2))]
    assert "not in the trace" in reasons[(3, sid(5))]
    assert any("cycle" in r for (ln, _), r in reasons.items() if ln == 4)
    [trace] = traces
    assert [s.name for s in trace.spans].count("a") == 1 and "a-again" not in [s.name for s in trace.spans]


def test_structurally_wrong_content_never_raises() -> None:
    text = "\n".join(
        [
            "[1, 2]",
            '{"resourceSpans": 5}',
            '{"resourceSpans": [{"scopeSpans": [{"spans": [7]}]}]}',
            '"just a string"',
            line([span(1, "root")]),
        ]
    )
    traces, problems = parse(text)
    assert [p.line for p in problems] == [1, 1, 2, 3, 4]
    assert [s.name for t in traces for s in t.spans] == ["root"]


def test_sniff_claims_otlp_json_only() -> None:
    adapter = OtlpJsonAdapter()
    assert adapter.sniff(b"  \n" + line([span(1, "r")]).encode())
    assert adapter.sniff(b'{\n  "resource_spans": []}')
    assert not adapter.sniff(b'{"runs": []}')
    assert not adapter.sniff(b"resourceSpans but not json")
    assert not adapter.sniff(b"\x0a\x05hello")
    assert not OtlpProtoAdapter().sniff(line([span(1, "r")]).encode())


def test_concatenated_pretty_documents_and_a_broken_one() -> None:
    first = json.dumps(request([span(1, "root")]), indent=2)
    second = json.dumps(request([span(2, "child", parent=1)]), indent=2)
    traces, problems = parse(first + "\n" + second + "\n" + second[:30], "many.json")
    assert [s.name for s in traces[0].spans] == ["root", "child"]
    assert len(problems) == 1 and problems[0].line is not None and problems[0].line > first.count("\n") + 1
    traces, problems = parse(first[:-5], "cut.json")
    assert traces == [] and [p.reason.startswith("document is not valid JSON") for p in problems] == [True]


def test_json_lines_whose_first_line_is_broken_are_still_read_line_by_line() -> None:
    good = line([span(1, "root")])
    text = good[:60] + "[\n" + good + "\n" + line([span(2, "child", parent=1)]) + "\n"
    traces, problems = parse(text, "f.jsonl")
    assert [p.line for p in problems] == [1]
    assert [s.name for s in traces[0].spans] == ["root", "child"]
    assert [s.source.line for s in traces[0].spans if s.source] == [2, 3]


def test_scope_spans_or_spans_of_the_wrong_type_are_a_problem_per_line() -> None:
    text = "\n".join(
        [
            '{"resourceSpans": [{"scopeSpans": {}}]}',
            '{"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]}',
            '{"resourceSpans": [{"scope_spans": 3}]}',
            line([span(1, "root", events="not a list")]),
        ]
    )
    traces, problems = parse(text)
    assert [(p.line, p.reason) for p in problems] == [
        (1, "resourceSpans[].scopeSpans is an object, not a list; its spans are skipped"),
        (2, "scopeSpans[].spans is a string, not a list; its spans are skipped"),
        (3, "resourceSpans[].scopeSpans is a number, not a list; its spans are skipped"),
        (4, "events is a string, not a list; the events are skipped"),
    ]
    assert [s.name for t in traces for s in t.spans] == ["root"]


def test_a_byte_order_mark_before_the_first_line_is_skipped() -> None:
    data = b"\xef\xbb\xbf" + line([span(1, "root")]).encode() + b"\n"
    assert OtlpJsonAdapter().sniff(data)
    traces, problems = parse(data)
    assert problems == [] and [s.name for t in traces for s in t.spans] == ["root"]
    pretty = b"\xef\xbb\xbf" + json.dumps(request([span(1, "root")]), indent=2).encode()
    traces, problems = parse(pretty)
    assert problems == [] and len(traces) == 1


def test_a_lone_surrogate_in_an_attribute_is_repaired_with_a_warning() -> None:
    text = line([span(1, "root", attrs={"input.value": "caf\ud800", "\udc00key": "v"})])
    traces, problems = parse(text + "\n")
    [problem] = problems
    assert (problem.line, problem.severity, problem.span_id) == (1, Severity.WARNING, sid(1))
    assert "attributes" in problem.reason and "surrogates" in problem.reason
    attributes = traces[0].spans[0].attributes
    assert attributes == {"input.value": "caf\ufffd", "\ufffdkey": "v"}
    assert traces[0].model_dump_json()  # writable: no PydanticSerializationError


def test_deep_nesting_is_bounded_and_the_rest_of_the_file_is_read() -> None:
    def deep(n: int, name: str, depth: int) -> str:
        # written as text: json.dumps itself cannot nest this deep
        value = '{"arrayValue": {"values": [' * depth + '{"stringValue": "x"}' + "]}}" * depth
        return line([span(n, name, parent=1, attributes=[{"key": "deep", "value": "V"}])]).replace(
            '"V"', value
        )

    text = "\n".join([line([span(1, "root")]), deep(2, "moderate", 100), deep(3, "too-deep", 400)]) + "\n"
    traces, problems = parse(text)  # 400 AnyValues are 1,200 JSON levels: more than json can read
    assert [(p.line, p.severity) for p in problems] == [(2, Severity.WARNING), (3, Severity.ERROR)]
    assert "nested more than 56 levels deep; dropped" in problems[0].reason
    assert "nested too deeply to read" in problems[1].reason
    [trace] = traces
    assert [s.name for s in trace.spans] == ["root", "moderate"]
    assert trace.model_dump_json()


def test_a_time_past_signed_64_bits_is_kept_with_a_warning() -> None:
    late = span(2, "late", parent=1, endTimeUnixNano=str(2**64 - 1))  # fixed64's largest: year 2554
    text = line([span(1, "root"), late, span(3, "never", parent=1, endTimeUnixNano=str(2**80))])
    traces, problems = parse(text + "\n")
    assert [(p.span_id, p.severity) for p in problems] == [
        (sid(2), Severity.WARNING),
        (sid(3), Severity.WARNING),
        (sid(3), Severity.ERROR),
    ]
    assert "2^63" in problems[0].reason and "could not be built" in problems[2].reason
    [trace] = traces
    assert [s.name for s in trace.spans] == ["root", "late"]
    assert trace.spans[1].end == datetime(2554, 7, 21, 23, 34, 33, 709551, tzinfo=UTC)
