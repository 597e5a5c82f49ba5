"""Group runs into traces as they arrive, and emit each trace once it is complete.

Memory is bounded by the open traces: past a cap the least recently extended one is emitted early.
The rule is in :mod:`auditor_langchain.runtree`'s docstring.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from auditor.trace import Problem, Severity, Trace
from auditor_langchain.assemble import Emitted, build_run, build_trace, build_traces
from auditor_langchain.ids import normalise_id
from auditor_langchain.records import Record, dotted_root, merge, merge_into, parent_of

#: Top-level records (lines, array elements) without a run of a complete trace before it is emitted.
QUIET_RECORDS = 1_000
#: Runs held in open traces before the least recently extended one is emitted early.
MAX_OPEN_RUNS = 20_000
#: Emitted traces remembered so that a late run is recognised as a later part of its trace.
REMEMBER_TRACES = 1_024
EVICTED_REASON = (
    "trace emitted before it completed: more than {cap} runs were waiting in open traces; "
    "any later runs of it are audited as a later part"
)


@dataclass
class OpenTrace:
    first: int
    earlier: Emitted | None
    records: dict[str, Record] = field(default_factory=dict)
    last: int = 0

    def complete(self) -> bool:
        """Root run present, every run ended, every parent present (here or in an earlier part)."""
        earlier_ids = self.earlier.run_ids if self.earlier is not None else frozenset()
        has_root = self.earlier is not None
        for record in self.records.values():
            if record.built is not None:  # built once it had ended
                parent = record.built_parent
            elif record.run.get("end_time") is None:
                return False
            else:
                parent = parent_of(record)
            if parent is None:
                has_root = True
            elif parent not in self.records and parent not in earlier_ids:
                return False
        return has_root


class Collector:
    """Runs in, complete traces out, by the streaming rule in :mod:`auditor_langchain.runtree`'s docstring.

    A run read from a line of its own is built into its span as soon as it has ended
    (:meth:`~auditor_langchain.records.Record.keep_built`); the traces and problems are those of
    building it with its trace, in the same order.
    """

    def __init__(self, source: str, quiet: int, max_open: int, remember: int) -> None:
        self.source = source
        self.quiet = quiet
        self.max_open = max_open
        self.remember = remember
        self.tick = 0
        self._open: OrderedDict[str, OpenTrace] = OrderedDict()  # least recently extended first
        self._waiting: dict[str, OpenTrace] = {}  # quiet but not complete
        self._open_runs = 0
        self._run_trace: dict[str, str] = {}  # run id -> trace id, runs in open traces
        self._unresolved: dict[str, list[Record]] = {}  # parent run id -> runs waiting for it
        self._emitted: OrderedDict[str, Emitted] = OrderedDict()
        self._emitted_runs: dict[str, str] = {}
        self._out: list[Trace | Problem] = []

    def add(self, records: list[Record]) -> list[Trace | Problem]:
        """Add the runs of one top-level record; the problems found, then the traces now complete.

        A list, not a generator: nearly every record gives nothing, and a generator per record
        cost more than the list.
        """
        problems: list[Problem] = []
        for record in records:
            self._add(record, problems)
        out: list[Trace | Problem] = [*problems]
        if self._out:
            out += self._out
            self._out = []
        self.tick += 1
        while self._open:
            trace_id, entry = next(iter(self._open.items()))
            if self.tick - entry.last <= self.quiet:
                break
            del self._open[trace_id]
            if entry.complete():
                out += self._emit(trace_id, entry)
            else:
                self._waiting[trace_id] = entry
        return out

    def _trace_of(self, record: Record, run: dict[str, Any], run_id: str) -> str | None:
        known = self._run_trace.get(run_id) or self._emitted_runs.get(run_id)
        if known is not None:
            return known
        own = normalise_id(run.get("trace_id")) or record.root_hint or dotted_root(record)
        if own is not None:
            return own
        parent = parent_of(record)
        if parent is None:
            return run_id
        return self._run_trace.get(parent) or self._emitted_runs.get(parent)

    def _add(self, record: Record, problems: list[Problem]) -> None:
        run = record.run  # a property: read once
        run_id = normalise_id(run.get("id")) or ""
        trace_id = self._trace_of(record, run, run_id)
        if trace_id is None:  # a legacy run naming only a parent not seen yet
            self._unresolved.setdefault(parent_of(record) or "", []).append(record)
            return
        entry = self._open.get(trace_id)
        if entry is None:
            entry = self._waiting.pop(trace_id, None)
            if entry is None:
                earlier = self._emitted.get(trace_id)
                if earlier is not None and run_id in earlier.run_ids:
                    problems.append(
                        Problem(
                            file=self.source,
                            line=record.line,
                            severity=Severity.WARNING,
                            trace_id=trace_id,
                            span_id=run_id,
                            reason=f"run {run_id} appears again after its trace was complete and audited; "
                            "this later record is ignored",
                        )
                    )
                    return
                entry = OpenTrace(first=self.tick, earlier=earlier)
            self._open[trace_id] = entry
        else:
            self._open.move_to_end(trace_id)
        entry.last = self.tick
        before = len(entry.records)
        merge_into(entry.records, record, self.source, problems, run_id or None)
        self._open_runs += len(entry.records) - before
        if record.raw is not None and entry.records.get(run_id) is record and run.get("end_time") is not None:
            # A run of its own line, ended: build its span now and drop its JSON while it waits.
            parent = parent_of(record)
            record.keep_built(build_run(trace_id, record, self.source, parent), parent)
        self._run_trace[run_id] = trace_id
        if self._unresolved:  # nearly always empty: no list to pop
            for child in self._unresolved.pop(run_id, []):
                self._add(child, problems)
        while self._open_runs > self.max_open and len(self._open) + len(self._waiting) > 1:
            oldest = next(iter(self._waiting)) if self._waiting else next(iter(self._open))
            if oldest == trace_id:
                break
            evicted = self._waiting.pop(oldest, None) or self._open.pop(oldest)
            self._out.append(
                Problem(
                    file=self.source,
                    severity=Severity.WARNING,
                    trace_id=oldest,
                    reason=EVICTED_REASON.format(cap=self.max_open),
                )
            )
            self._out.extend(self._emit(oldest, evicted))

    def _emit(self, trace_id: str, entry: OpenTrace) -> list[Trace | Problem]:
        self._open_runs -= len(entry.records)
        for run_id in entry.records:
            self._run_trace.pop(run_id, None)
        out = list(build_trace(trace_id, list(entry.records.values()), self.source, entry.earlier))
        earlier = entry.earlier
        conversation = next((t.conversation_id for t in out if isinstance(t, Trace)), None)
        ids = frozenset(entry.records) | (earlier.run_ids if earlier is not None else frozenset())
        self._emitted[trace_id] = Emitted(conversation or (earlier.conversation_id if earlier else None), ids)
        self._emitted.move_to_end(trace_id)
        self._emitted_runs.update(dict.fromkeys(entry.records, trace_id))
        while len(self._emitted) > self.remember:
            old_id, old = self._emitted.popitem(last=False)
            for run_id in old.run_ids:
                if self._emitted_runs.get(run_id) == old_id:
                    del self._emitted_runs[run_id]
        return out

    def finish(self) -> Iterator[Trace | Problem]:
        """At end of input: every open trace (complete or not), then runs whose trace never resolved."""
        yield from self._out
        self._out = []
        entries = sorted([*self._waiting.items(), *self._open.items()], key=lambda item: item[1].first)
        self._waiting.clear()
        self._open.clear()
        for trace_id, entry in entries:
            yield from self._emit(trace_id, entry)
        rest = [record for records in self._unresolved.values() for record in records]
        self._unresolved.clear()
        if rest:
            problems: list[Problem] = []
            merged = merge(rest, self.source, problems)
            yield from problems
            yield from build_traces(merged, self.source)
