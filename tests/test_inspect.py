"""``auditor inspect``: span by span, what was read, so a misread framework shows why in one command.

Expected values come from the fixtures' ``expected.json`` (written from the scenario, not from the
auditor) and from the hand-written files of ``tests/fixtures/unanswered/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.evidence import Inspection, SpanReading
from auditor.pipeline import inspect_paths
from tests.conftest import FIXTURES

MULTI_HOP = FIXTURES / "multi_hop"
EXPECTED: dict[str, Any] = json.loads((MULTI_HOP / "expected.json").read_text(encoding="utf-8"))["answers"][0]
UNANSWERED = FIXTURES / "unanswered" / "genai_no_output.otlp.jsonl"


def _spans(inspection: Inspection) -> list[SpanReading]:
    return [s for t in inspection.traces for s in t.spans]


@pytest.mark.parametrize("file", ["openinference.otlp.jsonl", "openllmetry.otlp.jsonl", "runtree.json"])
def test_each_span_says_what_was_taken_from_it(file: str) -> None:
    spans = _spans(inspect_paths([MULTI_HOP / file]))
    answers = [s for s in spans if s.answer]
    assert [(a.question, a.answer) for a in answers] == [(EXPECTED["question"], EXPECTED["text"])]
    assert answers[0].read_as == "llm" and answers[0].system_prompts
    tools = {s.tool.name: s.tool for s in spans if s.tool}
    for wanted in EXPECTED["tool_results"]:
        tool = tools[wanted["name"]]
        assert tool.arguments == wanted["args"]
        assert tool.result is not None and wanted["contains"] in tool.result
    asked = [name for s in spans for name in s.tool_calls_requested]
    assert asked == ["search_orders", "get_refund"]


def test_the_convention_of_each_span_is_named() -> None:
    spans = {s.name: s for s in _spans(inspect_paths([MULTI_HOP / "openllmetry.otlp.jsonl"]))}
    assert spans["ScriptedChatModel.chat"].attributes_of == "OpenLLMetry"
    assert spans["execute_tool get_refund"].read_as == "tool"
    spans = {s.name: s for s in _spans(inspect_paths([MULTI_HOP / "openinference.otlp.jsonl"]))}
    assert {s.attributes_of for s in spans.values()} == {"OpenInference"}


def test_an_unanswered_trace_shows_its_problem_on_the_span_it_names() -> None:
    inspection = inspect_paths([UNANSWERED])
    (trace,) = inspection.traces
    assert (trace.convention, trace.answers) == ("genai", 0)
    chat = next(s for s in trace.spans if s.span_id == "0000000000000002")
    assert (chat.read_as, chat.attributes_of, chat.question, chat.answer) == (
        "llm",
        "GenAI",
        "Weather in Paris?",
        None,
    )
    assert chat.model_call == "GenAI: gen_ai.operation.name=chat"
    assert len(chat.problems) == 1 and "no output message was read" in chat.problems[0]


def test_the_command_prints_each_span_and_its_problems() -> None:
    result = CliRunner().invoke(cli, ["inspect", str(MULTI_HOP / "runtree.json"), str(UNANSWERED)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "answer: Yes. ACME's order 10042 was refunded $80.00" in " ".join(out.split())
    assert "tool get_refund" in out and "read as llm" in out
    assert "problem: error: trace 000000000000000000000000000000a1: no answer read" in " ".join(out.split())
    assert "2 trace(s), 1 answer(s)." in out


def test_the_command_writes_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["inspect", str(UNANSWERED), "--json", "-"])
    assert result.exit_code == 0
    inspection = Inspection.model_validate_json(result.stdout)
    assert inspection.traces[0].spans[1].problems
    written = tmp_path / "inspect.json"
    result = CliRunner().invoke(cli, ["inspect", str(UNANSWERED), "--json", str(written)])
    assert result.exit_code == 0
    assert Inspection.model_validate_json(written.read_text(encoding="utf-8")) == inspection


def test_a_missing_file_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["inspect", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert len([line for line in result.stderr.splitlines() if line.startswith("Error:")]) == 1
