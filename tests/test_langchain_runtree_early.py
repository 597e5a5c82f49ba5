"""Runs built early (as soon as they end, their JSON dropped while their trace waits) read exactly
as runs built when their trace is complete (``Record.keep_built`` made to keep nothing): the same traces and
the same problems in the same order, whatever the file does (updates, duplicates, bad runs, late
parts, evictions, runs waiting for their parent)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from auditor_langchain.records import Record, flatten, flatten_all
from auditor_langchain.runtree import RunTreeAdapter
from test_langchain_runtree import LLM, ROOT, TOOL, run, sample_runs

from auditor.trace import Trace
from tests.conftest import ROOT as REPO

RUNTREES = sorted((REPO / "tests" / "fixtures").glob("*/runtree.json"))


def _read(data: bytes, early: bool, **limits: int) -> list[str]:
    adapter = RunTreeAdapter()
    for name, value in limits.items():
        setattr(adapter, name, value)
    with pytest.MonkeyPatch.context() as patch:
        if not early:  # what is built early is not kept: every run is built with its trace
            patch.setattr(Record, "keep_built", lambda record, built, parent: None)
        items = list(adapter.parse(io.BytesIO(data), "runs.jsonl"))
    return [
        item.model_dump_json() + repr(item.detached_parents) if isinstance(item, Trace) else repr(item)
        for item in items
    ]


def _same_both_ways(data: bytes, **limits: int) -> list[str]:
    early, late = _read(data, True, **limits), _read(data, False, **limits)
    assert early == late
    return early


def _jsonl(runs: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in runs)


@pytest.mark.parametrize("path", RUNTREES, ids=lambda p: p.parent.name)
def test_fixture_run_trees_as_jsonl_read_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Record] = []
    keep = Record.keep_built

    def counted(record: Record, *args: Any) -> None:
        built.append(record)
        keep(record, *args)

    monkeypatch.setattr(Record, "keep_built", counted)
    runs = json.loads(path.read_bytes())
    out = _same_both_ways(_jsonl(runs))
    assert any(item.startswith("{") for item in out)
    assert len(built) == len(runs)  # every run was built early (and only in the early read)


def test_a_run_built_early_drops_its_json_and_reads_it_again_when_needed() -> None:
    line = json.dumps(run(ROOT, "chain", "root")).encode()
    record = Record({"stand-in": True}, 1, raw=line)
    record.keep_built((None, []), None)
    assert record.built == (None, [])
    assert record.run == json.loads(line)  # read again from its line
    assert record.built is not None  # reading it does not change what was built
    record.run = {**record.run, "name": "other"}
    assert record.built is None  # a changed run is built again


def test_create_and_update_records_merge_the_same_way() -> None:
    created = run(ROOT, "chain", "root", end_time=None)
    updated = {"id": ROOT, "end_time": "2026-11-29T10:00:09.000000", "outputs": {"output": "done"}}
    child = run(LLM, "llm", "model", ROOT, 1)
    out = _same_both_ways(_jsonl([created, child, updated]))
    assert sum(item.startswith("{") for item in out) == 1


def test_a_run_repeated_after_it_was_built_is_merged_as_before() -> None:
    root = run(ROOT, "chain", "root")
    child = run(LLM, "llm", "model", ROOT, 1, inputs={"messages": [[{"type": "human", "content": "hi"}]]})
    changed = {**child, "outputs": {"generations": [[{"text": "a different answer"}]]}}
    out = _same_both_ways(_jsonl([child, changed, child, root]))
    assert any("appears twice with different contents" in item for item in out)


def test_runs_with_problems_read_the_same() -> None:
    runs = [
        run(ROOT, "chain", "root"),
        run(LLM, "mystery", "odd", ROOT, 1),
        run(TOOL, "tool", "lookup", ROOT, 2, outputs=None, end_time="not a time"),
        {**run("0b9f1a9e-0000-4000-8000-000000000009", "llm", "no start", ROOT, 3), "start_time": None},
        {**run("0b9f1a9e-0000-4000-8000-00000000000a", "llm", "bad", ROOT, 4), "inputs": [1]},
    ]
    out = _same_both_ways(_jsonl(runs))
    assert any("unknown run_type" in item for item in out)
    assert any("no start_time" in item for item in out)


def test_late_parts_evictions_and_waiting_runs_read_the_same() -> None:
    runs: list[dict[str, Any]] = []
    for k in range(6):
        copy = json.loads(json.dumps(sample_runs()).replace("0b9f1a9e-0000", f"{k:08x}-0000"))
        runs.extend(reversed(copy))  # children first: each trace waits for its root
    late = run(
        f"{0:08x}-0000-4000-8000-0000000000ff", "tool", "late", f"{0:08x}-0000-4000-8000-000000000001", 9
    )
    legacy_child = {
        **run(
            "0b9f1a9e-0000-4000-8000-0000000000c1", "tool", "orphan", "0b9f1a9e-0000-4000-8000-0000000000c0"
        )
    }
    legacy_parent = run("0b9f1a9e-0000-4000-8000-0000000000c0", "chain", "parent")
    runs += [late, legacy_child, legacy_parent]
    for limits in ({"quiet_records": 2}, {"quiet_records": 0, "max_open_runs": 3}, {}):
        out = _same_both_ways(_jsonl(runs), **limits)
        assert sum(item.startswith("{") for item in out) >= 6


def test_lines_that_are_not_one_run_are_read_as_before() -> None:
    nested = {**run(ROOT, "chain", "root"), "child_runs": [run(LLM, "llm", "model", ROOT, 1)]}
    listed = [run(TOOL, "tool", "lookup", ROOT, 2)]
    text = json.dumps(nested) + "\n" + json.dumps(listed) + "\n" + json.dumps({"runs": listed}) + "\n"
    odd = json.dumps(run("0b9f1a9e-0000-4000-8000-00000000000b", "chain", "float", extra={"x": 1e16}))
    _same_both_ways((text + odd + "\n").encode())


def _lone_values() -> list[Any]:
    """Values a line may hold: every fixture run, and the shapes flatten's shortcut must leave alone."""
    values: list[Any] = [r for path in RUNTREES for r in json.loads(path.read_bytes())]
    first = dict(values[0])
    values += [
        {**first, "child_runs": []},
        {**first, "child_runs": [dict(values[1])]},
        {**first, "child_runs": "no"},
        {**first, "id": None},
        {**first, "id": 7},
        {k: v for k, v in first.items() if k != "id"},
        ["not", "a run"],
        None,
    ]
    return values


@pytest.mark.parametrize("fast", [True, False])
def test_flatten_shortcut_for_a_lone_run_gives_what_the_loop_gives(fast: bool) -> None:
    for value in _lone_values():
        quick_problems: list[Any] = []
        full_problems: list[Any] = []
        quick = flatten([(value, 3)], "f.jsonl", quick_problems, fast=fast, raw=b"{}")
        full = flatten_all([(value, 3)], "f.jsonl", full_problems, fast=fast, raw=b"{}")
        assert quick == full
        assert repr(quick_problems) == repr(full_problems)
