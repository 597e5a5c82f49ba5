"""Buffer spans by trace until the input ends, then assemble each trace.

OTLP files make no ordering promise: one trace spreads over many batches, children usually
before parents. So spans are held per trace id until EOF (memory is bounded by the spans, not
by the file's raw bytes) and each trace is checked by :func:`auditor.assemble.assemble_trace`.
Tool spans are then completed from the model's messages (:mod:`auditor_otel.link`).
The trace's convention is the one its spans share, ``mixed`` when they differ; GenAI-only spans
inside an OpenLLMetry trace count as OpenLLMetry, since OpenLLMetry writes ``gen_ai.*`` too.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.assemble import assemble_trace
from auditor.problems import Problem
from auditor.trace import Span, Trace

from .link import link_tool_spans
from .spans import GENAI, OPENLLMETRY, RawSpan, build_span


class TraceCollector:
    """Accepts raw spans in any order; :meth:`finish` yields the assembled traces."""

    def __init__(self, source: str, source_format: str) -> None:
        self.source = source
        self.source_format = source_format
        self._spans: dict[str, list[Span]] = {}
        self._conventions: dict[str, set[str]] = {}

    def add(self, raw: RawSpan) -> list[Problem]:
        span, convention, problems = build_span(raw, self.source)
        if span is not None:
            self._spans.setdefault(span.trace_id, []).append(span)
            seen = self._conventions.setdefault(span.trace_id, set())
            if convention:
                seen.add(convention)
        return problems

    def finish(self) -> Iterator[Trace | Problem]:
        for trace_id, spans in self._spans.items():
            conventions = self._conventions.get(trace_id, set())
            if OPENLLMETRY in conventions:
                conventions = conventions - {GENAI}
            convention = (
                next(iter(conventions)) if len(conventions) == 1 else ("mixed" if conventions else "")
            )
            trace, problems = assemble_trace(
                trace_id,
                link_tool_spans(spans),
                self.source,
                source_format=self.source_format,
                convention=convention,
            )
            yield from problems
            yield trace
        self._spans.clear()
        self._conventions.clear()
