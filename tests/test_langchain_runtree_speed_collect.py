"""The collector's lists read exactly as its former generators did: the same traces and the same
problems in the same order, whatever the file does (updates, duplicates, bad runs, late parts,
evictions, runs waiting for their parent, the fault corpus). The reference is the former code,
kept here: ``Collector.add`` and ``layouts._feed`` as generators, each run's id read afresh by
``Collector._add``, ``Collector._trace_of`` and ``merge_into``."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auditor_langchain import layouts
from auditor_langchain.assemble import build_run
from auditor_langchain.collect import EVICTED_REASON, Collector, OpenTrace
from auditor_langchain.ids import normalise_id
from auditor_langchain.records import Record, dotted_root, flatten, merge_into, parent_of
from auditor_langchain.runtree import RunTreeAdapter
from test_langchain_runtree import LLM, ROOT, TOOL, run, sample_runs

from auditor.trace import Problem, Severity, Trace
from tests.conftest import ROOT as REPO
from tests.support.faults import run_tree_files

RUNTREES = sorted((REPO / "tests" / "fixtures").glob("*/runtree.json"))


def _former_feed(
    values: list[tuple[Any, int | None]],
    source: str,
    problems: list[Problem],
    collector: Collector,
    *,
    fast: bool = False,
    raw: bytes | None = None,
) -> Iterator[Trace | Problem]:
    records = flatten(values, source, problems, fast=fast, raw=raw)
    if problems:
        yield from problems
        problems.clear()
    yield from collector.add(records)


def _former_add(self: Collector, records: list[Record]) -> Iterator[Trace | Problem]:
    problems: list[Problem] = []
    for record in records:
        self._add(record, problems)
    if problems:
        yield from problems
    if self._out:
        out, self._out = self._out, []
        yield from out
    self.tick += 1
    while self._open:
        trace_id, entry = next(iter(self._open.items()))
        if self.tick - entry.last <= self.quiet:
            break
        del self._open[trace_id]
        if entry.complete():
            yield from self._emit(trace_id, entry)
        else:
            self._waiting[trace_id] = entry


def _former_trace_of(self: Collector, record: Record, run_id: str) -> str | None:
    known = self._run_trace.get(run_id) or self._emitted_runs.get(run_id)
    if known is not None:
        return known
    own = normalise_id(record.run.get("trace_id")) or record.root_hint or dotted_root(record)
    if own is not None:
        return own
    parent = parent_of(record)
    if parent is None:
        return run_id
    return self._run_trace.get(parent) or self._emitted_runs.get(parent)


def _former_add_one(self: Collector, record: Record, problems: list[Problem]) -> None:
    run_id = normalise_id(record.run.get("id")) or ""
    trace_id = _former_trace_of(self, record, run_id)
    if trace_id is None:
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
    merge_into(entry.records, record, self.source, problems)
    self._open_runs += len(entry.records) - before
    if (
        record.raw is not None
        and entry.records.get(run_id) is record
        and record.run.get("end_time") is not None
    ):
        parent = parent_of(record)
        record.keep_built(build_run(trace_id, record, self.source, parent), parent)
    self._run_trace[run_id] = trace_id
    for child in self._unresolved.pop(run_id, []):
        _former_add_one(self, child, problems)
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


def _read(data: bytes, former: bool, **limits: int) -> list[str]:
    adapter = RunTreeAdapter()
    for name, value in limits.items():
        setattr(adapter, name, value)
    with pytest.MonkeyPatch.context() as patch:
        if former:
            patch.setattr(layouts, "_feed", _former_feed)
            patch.setattr(Collector, "add", _former_add)
            patch.setattr(Collector, "_add", _former_add_one)
        items = list(adapter.parse(io.BytesIO(data), "runs.jsonl"))
    return [
        item.model_dump_json() + repr(item.detached_parents) + repr(item.model_fields_set)
        if isinstance(item, Trace)
        else repr(item)
        for item in items
    ]


def _same_both_ways(data: bytes, **limits: int) -> list[str]:
    now, former = _read(data, False, **limits), _read(data, True, **limits)
    assert now == former
    return now


def _jsonl(runs: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in runs)


@pytest.mark.parametrize("path", RUNTREES, ids=lambda p: p.parent.name)
def test_fixture_run_trees_read_as_with_the_former_generators(path: Path) -> None:
    runs = json.loads(path.read_bytes())
    out = _same_both_ways(_jsonl(runs))
    assert any(item.startswith("{") for item in out)
    _same_both_ways(path.read_bytes())  # one JSON document: read element by element


@pytest.mark.slow
def test_the_fault_corpus_reads_as_with_the_former_generators() -> None:
    files = run_tree_files()
    assert files
    for data in files:
        _same_both_ways(data)
        _same_both_ways(data, quiet_records=0, max_open_runs=2)


def test_updates_duplicates_late_parts_evictions_and_waiting_runs_read_as_before() -> None:
    runs: list[dict[str, Any]] = []
    for k in range(6):
        copy = json.loads(json.dumps(sample_runs()).replace("0b9f1a9e-0000", f"{k:08x}-0000"))
        runs.extend(reversed(copy))  # children first: each trace waits for its root
    root = run(ROOT, "chain", "root", end_time=None)
    child = run(LLM, "llm", "model", ROOT, 1, inputs={"messages": [[{"type": "human", "content": "hi"}]]})
    changed = {**child, "outputs": {"generations": [[{"text": "a different answer"}]]}}
    update = {"id": ROOT, "end_time": "2026-11-29T10:00:09.000000", "outputs": {"output": "done"}}
    late = run(
        f"{0:08x}-0000-4000-8000-0000000000ff", "tool", "late", f"{0:08x}-0000-4000-8000-000000000001", 9
    )
    orphan = run(
        "0b9f1a9e-0000-4000-8000-0000000000c1", "tool", "orphan", "0b9f1a9e-0000-4000-8000-0000000000c0"
    )
    parent = run("0b9f1a9e-0000-4000-8000-0000000000c0", "chain", "parent")
    no_id = {**run(TOOL, "tool", "lookup", ROOT, 2), "id": None}
    runs += [root, child, changed, child, update, late, orphan, parent, no_id, update]
    for limits in ({"quiet_records": 2}, {"quiet_records": 0, "max_open_runs": 3}, {}):
        out = _same_both_ways(_jsonl(runs), **limits)
        assert sum(item.startswith("{") for item in out) >= 6
        assert any("appears twice with different contents" in item for item in out)
