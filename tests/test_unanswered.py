"""Never a silent zero: a trace with model calls and no answer is a recorded problem, and the run
says it is incomplete (exit status 4).

The fixtures in ``tests/fixtures/unanswered/`` are hand-written OTLP JSON, one shape each of a trace
whose model calls carry no readable answer (output not captured, a run that ended at a tool call, a
provider marker on a span no convention names, an empty completion, Vercel AI SDK spans recorded
without outputs), and one trace with no model call at all, which must stay quiet.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.evidence import NO_ANSWER, reconstruct, unanswered_traces
from auditor.trace import read_traces
from tests.conftest import FIXTURES

UNANSWERED = FIXTURES / "unanswered"

#: file -> (trace id, span id, convention it looked like, what was missing): read from the raw files.
EXPECTED = {
    "genai_no_output.otlp.jsonl": (
        "000000000000000000000000000000a1",
        "0000000000000002",
        "GenAI (gen_ai.operation.name=chat)",
        "no output message",
    ),
    "openinference_tool_call_only.otlp.jsonl": (
        "000000000000000000000000000000a2",
        "0000000000000001",
        "OpenInference (openinference.span.kind=LLM)",
        "asks for tool calls only",
    ),
    "provider_only.otlp.jsonl": (
        "000000000000000000000000000000a3",
        "0000000000000001",
        "GenAI (gen_ai.system=openai)",
        "not as a model or agent call",
    ),
    "openllmetry_empty_completion.otlp.jsonl": (
        "000000000000000000000000000000a4",
        "0000000000000001",
        "OpenLLMetry (llm.request.type=chat)",
        "hold no text",
    ),
    "vercel_no_outputs.otlp.jsonl": (
        "000000000000000000000000000000a5",
        "0000000000000002",
        "Vercel AI SDK (ai.operationId=ai.generateText.doGenerate)",
        "",  # what is missing depends on whether a Vercel reader is installed; the span is named
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_trace_with_model_calls_and_no_answer_is_a_problem_naming_trace_span_and_convention(
    name: str,
) -> None:
    trace_id, span_id, convention, missing = EXPECTED[name]
    ingested = read_traces([UNANSWERED / name])
    answers = reconstruct(ingested.traces)
    assert answers == []
    problems = unanswered_traces(ingested.traces, answers)
    assert len(problems) == 1, problems
    problem = problems[0]
    assert (problem.code, problem.severity.value, problem.trace_id, problem.span_id) == (
        NO_ANSWER,
        "error",
        trace_id,
        span_id,
    )
    assert trace_id in problem.reason and f"looks like {convention}" in problem.reason, problem.reason
    assert missing in problem.reason, problem.reason
    assert problem.file.endswith(name)


def test_a_trace_without_model_calls_is_not_a_problem() -> None:
    ingested = read_traces([UNANSWERED / "no_model_calls.otlp.jsonl"])
    assert ingested.traces and unanswered_traces(ingested.traces, reconstruct(ingested.traces)) == []


def test_an_answered_trace_beside_an_unanswered_one_is_audited_and_only_the_other_is_named() -> None:
    files = [FIXTURES / "multi_hop" / "openinference.otlp.jsonl", UNANSWERED / "genai_no_output.otlp.jsonl"]
    ingested = read_traces(files)
    answers = reconstruct(ingested.traces)
    problems = unanswered_traces(ingested.traces, answers)
    assert len(answers) == 1
    assert [p.trace_id for p in problems] == ["000000000000000000000000000000a1"]


def _json(*args: str) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(cli, [*args, "--json", "-"])
    return result.exit_code, json.loads(result.stdout), result.stderr


@pytest.mark.parametrize("command", [["evidence"], ["audit", "--no-store"]])
def test_the_json_result_counts_unanswered_traces_and_the_exit_status_says_incomplete(
    command: list[str],
) -> None:
    files = [
        str(FIXTURES / "multi_hop" / "openinference.otlp.jsonl"),
        *map(str, sorted(UNANSWERED.iterdir())),
    ]
    code, document, _ = _json(*command, *files)
    run = document["run"]
    assert isinstance(run, dict)
    assert code == 4
    assert run["unanswered_traces"] == len(EXPECTED)
    named = {p["trace_id"] for p in run["problems"] if p["code"] == NO_ANSWER}
    assert named == {trace for trace, *_ in EXPECTED.values()}
    assert len(document["answers"]) == 1  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [["evidence"], ["audit", "--no-store"]])
def test_a_fully_read_run_counts_none_and_exits_as_before(command: list[str]) -> None:
    code, document, _ = _json(*command, str(FIXTURES / "multi_hop" / "openinference.otlp.jsonl"))
    assert code == 0
    assert document["run"]["unanswered_traces"] == 0  # type: ignore[index]


@pytest.mark.parametrize("command", [["evidence"], ["audit", "--no-store"]])
def test_the_console_names_the_unanswered_traces(command: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [*command, str(UNANSWERED / "genai_no_output.otlp.jsonl")])
    assert result.exit_code == 4
    assert "1 trace(s)" in result.stderr + result.stdout
    assert "000000000000000000000000000000a1: no answer read" in result.stderr


def test_the_gate_will_not_judge_a_golden_set_with_unanswered_traces() -> None:
    good = str(FIXTURES / "multi_hop" / "openinference.otlp.jsonl")
    result = CliRunner().invoke(cli, ["gate", good, str(UNANSWERED / "genai_no_output.otlp.jsonl")])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("auditor gate could not run:")]
    assert (
        len(errors) == 1
        and "1 trace(s) of the golden set hold model calls but yielded no answer" in errors[0]
    )
    assert "000000000000000000000000000000a1" in errors[0]
