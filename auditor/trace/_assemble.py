"""Turn a bag of spans into checked traces; shared by every adapter.

Spans arrive in whatever order the exporter wrote them (an OTLP file exporter writes children
before parents, one trace across many lines). This module groups them by trace, and repairs what
can be repaired, recording a :class:`~auditor.trace.Problem` each time:

- a duplicate span id keeps the first span and drops the rest;
- a parent id that names no span in the trace makes the span a root (an orphan), the id kept in
  :attr:`~auditor.trace.Trace.detached_parents` so that another part of the trace can restore it;
- a parent cycle is broken at the span that closes it;
- an impossible time is unknown (``docs/conventions.md``, "Times"): a start at or before the Unix
  epoch is taken to be the span's end (the span is dropped when the end is impossible too); an end
  at or before the epoch, or before the start, is taken to be the start, as for a span that never
  ended. Evidence is then ordered by those times;
- text is repaired and values bounded by :func:`~auditor.trace.repair_trace`.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from datetime import UTC, datetime

from auditor.trace._model import Span, Trace
from auditor.trace._problems import Problem, Severity
from auditor.trace._repair import repair_trace

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: How the problem of a span whose parent is not in the trace begins (the parent id follows).
ORPHAN_PREFIX = "parent span "


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


def _known_times(span: Span, source: str, problems: list[Problem]) -> Span | None:
    """``span`` with its impossible times replaced by what is known (see the module docstring)."""
    start_ok, end_ok = span.start > _EPOCH, span.end > _EPOCH
    if not start_ok and not end_ok:
        problems.append(
            _problem(
                span,
                f"start time {span.start.isoformat()} and end time {span.end.isoformat()} are both at or "
                "before 1970 (impossible); span skipped",
                source,
                Severity.ERROR,
            )
        )
        return None
    if not start_ok:
        problems.append(
            _problem(
                span,
                f"start time {span.start.isoformat()} is at or before 1970 (impossible); the start is "
                "unknown and taken to be the end time",
                source,
            )
        )
        return span.model_copy(update={"start": span.end})
    if not end_ok or span.end < span.start:
        why = (
            "is at or before 1970 (impossible)"
            if not end_ok
            else f"is before the start {span.start.isoformat()}"
        )
        problems.append(
            _problem(
                span,
                f"end time {span.end.isoformat()} {why}; the end is unknown and taken to be the start time",
                source,
            )
        )
        return span.model_copy(update={"end": span.start})
    return span


def _break_cycles(spans: dict[str, Span], source: str) -> Iterator[Problem]:
    """Follow each span's parents, in order, and break a cycle where the walk first comes back.

    A walk that reached a span already known to lead to a root stops there: breaking a cycle only
    removes a link, so that span still leads to a root, and the walk would find no cycle beyond it
    (each link is followed about once, not once per descendant).
    """
    rooted: set[str] = set()
    for span_id in list(spans):
        seen: set[str] = set()
        current: str | None = span_id
        while current is not None and current in spans and current not in rooted:
            if current in seen:
                closing = spans[current]
                spans[current] = closing.model_copy(update={"parent_id": None})
                yield _problem(closing, "parent links form a cycle; span treated as a root", source)
                break
            seen.add(current)
            current = spans[current].parent_id
        rooted |= seen  # each now leads to a root (or to the span just made one)


def assemble_trace(
    trace_id: str,
    spans: Iterable[Span],
    source: str,
    *,
    valid_text: bool = False,
    vouched: Container[str] = (),
    **fields: str | None,
) -> tuple[Trace, list[Problem]]:
    """Check and order the spans of one trace.

    Args:
        trace_id: the trace's id.
        spans: its spans, in any order.
        source: file name used in problems for spans that carry no :class:`SourceRef`.
        valid_text: passed on to :func:`~auditor.trace.repair_trace` (what the caller vouches for).
        vouched: passed on to :func:`~auditor.trace.repair_trace` (the spans the caller vouches for).
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
        checked = _known_times(span, source, problems)
        if checked is not None:
            by_id[span.span_id] = checked
    detached: dict[str, str] = {}
    for span_id, span in list(by_id.items()):
        if span.parent_id is not None and span.parent_id not in by_id:
            problems.append(
                _problem(
                    span, f"{ORPHAN_PREFIX}{span.parent_id} is not in the trace; treated as a root", source
                )
            )
            detached[span_id] = span.parent_id
            by_id[span_id] = span.model_copy(update={"parent_id": None})
        elif span.parent_id == span_id:
            problems.append(_problem(span, "span is its own parent; treated as a root", source))
            by_id[span_id] = span.model_copy(update={"parent_id": None})
    problems.extend(_break_cycles(by_id, source))
    ordered = tuple(sorted(by_id.values(), key=lambda s: (s.start, s.end, s.span_id)))
    conversation = fields.pop("conversation_id", None) or next(
        (s.conversation_id for s in ordered if s.conversation_id), None
    )
    # Every value has its field's type (built so above) when the extra fields are strings, as the
    # adapters pass them: nothing to validate again. Anything else is validated (and refused) as before.
    build = (
        Trace.trusted
        if type(trace_id) is str
        and (conversation is None or type(conversation) is str)
        and all(type(value) is str for value in fields.values())
        else Trace
    )
    trace = build(
        trace_id=trace_id,
        spans=ordered,
        conversation_id=conversation,
        detached_parents=detached,
        **fields,  # type: ignore[arg-type]
    )
    trace, repaired = repair_trace(trace, source, valid_text=valid_text, vouched=vouched)
    return trace, problems + repaired
