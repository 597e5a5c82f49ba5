"""Binary OTLP: spans made by the real OTel SDK, encoded by the real OTLP encoder; sniffing;
truncated files and undecodable spans."""

from __future__ import annotations

import json

from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_proto import OtlpProtoAdapter
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otel_samples.otlp import line, parse, span

from auditor.trace import Severity, SpanKind


def sdk_spans(service: str, tool_name: str = "get_order") -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("openinference.instrumentation.langchain")
    with tracer.start_as_current_span("support_agent") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("session.id", f"sess-{service}")
        with tracer.start_as_current_span(tool_name) as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("tool.name", tool_name)
            tool.set_attribute("input.value", '{"order_id": "10042"}')
            tool.set_attribute(
                "output.value",
                json.dumps({"type": "tool", "data": {"content": "delivered", "tool_call_id": "call_1"}}),
            )
    provider.shutdown()
    return list(exporter.get_finished_spans())


def encoded(service: str, tool_name: str = "get_order") -> bytes:
    return bytes(encode_spans(sdk_spans(service, tool_name)).SerializeToString())


def test_sdk_spans_round_trip() -> None:
    traces, problems = parse(encoded("a"), "a.pb", proto=True)
    assert problems == []
    [trace] = traces
    assert trace.source_format == "otlp-proto" and trace.convention == "openinference"
    assert trace.conversation_id == "sess-a"
    root, tool = trace.spans
    assert root.kind == SpanKind.AGENT and tool.parent_id == root.span_id and len(tool.span_id) == 16
    assert tool.tool is not None
    assert (tool.tool.name, tool.tool.call_id, tool.tool.arguments, tool.tool.result) == (
        "get_order",
        "call_1",
        {"order_id": "10042"},
        "delivered",
    )
    assert tool.source is not None and tool.source.line is None


def test_sniff_is_conservative() -> None:
    adapter = OtlpProtoAdapter()
    assert adapter.sniff(encoded("a")[:4096])
    assert not adapter.sniff(line([span(1, "r")]).encode())
    assert not adapter.sniff(b"\nresourceSpans plain text\n")
    assert not adapter.sniff(b"")
    assert not adapter.sniff(b"\x0a\x00\x00\x00")
    assert not OtlpJsonAdapter().sniff(encoded("a"))


def test_sniff_rejects_text_that_starts_with_blank_lines() -> None:
    # A newline is 0x0a, the tag of field 1, so b"\n\n\n{" passed the first checks.
    adapter = OtlpProtoAdapter()
    assert not adapter.sniff(b"\n\n\n" + line([span(1, "r")]).encode())
    assert not adapter.sniff(b'\n\n{"question": "q", "sources": [], "answer": "a"}\n')
    assert not adapter.sniff(b"\n" * 4096)
    whole = encoded("a")
    assert adapter.sniff(whole[:4096]) and adapter.sniff(whole[:40])


def test_truncated_file_keeps_the_complete_records() -> None:
    # Concatenated messages merge: two ResourceSpans records, the second cut short.
    data = encoded("a") + encoded("b")
    traces, problems = parse(data[:-10], "cut.pb", proto=True)
    assert [t.conversation_id for t in traces] == ["sess-a"]
    assert problems and all(p.file == "cut.pb" and p.line is None for p in problems)
    assert problems[-1].severity == Severity.ERROR and "truncated" in problems[-1].reason


def test_a_span_with_invalid_utf8_is_skipped_and_the_others_kept() -> None:
    data = encoded("a", tool_name="TOOLNAMEXX")
    assert data.count(b"TOOLNAMEXX") >= 1
    data = data.replace(b"TOOLNAMEXX", b"TOOLNAME\xff\xfe")
    traces, problems = parse(data, "bad.pb", proto=True)
    assert [s.name for t in traces for s in t.spans] == ["support_agent"]
    assert any("does not decode" in p.reason for p in problems)


def test_garbage_never_raises() -> None:
    traces, problems = parse(b"\x0a\xff\xff\xff\xff\x0f\x01\x02", "junk.pb", proto=True)
    assert traces == [] and problems


def test_collector_length_prefixed_records() -> None:
    records = [encoded("a"), encoded("b")]
    data = b"".join(len(r).to_bytes(4, "big") + r for r in records)
    assert OtlpProtoAdapter().sniff(data[:4096])
    traces, problems = parse(data, "data.pb", proto=True)
    assert problems == []
    assert sorted(t.conversation_id or "" for t in traces) == ["sess-a", "sess-b"]
    traces, problems = parse(data[:-3], "data.pb", proto=True)
    assert [t.conversation_id for t in traces] == ["sess-a"]
    assert [p.reason for p in problems] == ["record 2 is truncated; skipped"]
