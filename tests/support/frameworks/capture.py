"""Capture a framework's spans in memory and write them as the Collector's file exporter would.

``with capture() as captured:`` installs a TracerProvider (also as the global one, since most
frameworks take the global provider) with an in-memory exporter; ``captured.write(path)`` writes
the finished spans as OTLP JSON lines, one ``ExportTraceServiceRequest`` per batch of a few spans,
in end-time order: what a BatchSpanProcessor feeding the Collector's file exporter produces (hex
ids, integer enums, 64-bit integers as strings).

Needs only ``opentelemetry-sdk`` and ``opentelemetry-exporter-otlp-proto-common`` (and their
protobuf), so a generator's own virtual environment can import it without the auditor.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESOURCE = {
    "service.name": "support-agent-demo",
    "service.version": "0.3.1",
    "deployment.environment.name": "fixtures",
}


def _hex(value: str) -> str:
    return base64.b64decode(value).hex() if value else value


def request_to_otlp_json(request: Any) -> dict[str, Any]:
    """ExportTraceServiceRequest -> OTLP JSON (hex ids, integer enums, camelCase, int64 strings)."""
    from google.protobuf.json_format import MessageToDict

    data: dict[str, Any] = MessageToDict(request, use_integers_for_enums=True)
    for rs in data.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for sp in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in sp:
                        sp[key] = _hex(sp[key])
                for link in sp.get("links", []):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _hex(link[key])
                sp.setdefault("status", {})
    return data


def otlp_lines(spans: Sequence[Any], batch_size: int = 4) -> list[str]:
    """Finished SDK spans -> OTLP JSON lines, batched in end-time order."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    ordered = sorted(spans, key=lambda s: (s.end_time or 0, s.start_time or 0))
    lines = []
    for i in range(0, len(ordered), batch_size):
        request = encode_spans(ordered[i : i + batch_size])
        lines.append(json.dumps(request_to_otlp_json(request), ensure_ascii=False, separators=(",", ":")))
    return lines


@dataclass
class Captured:
    provider: Any
    exporter: Any

    def spans(self) -> list[Any]:
        self.provider.force_flush()
        return list(self.exporter.get_finished_spans())

    def write(self, path: Path) -> int:
        """Write the spans finished so far to ``path`` (and forget them); return how many."""
        spans = self.spans()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in otlp_lines(spans)), encoding="utf-8")
        self.exporter.clear()
        return len(spans)


@contextmanager
def capture(resource: dict[str, Any] | None = None, *, set_global: bool = True) -> Iterator[Captured]:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create(resource or RESOURCE))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if set_global:
        trace.set_tracer_provider(provider)
    try:
        yield Captured(provider, exporter)
    finally:
        provider.shutdown()
