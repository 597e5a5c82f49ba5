"""Make one trace of the parts of a trace that arrived separately.

The Collector's file exporter rotates its files by size or time, so the spans of one trace can
straddle two files; an adapter reads each file on its own and hands on each part as a trace of its
own (and a part that continued after its root within one file, :mod:`auditor_otel.collect`, is a
second trace with the same id). :func:`merge_split_traces` joins the parts that share a trace id
into the trace a single file holding all their spans would have given: the spans go through
:func:`~auditor.trace.assemble_trace` again (a span listed twice kept once, start order, the
conversation), and a span that its part had to make a root because its parent was in another part
(:attr:`~auditor.trace.Trace.detached_parents`) gets its parent back.

The parts' problems were recorded when each part was read, so the merge adds only what it alone
can see: a span id listed in two parts with different content (two records that share an id, say)
keeps the first and is an error, naming both places; the same span listed twice (exported twice)
is kept once without a word, and a link still missing stays in ``detached_parents`` (its part
reported it). The merged trace's conversation is the first part's that has one, so a planner that
sees only the parts' ids (:mod:`auditor.scale`) groups traces exactly as here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from auditor.trace._assemble import ORPHAN_PREFIX, assemble_trace
from auditor.trace._model import Span, Trace
from auditor.trace._problems import Problem


def merged_conversation(conversations: Iterable[str | None]) -> str | None:
    """The conversation id of a trace read in parts: the first part's that has one."""
    return next((c for c in conversations if c), None)


def _convention(parts: Sequence[Trace]) -> str:
    named = {p.convention for p in parts if p.convention}
    return named.pop() if len(named) == 1 else ("mixed" if named else "")


def _where(span: Span) -> str:
    if span.source is None:
        return "another part"
    return span.source.file if span.source.line is None else f"{span.source.file}:{span.source.line}"


def _content(span: Span, part: Trace) -> Span:
    """What two listings of one span must agree on: all but where it was read, with its parent
    as the source named it (a part that lacked the parent made the span a root)."""
    parent = span.parent_id or part.detached_parents.get(span.span_id)
    return span.model_copy(update={"source": None, "parent_id": parent})


def _distinct(parts: Sequence[Trace], source: str, problems: list[Problem]) -> list[Span]:
    """The parts' spans, each id once (the first); a repeat that differs is a problem."""
    kept: dict[str, tuple[Span, Trace]] = {}
    for part in parts:
        for span in part.spans:
            first, where = kept.setdefault(span.span_id, (span, part))
            if first is span or _content(first, where) == _content(span, part):
                continue
            problems.append(
                Problem(
                    file=span.source.file if span.source else source,
                    line=span.source.line if span.source else None,
                    reason=f"span listed again with different content (first at {_where(first)}); "
                    "the first is kept",
                    trace_id=span.trace_id,
                    span_id=span.span_id,
                )
            )
    return [span for span, _ in kept.values()]


def _merge(parts: Sequence[Trace], problems: list[Problem]) -> Trace:
    first = parts[0]
    source = next((s.source.file for p in parts for s in p.spans if s.source), first.source_format)
    spans = _distinct(parts, source, problems)
    present = {s.span_id for s in spans}
    detached: dict[str, str] = {}
    for part in parts:
        for span_id, parent in part.detached_parents.items():
            detached.setdefault(span_id, parent)
    relinked = [
        s.model_copy(update={"parent_id": detached[s.span_id]})
        if s.parent_id is None and detached.get(s.span_id) in present
        else s
        for s in spans
    ]
    trace, found = assemble_trace(
        first.trace_id,
        relinked,
        source,
        source_format=first.source_format,
        convention=_convention(parts),
        conversation_id=merged_conversation(p.conversation_id for p in parts),
    )
    # A parent still missing was reported by its part; a cycle closed across parts is new.
    problems.extend(p for p in found if not p.reason.startswith(ORPHAN_PREFIX))
    return trace


def merge_split_traces(traces: Iterable[Trace], problems: list[Problem] | None = None) -> list[Trace]:
    """The traces, with those that share a trace id merged into one whole trace.

    A trace read in one piece is passed through unchanged; a merged trace takes the place of its
    first part, so the order of the traces is otherwise kept.

    Args:
        traces: traces as the adapters gave them, from one file or several.
        problems: when given, the merge's own problems are appended to it (see the module
            docstring); the parts' problems are not repeated.
    """
    found: list[Problem] = [] if problems is None else problems
    parts: dict[str, list[Trace]] = {}
    for trace in traces:
        parts.setdefault(trace.trace_id, []).append(trace)
    return [group[0] if len(group) == 1 else _merge(group, found) for group in parts.values()]
