"""Spans pulled from a backend, written as OTLP JSON lines (one ``ExportTraceServiceRequest`` per
trace): the form of the Collector's file exporter, which the ``otlp-json`` adapter reads. A pulled
trace then takes the reading path of a file, nothing of its own.

A backend's span arrives as :class:`PulledSpan`: hex ids, times in Unix nanoseconds, flat
attributes (a backend that nests them under dotted keys is flattened by :func:`flatten`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: OTLP status codes by name (``STATUS_CODE_UNSET`` = 0, ``OK`` = 1, ``ERROR`` = 2).
STATUS_CODES = {"UNSET": 0, "OK": 1, "ERROR": 2}


@dataclass(frozen=True)
class PulledSpan:
    """One span as a backend returned it, in OTLP's terms."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    status_code: int = 0
    status_message: str = ""
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: list[tuple[str, int, Mapping[str, Any]]] = field(default_factory=list)


def flatten(attributes: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attribute objects as OTel's dotted keys (``{"llm": {"model_name": m}}`` ->
    ``{"llm.model_name": m}``); a list of objects gets its index as a key part, as OpenInference
    writes ``llm.input_messages.0.message.role``."""
    flat: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    flat.update(flatten(item, f"{name}.{index}."))
                else:
                    flat[f"{name}.{index}"] = item
        else:
            flat[name] = value
    return flat


def any_value(value: Any) -> dict[str, Any]:
    """A JSON value as OTLP JSON's ``AnyValue`` (64-bit integers as strings, as the spec writes them)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value if math.isfinite(value) else str(value)}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _key_values(value)}}
    if value is None:
        return {}
    return {"stringValue": str(value)}


def _key_values(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": any_value(v)} for k, v in attributes.items() if v is not None]


def _span(span: PulledSpan) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": _key_values(span.attributes),
        "status": {
            "code": span.status_code,
            **({"message": span.status_message} if span.status_message else {}),
        },
    }
    if span.parent_id:
        out["parentSpanId"] = span.parent_id
    if span.events:
        out["events"] = [
            {"name": name, "timeUnixNano": str(ns), "attributes": _key_values(attrs)}
            for name, ns, attrs in span.events
        ]
    return out


def write_otlp_json(spans: Iterable[PulledSpan], path: Path, resource: Mapping[str, Any]) -> int:
    """Write ``spans`` to ``path``, one line per trace, the traces by their first span's start
    (a backend lists newest first; an audit reads them in the order they ran), each trace's spans
    by start time; returns the number of traces."""
    traces: dict[str, list[PulledSpan]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    for members in traces.values():
        members.sort(key=lambda s: (s.start_ns, s.end_ns, s.span_id))
    with path.open("w", encoding="utf-8") as out:
        for members in sorted(traces.values(), key=lambda m: (m[0].start_ns, m[0].trace_id)):
            request = {
                "resourceSpans": [
                    {
                        "resource": {"attributes": _key_values(resource)},
                        "scopeSpans": [{"scope": {}, "spans": [_span(s) for s in members]}],
                    }
                ]
            }
            out.write(json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n")
    return len(traces)
