"""Group spans into traces as they arrive, and emit each trace as soon as it is complete.

OTLP files make no ordering promise, but the Collector's file exporter writes what the SDK's
batch processor exported, and a span is exported when it *ends*: children usually arrive before
their parents and a trace's root span arrives last, spread over many lines.

Completion rule (checked by :meth:`TraceCollector.complete` after each whole batch: one JSON line,
one JSON document, one length-prefixed proto record): a trace is complete when its root span (no
parent id) has arrived, the parent of every span of the trace is present, and no span of the trace
has arrived in the last ``quiet_batches`` batches (default :data:`QUIET_BATCHES`). It is then
assembled (:func:`auditor.trace.assemble_trace`, tool spans completed by
:mod:`auditor_otel.link`), yielded, and its buffers freed. The quiet window keeps files written
root first (hand-written files, other exporters) in one trace: their children follow the root
within a few lines; with the exporter's end-time order it only delays a trace by that many lines.
``quiet_batches=0`` emits a trace at the end of the batch in which it became complete.

- **Late spans.** A span of a trace that was already emitted (the collector remembers the last
  :data:`REMEMBER_TRACES` emitted trace ids with their span ids) is not lost: it is buffered as a
  *later part* of the same trace id, completed by the same rule (its parents may be in the earlier
  part), and yielded with a warning "trace continued after its root span; audited in parts". The
  part carries the same trace id and the first part's conversation id, so evidence reconstruction
  (which pools traces by conversation id, else by trace id) audits the parts together; links to a
  parent in an earlier part become roots of the part (no per-span orphan problem is added for them).
  A late span of a trace no longer remembered starts a new open trace, emitted at end of file (or
  on eviction) with the usual orphan problems.
- **Traces that never complete** (no root span, or a parent that never arrives) stay open until the
  end of the input and are then emitted with the usual problems (orphans, cycles).
- **Bounded buffers.** At most ``max_open_spans`` spans (default :data:`MAX_OPEN_SPANS`) are held in
  open traces; beyond that the least recently extended open trace is emitted early with a warning,
  and any later spans of it become a later part as above. Memory is therefore bounded by this cap
  (and the largest batch), not by the size of the file.

**Repair check.** A trace all of whose spans came from the typed reader (strict decoding: valid
text) and whose convention readers parsed nothing able to spell a surrogate is assembled with
``valid_text=True``: :func:`auditor.trace.repair_trace` then checks only the parsed free-form values.

The trace's convention is the one its spans share, ``mixed`` when they differ; GenAI-only spans
inside an OpenLLMetry trace count as OpenLLMetry, since OpenLLMetry writes ``gen_ai.*`` too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field

from auditor.trace import Problem, Severity, Span, Trace, assemble_trace

from .conventions.common import escaped_parses
from .link import link_tool_spans
from .spans import GENAI, OPENLLMETRY, RawSpan, build_span

#: Batches (lines, records) without a span of a complete trace before it is emitted.
QUIET_BATCHES = 100
#: Spans held in open (not yet complete) traces before the least recently extended one is emitted.
MAX_OPEN_SPANS = 20_000
#: Emitted traces remembered so that a late span is recognised as a later part of its trace.
REMEMBER_TRACES = 1_024
PART_REASON = "trace continued after its root span; audited in parts"
EVICTED_REASON = (
    "trace emitted before it completed: more than {cap} spans were waiting in open traces; "
    "any later spans of it are audited as a later part"
)


@dataclass
class _Emitted:
    conversation_id: str | None
    span_ids: frozenset[str]


@dataclass
class _Open:
    spans: list[Span] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)  # parent ids named but not (yet) present
    has_root: bool = False
    conventions: set[str] = field(default_factory=set)
    earlier: _Emitted | None = None  # set when this is a later part of an emitted trace
    last_batch: int = 0
    valid_text: bool = True  # every span read strictly, nothing parsed that could spell a surrogate

    def complete(self) -> bool:
        return (self.has_root or self.earlier is not None) and not self.missing


class TraceCollector:
    """Accepts raw spans in any order; :meth:`complete` yields the traces completed so far and
    :meth:`finish` (at end of input) every trace still open."""

    def __init__(
        self,
        source: str,
        source_format: str,
        *,
        quiet_batches: int = QUIET_BATCHES,
        max_open_spans: int = MAX_OPEN_SPANS,
        remember_traces: int = REMEMBER_TRACES,
    ) -> None:
        self.quiet_batches = quiet_batches
        self.source = source
        self.source_format = source_format
        self.max_open_spans = max_open_spans
        self.remember_traces = remember_traces
        # Open traces, least recently extended first; those found quiet but incomplete wait in
        # _waiting until a span arrives for them (or eviction, or the end of input).
        self._open: OrderedDict[str, _Open] = OrderedDict()
        self._waiting: OrderedDict[str, _Open] = OrderedDict()
        self._open_spans = 0
        self._batch = 0
        self._emitted: OrderedDict[str, _Emitted] = OrderedDict()
        self._out: list[Trace | Problem] = []

    @property
    def open_spans(self) -> int:
        """Spans currently buffered in open traces."""
        return self._open_spans

    def add(self, raw: RawSpan, *, valid_text: bool = False) -> list[Problem]:
        """Buffer one span; ``valid_text``: it was decoded strictly (``auditor_otel.otlp_typed``),
        so its text is valid unless a convention reader parsed an escape that can spell a surrogate
        (then, or without it, its trace's repair check looks at everything)."""
        escaped = escaped_parses()
        span, convention, problems = build_span(raw, self.source)
        if span is None:
            return problems
        trace_id = span.trace_id
        entry = self._open.get(trace_id)
        if entry is None:
            entry = self._waiting.pop(trace_id, None) or _Open(earlier=self._emitted.get(trace_id))
            self._open[trace_id] = entry
        else:
            self._open.move_to_end(trace_id)
        entry.last_batch = self._batch
        if entry.valid_text and not (valid_text and escaped_parses() == escaped):
            entry.valid_text = False
        entry.spans.append(span)
        entry.ids.add(span.span_id)
        entry.missing.discard(span.span_id)
        parent = span.parent_id
        if parent is None:
            entry.has_root = True
        elif parent not in entry.ids and not (entry.earlier is not None and parent in entry.earlier.span_ids):
            entry.missing.add(parent)
        if convention:
            entry.conventions.add(convention)
        self._open_spans += 1
        while self._open_spans > self.max_open_spans and len(self._open) + len(self._waiting) > 1:
            oldest = next(iter(self._waiting or self._open))
            evicted = self._pop(oldest)
            self._out.append(
                Problem(
                    file=self.source,
                    severity=Severity.WARNING,
                    trace_id=oldest,
                    reason=EVICTED_REASON.format(cap=self.max_open_spans),
                )
            )
            self._out.extend(self._emit(oldest, evicted))
        return problems

    def complete(self) -> Iterator[Trace | Problem]:
        """The traces that are complete now (call after each whole batch), and early evictions."""
        out, self._out = self._out, []
        yield from out
        while self._open:
            trace_id, entry = next(iter(self._open.items()))
            if self._batch - entry.last_batch < self.quiet_batches:
                break
            if entry.complete():
                yield from self._emit(trace_id, self._pop(trace_id))
            else:
                self._waiting[trace_id] = self._open.pop(trace_id)
        self._batch += 1

    def finish(self) -> Iterator[Trace | Problem]:
        """Every trace still open, complete or not (end of input)."""
        out, self._out = self._out, []
        yield from out
        for trace_id in [*self._waiting, *self._open]:
            yield from self._emit(trace_id, self._pop(trace_id))

    def _pop(self, trace_id: str) -> _Open:
        entry = self._open.pop(trace_id, None) or self._waiting.pop(trace_id)
        self._open_spans -= len(entry.spans)
        return entry

    def _emit(self, trace_id: str, entry: _Open) -> list[Trace | Problem]:
        conventions = entry.conventions
        if OPENLLMETRY in conventions:
            conventions = conventions - {GENAI}
        convention = next(iter(conventions)) if len(conventions) == 1 else ("mixed" if conventions else "")
        earlier = entry.earlier
        trace, problems = assemble_trace(
            trace_id,
            link_tool_spans(entry.spans),
            self.source,
            source_format=self.source_format,
            convention=convention,
            conversation_id=earlier.conversation_id if earlier is not None else None,
            valid_text=entry.valid_text,
        )
        out: list[Trace | Problem] = []
        if earlier is not None:
            linked = {s.span_id for s in entry.spans if s.parent_id in earlier.span_ids}
            problems = [
                p for p in problems if not (p.span_id in linked and p.reason.startswith("parent span "))
            ]
            first = min(entry.spans, key=lambda s: (s.source.line or 0) if s.source else 0)
            out.append(
                Problem(
                    file=self.source,
                    line=first.source.line if first.source else None,
                    severity=Severity.WARNING,
                    trace_id=trace_id,
                    reason=PART_REASON,
                )
            )
        out.extend(problems)
        out.append(trace)
        known = frozenset(entry.ids) | (earlier.span_ids if earlier is not None else frozenset())
        conversation = trace.conversation_id or (earlier.conversation_id if earlier is not None else None)
        self._emitted[trace_id] = _Emitted(conversation, known)
        self._emitted.move_to_end(trace_id)
        while len(self._emitted) > self.remember_traces:
            self._emitted.popitem(last=False)
        return out
