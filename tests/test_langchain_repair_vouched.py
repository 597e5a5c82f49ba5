"""A run-tree span vouched for to the repair check is repaired exactly as before.

A run read strictly (the fast reader: valid text) from a line of its own with at most
``VOUCH_BRACKETS`` brackets (nothing read from it nests deep enough to be cut where the adapter
puts it) has its span vouched for (``records.plain_line``), unless building it read a prompt's tool
calls from a Python literal holding a backslash (``messages.escaped_literals``). The repair check
then looks only at that span's free-form values (tool and tool-call arguments, document
metadata); the trace's own fields and every other span are checked in full. These tests read the
same bytes with every span checked in full and compare everything, and show each condition at work.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from auditor_langchain.assemble import build_trace
from auditor_langchain.records import VOUCH_BRACKETS, Record, plain_line
from auditor_langchain.runtree import RunTreeAdapter
from test_langchain_runtree import LLM, ROOT, TOOL, run, sample_runs

import auditor.trace._assemble as assemble_module
from auditor.trace import MAX_DEPTH, Problem, Trace
from tests.conftest import ROOT as REPO
from tests.support.faults import run_tree_files
from tests.support.repair import read, same_both_ways

RUNTREES = sorted((REPO / "tests" / "fixtures").glob("*/runtree.json"))


@contextmanager
def _spy() -> Iterator[list[frozenset[str]]]:
    """The span ids each trace's assembly was told are vouched for."""
    seen: list[frozenset[str]] = []
    real = assemble_module.repair_trace

    def spied(trace: Trace, source: str, **kwargs: Any) -> tuple[Trace, list[Problem]]:
        seen.append(frozenset(kwargs.get("vouched", ())))
        return real(trace, source, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(assemble_module, "repair_trace", spied)
        yield seen


def _read(data: bytes, vouched: bool) -> list[str]:
    return read(RunTreeAdapter(), data, "runs.jsonl", vouched=vouched)


def _same_both_ways(data: bytes) -> list[str]:
    return same_both_ways(RunTreeAdapter(), data, "runs.jsonl")


def _jsonl(runs: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in runs)


def _vouched_ids(data: bytes) -> set[str]:
    with _spy() as seen:
        list(RunTreeAdapter().parse(io.BytesIO(data), "runs.jsonl"))
    return set().union(*seen)


@pytest.mark.parametrize("path", RUNTREES, ids=lambda p: p.parent.name)
def test_fixture_run_trees_read_the_same_vouched_or_checked_in_full(path: Path) -> None:
    runs = json.loads(path.read_bytes())
    data = _jsonl(runs)
    assert any(item.startswith("{") for item in _same_both_ways(data))
    assert _vouched_ids(data)  # the shortcut is taken: the comparison is not of one path with itself
    _same_both_ways(path.read_bytes())  # one JSON document: no line of its own, nothing vouched
    assert not _vouched_ids(path.read_bytes())


@pytest.mark.slow
def test_fault_corpus_run_tree_files_read_the_same_vouched_or_checked_in_full() -> None:
    files = run_tree_files()
    assert len(files) > 20
    for data in files:
        _same_both_ways(data)


def test_a_line_with_more_brackets_than_the_bound_is_not_vouched_for() -> None:
    assert plain_line(b"[" * VOUCH_BRACKETS)
    assert plain_line(b"{" * (VOUCH_BRACKETS // 2) + b"[" * (VOUCH_BRACKETS - VOUCH_BRACKETS // 2))
    assert not plain_line(b"{" * VOUCH_BRACKETS + b"[")
    assert plain_line(b'"]]]}}}" ' * 100)  # closing brackets are not counted


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [MAX_DEPTH - 8, MAX_DEPTH - 5, MAX_DEPTH - 3, MAX_DEPTH, MAX_DEPTH + 2])
def test_metadata_and_event_attributes_nested_about_the_bound_read_the_same(depth: int) -> None:
    runs = [
        run(ROOT, "chain", "agent", extra={"metadata": {"deep": _nested(depth)}}),
        run(
            LLM,
            "llm",
            "m",
            ROOT,
            1,
            events=[
                {"name": "start", "time": "2026-11-29T10:00:01.000000", "kwargs": {"deep": _nested(depth)}}
            ],
        ),
    ]
    data = _jsonl(runs)
    out = _same_both_ways(data)
    vouched = _vouched_ids(data)
    line_brackets = [line.count(b"[") + line.count(b"{") for line in data.splitlines()]
    assert (ROOT in vouched) is (line_brackets[0] <= VOUCH_BRACKETS)
    assert (LLM in vouched) is (line_brackets[1] <= VOUCH_BRACKETS)
    cut = any(f"nested more than {MAX_DEPTH} levels" in item for item in out)
    assert cut is (depth >= MAX_DEPTH - 2)  # metadata one level in attributes, an event's two
    assert not (cut and vouched)


def _prompt_runs(call_id: str) -> bytes:
    """A chain and, on a line of its own, a model run whose prompt holds its tool calls."""
    prompt = (
        "Human: Where is 10042?\n"
        f"AI: [{{'name': 'get_order', 'args': {{'order_id': '10042'}}, 'id': '{call_id}'}}]\n"
        "Tool: shipped\nAI: It shipped."
    )
    return _jsonl([run(ROOT, "chain", "agent"), run(LLM, "llm", "m", ROOT, 1, inputs={"prompts": [prompt]})])


def test_a_surrogate_spelled_in_a_prompts_tool_calls_is_still_repaired() -> None:
    data = _prompt_runs("call_\\ud800")  # a Python escape inside the prompt's text
    out = _same_both_ways(data)
    assert any("lone UTF-16 surrogates" in item for item in out)
    assert _vouched_ids(data) == {ROOT}
    plain = _prompt_runs("call_1")
    _same_both_ways(plain)
    assert _vouched_ids(plain) == {ROOT, LLM}


def test_tool_call_arguments_parsed_from_json_are_still_checked() -> None:
    # A tool call's arguments, a JSON text the adapter parses again, spelling a lone surrogate and
    # nesting past the bound with brackets the line spells as escapes (not counted): they land in
    # the free-form values the shortcut still checks, so the span is vouched for and still repaired.
    arguments = '{"q": "\\ud800", "deep": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    call = {"id": "c1", "type": "function", "function": {"name": "get", "arguments": arguments}}
    message = {"role": "assistant", "content": "", "tool_calls": [call]}
    llm = run(LLM, "llm", "m", ROOT, 1, outputs={"generations": [[{"message": message}]]})
    line = json.dumps(llm).replace("[" * MAX_DEPTH, "\\u005b" * MAX_DEPTH).encode() + b"\n"
    data = _jsonl([run(ROOT, "chain", "agent")]) + line
    out = _same_both_ways(data)
    assert _vouched_ids(data) == {ROOT, LLM}
    assert any("lone UTF-16 surrogates" in item for item in out)
    assert any(f"nested more than {MAX_DEPTH} levels" in item for item in out)


def test_a_run_merged_from_two_records_is_not_vouched_for() -> None:
    root, llm, tool = sample_runs()[:3]
    created = {**tool, "end_time": None, "outputs": None}
    data = _jsonl([root, llm, created, tool])
    _same_both_ways(data)
    vouched = _vouched_ids(data)
    assert TOOL not in vouched and ROOT in vouched
    record = Record({"id": TOOL}, 1, vouched=True)
    record.run = {"id": TOOL, "name": "merged"}
    assert not record.vouched


def test_a_shared_span_id_is_checked_in_full() -> None:
    # Two records of one run id in one trace (the adapter merges them; build_trace does not rely
    # on it), one of them vouched for: the assembly keeps one of the two spans, so the id is not.
    first = Record(run(ROOT, "chain", "a"), 1, fast=True, vouched=True)
    second = Record(run(ROOT, "chain", "b", 1), 2, fast=True)
    with _spy() as seen:
        items = list(build_trace(ROOT, [first, second], "runs.jsonl"))
    assert seen == [frozenset()]
    assert any(isinstance(item, Problem) and item.reason.startswith("duplicate span id") for item in items)
    with _spy() as seen:
        list(build_trace(ROOT, [first], "runs.jsonl"))
    assert seen == [frozenset({ROOT})]
