"""Turn a bag of spans into checked traces; shared by every adapter.

Spans arrive in whatever order the exporter wrote them (an OTLP file exporter writes children
before parents, one trace across many lines). This module groups them by trace, and repairs what
can be repaired, recording a :class:`~auditor.problems.Problem` each time:

- a duplicate span id keeps the first span and drops the rest;
- a parent id that names no span in the trace makes the span a root (an orphan);
- a parent cycle is broken at the span that closes it;
- an end time before the start time is kept, with a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from auditor.trace._model import Span, Trace
from auditor.trace._problems import Problem, Severity


def _problem(span: Span, reason: str, source: str, severity: Severity = Severity.WARNING) -> Problem:
    file = span.source.file if span.source else source
    line = span.source.line if span.source else None
    return Problem(
        file=file,
        line=line,
        reason=reason,
        severity=severity,
        trace_id=span.trace_id,
        span_id=span.span_id,
    )


def _break_cycles(spans: dict[str, Span], source: str) -> Iterator[Problem]:
    for span_id in list(spans):
        seen: set[str] = set()
        current: str | None = span_id
        while current is not None and current in spans:
            if current in seen:
                closing = spans[current]
                spans[current] = closing.model_copy(update={"parent_id": None})
                yield _problem(closing, "parent links form a cycle; span treated as a root", source)
                break
            seen.add(current)
            current = spans[current].parent_id


def assemble_trace(
    trace_id: str, spans: Iterable[Span], source: str, **fields: str | None
) -> tuple[Trace, list[Problem]]:
    """Check and order the spans of one trace.

    Args:
        trace_id: the trace's id.
        spans: its spans, in any order.
        source: file name used in problems for spans that carry no :class:`SourceRef`.
        **fields: extra :class:`Trace` fields (``source_format``, ``convention``, ``conversation_id``).
    """
    problems: list[Problem] = []
    by_id: dict[str, Span] = {}
    for span in spans:
        if span.span_id in by_id:
            problems.append(
                _problem(
                    span, "duplicate span id; the first span with this id is kept", source, Severity.ERROR
                )
            )
            continue
        if span.end < span.start:
            problems.append(_problem(span, "span ends before it starts", source))
        by_id[span.span_id] = span
    for span_id, span in list(by_id.items()):
        if span.parent_id is not None and span.parent_id not in by_id:
            problems.append(
                _problem(span, f"parent span {span.parent_id} is not in the trace; treated as a root", source)
            )
            by_id[span_id] = span.model_copy(update={"parent_id": None})
        elif span.parent_id == span_id:
            problems.append(_problem(span, "span is its own parent; treated as a root", source))
            by_id[span_id] = span.model_copy(update={"parent_id": None})
    problems.extend(_break_cycles(by_id, source))
    ordered = tuple(sorted(by_id.values(), key=lambda s: (s.start, s.end, s.span_id)))
    conversation = fields.pop("conversation_id", None) or next(
        (s.conversation_id for s in ordered if s.conversation_id), None
    )
    trace = Trace(trace_id=trace_id, spans=ordered, conversation_id=conversation, **fields)  # type: ignore[arg-type]
    return trace, problems
