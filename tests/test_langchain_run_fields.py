"""Run fields read by ``run_to_span``'s shortcuts read as the general rule reads them: a run's
conversation id from its metadata, and the warnings for inputs, outputs and extra that are not
objects (in the same order)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from auditor_langchain.runs import (
    _CONVERSATION_KEYS,
    RunContext,
    _conversation_id,
    _first_str,
    _opt_id,
    run_to_span,
)

NOW = datetime(2026, 11, 29, tzinfo=UTC)
VALUES: list[Any] = [None, "", "c-1", 7, 2.5, True, [], {"k": 1}]


def _general_rule(metadata: dict[str, Any]) -> str | None:
    """The conversation id as run_to_span read it before its shortcut."""
    return _first_str(*[metadata.get(k) for k in _CONVERSATION_KEYS]) or _opt_id(metadata)


def test_conversation_id_is_the_general_rules_for_every_mix_of_values() -> None:
    checked = 0
    for values in itertools.product([*VALUES, "missing"], repeat=len(_CONVERSATION_KEYS)):
        metadata = {
            key: value for key, value in zip(_CONVERSATION_KEYS, values, strict=True) if value != "missing"
        }
        metadata["other"] = "x"
        assert _conversation_id(metadata) == _general_rule(metadata), metadata
        checked += 1
    assert checked == (len(VALUES) + 1) ** len(_CONVERSATION_KEYS)


@pytest.mark.parametrize(
    ("inputs", "outputs", "extra"), list(itertools.product([None, {}, [1], "text", 3], repeat=3))
)
def test_fields_that_are_not_objects_are_warned_about_in_order(inputs: Any, outputs: Any, extra: Any) -> None:
    ctx = RunContext(trace_id="t", parent_id=None, source="runs.json")
    run = {
        "id": "r",
        "name": "n",
        "run_type": "chain",
        "end_time": None,
        "inputs": inputs,
        "outputs": outputs,
    }
    run["extra"] = extra
    run_to_span(run, "r", NOW, ctx)
    expected = [
        f"run {key} is a {type(value).__name__}, not an object"
        for key, value in (("inputs", inputs), ("outputs", outputs), ("extra", extra))
        if value is not None and not isinstance(value, dict)
    ]
    assert [
        p.reason for p in ctx.problems if p.reason.startswith("run ") and "not an object" in p.reason
    ] == expected
