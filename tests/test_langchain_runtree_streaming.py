"""The LangChain run-tree adapter streams JSONL, JSON lists and ``{"runs": [...]}`` exports.

The stream below hands out at most 4 kB per read and records how far it has been read when each
trace comes out, so these tests fail if the adapter goes back to reading the whole file.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from auditor_langchain.runtree import EVICTED_REASON, PART_REASON, RunTreeAdapter
from test_langchain_runtree import ROOT, run, sample_runs

from auditor.trace import Problem, Severity, Trace


class SmallReads(io.BytesIO):
    def read(self, size: int | None = -1) -> bytes:
        return super().read(4096 if size is None or size < 0 else min(size, 4096))


def copy(k: int) -> list[dict[str, Any]]:
    """sample_runs() with fresh run ids (root first, as a tracer collects them)."""
    text = json.dumps(sample_runs()).replace("0b9f1a9e-0000", f"{k:08x}-0000")
    runs: list[dict[str, Any]] = json.loads(text)
    return runs


def stream_items(data: bytes, adapter: RunTreeAdapter | None = None) -> list[tuple[int, Trace | Problem]]:
    stream = SmallReads(data)
    return [(stream.tell(), item) for item in (adapter or RunTreeAdapter()).parse(stream, "runs")]


def check_streams(data: bytes, count: int, adapter: RunTreeAdapter) -> None:
    seen = stream_items(data, adapter)
    assert [i for _, i in seen if isinstance(i, Problem)] == []
    traces = [(pos, i) for pos, i in seen if isinstance(i, Trace)]
    assert len(traces) == count and all(len(t.spans) == 4 for _, t in traces)
    assert traces[0][1].trace_id == f"{0:08x}-0000-4000-8000-000000000001"
    assert traces[0][0] < len(data) // 2


def small_window() -> RunTreeAdapter:
    adapter = RunTreeAdapter()
    adapter.quiet_records = 8
    return adapter


def test_jsonl_yields_traces_before_the_end_of_the_stream() -> None:
    data = "".join(json.dumps(r) + "\n" for k in range(60) for r in copy(k)).encode()
    check_streams(data, 60, small_window())


def test_json_list_is_read_element_by_element() -> None:
    data = json.dumps([r for k in range(60) for r in copy(k)], indent=1).encode()
    check_streams(data, 60, small_window())


@pytest.mark.slow
def test_langsmith_export_object_is_read_element_by_element() -> None:
    # On one line, longer than the 1 MB the adapter peeks at to tell JSONL from a document.
    runs = [r for k in range(1000) for r in copy(k)]
    data = json.dumps({"runs": runs, "cursors": {"next": None}}).encode()
    assert len(data) > 2 << 20
    check_streams(data, 1000, small_window())


def test_default_window_still_streams_a_large_file() -> None:
    data = "".join(json.dumps(r) + "\n" for k in range(600) for r in copy(k)).encode()
    check_streams(data, 600, RunTreeAdapter())


def test_a_trace_waits_for_the_update_that_ends_its_root() -> None:
    runs = sample_runs()
    created = {**runs[0], "end_time": None, "outputs": None}
    patch = {"id": ROOT, "end_time": runs[0]["end_time"], "outputs": {"output": "done"}}
    lines = [created, *runs[1:], run("1b9f1a9e-0000-4000-8000-000000000001", "chain", "other"), patch]
    adapter = RunTreeAdapter()
    adapter.quiet_records = 0
    items = [i for _, i in stream_items("".join(json.dumps(r) + "\n" for r in lines).encode(), adapter)]
    traces = [i for i in items if isinstance(i, Trace)]
    assert [i for i in items if isinstance(i, Problem)] == []
    assert [t.trace_id for t in traces] == ["1b9f1a9e-0000-4000-8000-000000000001", ROOT]
    assert len(traces[1].spans) == 4


def test_a_run_after_its_trace_was_emitted_is_a_later_part_and_an_update_is_ignored() -> None:
    runs = sample_runs()
    late = run("0b9f1a9e-0000-4000-8000-000000000009", "tool", "late_tool", ROOT, 3)
    update = {"id": runs[1]["id"], "end_time": runs[1]["end_time"], "outputs": {"x": 1}}
    lines = [*reversed(runs), late, update]  # as a tracer persists runs: when each ends
    adapter = RunTreeAdapter()
    adapter.quiet_records = 0
    items = [i for _, i in stream_items("".join(json.dumps(r) + "\n" for r in lines).encode(), adapter)]
    traces = [i for i in items if isinstance(i, Trace)]
    assert [t.trace_id for t in traces] == [ROOT, ROOT]
    assert [s.name for s in traces[1].spans] == ["late_tool"]
    problems = [i for i in items if isinstance(i, Problem)]
    assert [(p.line, p.severity) for p in problems] == [(5, Severity.WARNING), (6, Severity.WARNING)]
    assert problems[0].reason == PART_REASON and problems[0].trace_id == ROOT
    assert "appears again" in problems[1].reason


def test_a_trace_whose_root_never_ends_is_yielded_at_the_end() -> None:
    unfinished = [{**copy(0)[0], "end_time": None}, *copy(0)[1:]]
    lines = [*reversed(unfinished), *reversed(copy(1)), *reversed(copy(2))]
    adapter = RunTreeAdapter()
    adapter.quiet_records = 0
    traces = [
        i
        for _, i in stream_items("".join(json.dumps(r) + "\n" for r in lines).encode(), adapter)
        if isinstance(i, Trace)
    ]
    assert [t.trace_id[:8] for t in traces] == ["00000001", "00000002", "00000000"]


def test_open_runs_are_capped() -> None:
    lines = [r for k in range(3) for r in copy(k)]
    for r in lines:
        r["end_time"] = None  # never complete
    adapter = RunTreeAdapter()
    adapter.max_open_runs = 6
    items = [i for _, i in stream_items("".join(json.dumps(r) + "\n" for r in lines).encode(), adapter)]
    assert sum(len(i.spans) for i in items if isinstance(i, Trace)) == 12
    assert EVICTED_REASON.format(cap=6) in [i.reason for i in items if isinstance(i, Problem)]
