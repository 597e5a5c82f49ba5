"""Build core traces from grouped run records: each run to a span, then the trace checked and assembled.

A run that cannot be read is skipped with a problem, so one bad run never loses its trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from auditor.trace import Problem, Severity, Span, Trace, assemble_trace, quote_value
from auditor_langchain.ids import normalise_id, parse_time
from auditor_langchain.messages import escaped_literals
from auditor_langchain.records import Record, parent_of, trace_ids
from auditor_langchain.runs import RunContext, run_to_span

SOURCE_FORMAT = "langchain-runtree"
CONVENTION = "langchain"
PART_REASON = "trace continued after its root run; audited in parts"


@dataclass
class Emitted:
    conversation_id: str | None
    run_ids: frozenset[str]


def build_traces(records: list[Record], source: str) -> Iterator[Trace | Problem]:
    """Group runs into traces by :func:`trace_ids` and build each one (the end-of-file path)."""
    trace_of = trace_ids(records)
    grouped: dict[str, list[Record]] = {}
    for record in records:
        grouped.setdefault(trace_of[normalise_id(record.run.get("id")) or ""], []).append(record)
    for trace_id, members in grouped.items():
        yield from build_trace(trace_id, members, source)


def build_run(
    trace_id: str, record: Record, source: str, parent_id: str | None
) -> tuple[Span | None, list[Problem]]:
    """One run's span (None when it is skipped) and the problems found, in the order they are
    reported; built when the trace is, or as soon as the run has ended (``Record.keep_built``).
    A run whose building parsed a text that could spell a surrogate loses ``Record.vouched``."""
    run = record.run
    run_id = normalise_id(run.get("id")) or ""
    ctx = RunContext(
        trace_id=trace_id, parent_id=parent_id, source=source, line=record.line, fast=record.fast
    )
    start = parse_time(run.get("start_time"))
    if start is None:
        raw = run.get("start_time")
        what = "no start_time" if raw is None else f"an unreadable start_time {quote_value(raw)}"
        ctx.warn(run_id, f"run has {what}; skipped", Severity.ERROR)
        return None, ctx.problems
    escaped = escaped_literals()
    try:
        span = run_to_span(run, run_id, start, ctx)
    except Exception as exc:  # a shape this adapter did not foresee must not end the file
        ctx.warn(run_id, f"run could not be read ({type(exc).__name__}: {exc}); skipped", Severity.ERROR)
        return None, ctx.problems
    if escaped_literals() != escaped:  # a text parsed again could spell a surrogate: checked in full
        record.vouched = False
    return span, ctx.problems


def build_trace(
    trace_id: str, records: list[Record], source: str, earlier: Emitted | None = None
) -> Iterator[Trace | Problem]:
    """One trace from its runs; ``earlier`` when it is a later part of an emitted trace."""
    spans: list[Span] = []
    vouched: set[str] = set()
    checked: set[str] = set()
    for record in records:
        span, problems = record.built or build_run(trace_id, record, source, parent_of(record))
        yield from problems
        if span is not None:
            spans.append(span)
            (vouched if record.vouched else checked).add(span.span_id)
    if not spans:
        yield Problem(file=source, trace_id=trace_id, reason="trace has no readable runs; skipped")
        return
    trace, problems = assemble_trace(
        trace_id,
        spans,
        source,
        source_format=SOURCE_FORMAT,
        convention=CONVENTION,
        conversation_id=earlier.conversation_id if earlier is not None else None,
        # The spans of runs read from plain lines of their own (records.plain_line); an id that
        # another span shares is checked in full, whichever span the assembly keeps.
        vouched=vouched - checked,
    )
    if earlier is not None:
        linked = {s.span_id for s in spans if s.parent_id in earlier.run_ids}
        problems = [p for p in problems if not (p.span_id in linked and p.reason.startswith("parent span "))]
        lines = [r.line for r in records if r.line is not None]
        yield Problem(
            file=source,
            line=min(lines) if lines else None,
            severity=Severity.WARNING,
            trace_id=trace_id,
            reason=PART_REASON,
        )
    yield from problems
    yield trace
