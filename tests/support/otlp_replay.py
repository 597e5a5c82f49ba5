"""Replay an OTLP JSON fixture through the real OpenTelemetry SDK: its spans as SDK ``ReadableSpan``s.

The serve tests export these with ``opentelemetry-exporter-otlp-proto-http`` (the exporter an
instrumented agent uses) and write the very same spans to a file with the SDK's own encoder, so
the server's audit can be compared with ``auditor audit`` on that file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags


def _value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return tuple(_value(v) for v in value["arrayValue"].get("values", []))
    raise ValueError(f"attribute value not replayable through the SDK: {value}")


def _attributes(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: _value(item["value"]) for item in items or []}


def _context(trace_id: str, span_id: str) -> SpanContext:
    return SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=False, trace_flags=TraceFlags(1))


def sdk_spans(path: Path) -> list[ReadableSpan]:
    """Every span of an OTLP JSON Lines file, as the SDK would have recorded it."""
    spans: list[ReadableSpan] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        for resource_spans in json.loads(line)["resourceSpans"]:
            resource = Resource(_attributes(resource_spans.get("resource", {}).get("attributes")))
            for scope_spans in resource_spans["scopeSpans"]:
                scope = scope_spans.get("scope", {})
                library = InstrumentationScope(scope.get("name", ""), scope.get("version"))
                for span in scope_spans["spans"]:
                    spans.append(sdk_span(span, resource, library))
    return spans


def sdk_span(span: dict[str, Any], resource: Resource, scope: InstrumentationScope) -> ReadableSpan:
    parent = span.get("parentSpanId")
    status = span.get("status", {})
    return ReadableSpan(
        name=span["name"],
        context=_context(span["traceId"], span["spanId"]),
        parent=_context(span["traceId"], parent) if parent else None,
        resource=resource,
        attributes=_attributes(span.get("attributes")),
        events=[
            Event(e["name"], _attributes(e.get("attributes")), int(e["timeUnixNano"]))
            for e in span.get("events", [])
        ],
        kind=SpanKind(int(span.get("kind", 1)) - 1),
        status=Status(StatusCode(int(status.get("code", 0))), status.get("message")),
        start_time=int(span["startTimeUnixNano"]),
        end_time=int(span["endTimeUnixNano"]) if span.get("endTimeUnixNano") else None,
        instrumentation_scope=scope,
    )


def write_pb(spans: Sequence[ReadableSpan], path: Path) -> Path:
    """The spans as one protobuf ExportTraceServiceRequest file (what the exporter sends)."""
    path.write_bytes(encode_spans(spans).SerializeToString())
    return path
