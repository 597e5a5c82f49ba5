"""Build OTLP JSON spans and files in tests, and read them back through the adapters."""

from __future__ import annotations

import io
import json
from typing import Any

from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_proto import OtlpProtoAdapter

from auditor.trace import Problem, Span, Trace

T0 = 1_772_000_000_000_000_000  # 2026-02-25, in Unix nanoseconds
TRACE = "0af7651916cd43dd8448eb211c80319c"


def sid(n: int) -> str:
    """A span id, 16 hex digits."""
    return f"{n:016x}"


def anyvalue(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [anyvalue(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": attributes(value)}}
    return {"stringValue": str(value)}


def attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": anyvalue(v)} for k, v in values.items()]


def span(
    n: int,
    name: str,
    parent: int | None = None,
    start: float = 0,
    end: float = 1,
    attrs: dict[str, Any] | None = None,
    trace: str = TRACE,
    **extra: Any,
) -> dict[str, Any]:
    """A JSON span; ``start``/``end`` in seconds after :data:`T0`."""
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": sid(n),
        "parentSpanId": sid(parent) if parent else "",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(T0 + int(start * 1e9)),
        "endTimeUnixNano": str(T0 + int(end * 1e9)),
        "attributes": attributes(attrs or {}),
        "status": {},
    }
    out.update(extra)
    return out


def request(spans: list[dict[str, Any]], scope: str = "test.scope") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attributes({"service.name": "svc"})},
                "scopeSpans": [{"scope": {"name": scope}, "spans": spans}],
            }
        ]
    }


def line(spans: list[dict[str, Any]], scope: str = "test.scope") -> str:
    return json.dumps(request(spans, scope))


def parse(
    data: bytes | str, source: str = "t.jsonl", proto: bool = False
) -> tuple[list[Trace], list[Problem]]:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    adapter = OtlpProtoAdapter() if proto else OtlpJsonAdapter()
    traces: list[Trace] = []
    problems: list[Problem] = []
    for item in adapter.parse(io.BytesIO(raw), source):
        (traces if isinstance(item, Trace) else problems).append(item)
    return traces, problems


def one_trace(*spans: dict[str, Any], scope: str = "test.scope") -> Trace:
    traces, problems = parse(line(list(spans), scope) + "\n")
    assert len(traces) == 1, (traces, problems)
    return traces[0]


def named(trace: Trace, name: str) -> Span:
    found = [s for s in trace.spans if s.name == name]
    assert len(found) == 1, [s.name for s in trace.spans]
    return found[0]
