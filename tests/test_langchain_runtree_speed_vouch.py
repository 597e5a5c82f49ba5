"""A run-tree span is vouched for to the repair check from the span itself (``records.plain_span``)
before its line's brackets are counted (``records.plain_line``): it is vouched for only where the
full check finds nothing to repair, so every file reads as it does checked in full."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from auditor_langchain.records import VOUCH_BRACKETS, plain_line, plain_span
from auditor_langchain.runtree import RunTreeAdapter
from test_langchain_runtree import LLM, ROOT, TOOL, run

import auditor.trace._assemble as assemble_module
from auditor.trace import MAX_DEPTH, Problem, Span, SpanEvent, SpanKind, Trace, repair_trace
from tests.support.repair import same_both_ways

START = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def _value(rng: random.Random, depth: int) -> Any:
    """A JSON value nested up to ``depth`` levels, of valid text."""
    kind = rng.randrange(7 if depth > 0 else 4)
    if kind == 0:
        return rng.choice(["", "x", "caf\u00e9", "[{", "\U0001f600"])
    if kind == 1:
        return rng.choice([0, -7, 10**30, 0.5, True, False])
    if kind in (2, 3):
        return None if kind == 2 else "scalar"
    if kind in (4, 5):
        return [_value(rng, depth - 1) for _ in range(rng.randrange(4))]
    return {f"k{i}": _value(rng, depth - 1) for i in range(rng.randrange(4))}


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def _span(attributes: dict[str, Any], event_attributes: list[dict[str, Any]]) -> Span:
    return Span(
        trace_id="t",
        span_id="s",
        name="n",
        kind=SpanKind.CHAIN,
        start=START,
        end=START,
        attributes=attributes,
        events=tuple(SpanEvent(name="e", time=START, attributes=a) for a in event_attributes),
    )


def _clean(span: Span) -> bool:
    _, problems = repair_trace(Trace(trace_id="t", spans=(span,)), "f")
    return not problems


def test_a_span_plain_by_its_attributes_is_one_the_full_check_passes() -> None:
    rng = random.Random(11)
    plain = 0
    for _ in range(3000):
        depth = rng.choice([1, 2, 3, 5, MAX_DEPTH - 3, MAX_DEPTH, MAX_DEPTH + 3])
        attributes = {"langchain.run_type": "chain"}
        if rng.random() < 0.8:
            attributes["langchain.metadata"] = rng.choice([_value(rng, depth), _deep(depth)])
        if rng.random() < 0.5:
            attributes["langchain.tags"] = rng.choice([["a", "b"], [_value(rng, depth)], _deep(depth)])
        events = rng.choice([[], [{}, {}], [{}, {"k": _value(rng, 2)}], [{"deep": _deep(depth)}]])
        span = _span(attributes, events)
        if plain_span(span):
            plain += 1
            assert _clean(span)
    assert plain > 500  # the shortcut is taken often, so the comparison means something


def test_what_nests_deeper_than_three_levels_or_sits_in_an_event_is_left_to_the_line() -> None:
    assert plain_span(_span({"m": {"a": [1, "x"], "b": {"c": None}}, "t": ["x"]}, [{}, {}]))
    assert not plain_span(_span({"m": {"a": [[1]]}}, []))
    assert not plain_span(_span({"m": {"a": {"b": {}}}}, []))
    assert not plain_span(_span({"m": [[{}]]}, []))
    assert not plain_span(_span({}, [{"k": 1}]))
    assert not plain_span(_span({"m": ("a", "b")}, []))  # not a JSON list: not what the reader gives


@contextmanager
def _spy() -> Iterator[list[frozenset[str]]]:
    seen: list[frozenset[str]] = []
    real = assemble_module.repair_trace

    def spied(trace: Trace, source: str, **kwargs: Any) -> tuple[Trace, list[Problem]]:
        seen.append(frozenset(kwargs.get("vouched", ())))
        return real(trace, source, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(assemble_module, "repair_trace", spied)
        yield seen


def _vouched_ids(data: bytes) -> set[str]:
    with _spy() as seen:
        list(RunTreeAdapter().parse(io.BytesIO(data), "runs.jsonl"))
    return set().union(*seen)


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode() + b"\n"


@pytest.mark.parametrize("depth", [1, 2, 3, MAX_DEPTH - 5, MAX_DEPTH - 3, MAX_DEPTH, MAX_DEPTH + 2])
def test_runs_with_many_brackets_read_the_same_vouched_for_or_checked_in_full(depth: int) -> None:
    # Inputs and outputs of many brackets (more than plain_line allows), metadata and event
    # attributes shallow or deep: plain_span vouches for what plain_line would not, and only that.
    state = {"messages": [{"type": "human", "content": "hi", "extra": [{"a": []}]} for _ in range(40)]}
    root = run(
        ROOT, "chain", "agent", inputs=state, outputs=state, extra={"metadata": {"deep": _deep(depth)}}
    )
    llm = run(
        LLM,
        "llm",
        "m",
        ROOT,
        1,
        inputs={"messages": [[{"type": "human", "content": "hi"}]], "state": state},
        events=[{"name": "start", "time": "2026-11-29T10:00:01.000000", "kwargs": {"deep": _deep(depth)}}],
    )
    tool = run(
        TOOL, "tool", "lookup", ROOT, 2, inputs={"input": state}, extra={"metadata": {"path": ["a", 1]}}
    )
    lines = [_line(root), _line(llm), _line(tool)]
    assert not any(plain_line(line) for line in lines)
    data = b"".join(lines)
    out = same_both_ways(RunTreeAdapter(), data, "runs.jsonl")
    vouched = _vouched_ids(data)
    assert (ROOT in vouched) is (depth <= 1)  # {"deep": ...} in the metadata: three levels at most
    assert LLM not in vouched  # its event has attributes: the line decides, and has too many brackets
    assert TOOL in vouched
    cut = any(f"nested more than {MAX_DEPTH} levels" in item for item in out)
    assert cut is (depth >= MAX_DEPTH - 2)


def test_a_line_within_the_bracket_bound_is_still_vouched_for_whatever_its_span_holds() -> None:
    deep = run(ROOT, "chain", "agent", extra={"metadata": {"deep": _deep(10)}})
    child = run(TOOL, "tool", "lookup", ROOT, 2, extra={"metadata": {"deep": _deep(MAX_DEPTH + 2)}})
    lines = [_line(deep), _line(child)]
    assert plain_line(lines[0]) and lines[0].count(b"[") + lines[0].count(b"{") <= VOUCH_BRACKETS
    assert not plain_line(lines[1])
    data = b"".join(lines)
    out = same_both_ways(RunTreeAdapter(), data, "runs.jsonl")
    assert any(f"nested more than {MAX_DEPTH} levels" in item for item in out)
    assert _vouched_ids(data) == {ROOT}
