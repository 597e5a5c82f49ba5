"""The LangChain run-tree adapter on bad values: impossible times, numbers where text belongs, invalid
Unicode and deep nesting are each a recorded problem, and never change the evidence silently."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from auditor_langchain.runtree import RunTreeAdapter
from test_langchain_runtree import LLM, RET, ROOT, lc, run

from auditor.evidence import reconstruct
from auditor.trace import Problem, Severity, Trace

DOC = "Refunds are accepted within 30 days."


def rag_turn(
    llm: dict[str, Any] | None = None, retriever: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """A chain, a retriever returning one document, then the model answering from it."""
    root = run(ROOT, "chain", "agent", None, 0, end_time="2026-11-29T10:00:03.000000")
    ret = run(
        RET,
        "retriever",
        "kb",
        ROOT,
        1,
        inputs={"query": "refunds"},
        outputs={"documents": [{"page_content": DOC}]},
    )
    answer = run(
        LLM,
        "llm",
        "ChatOpenAI",
        ROOT,
        2,
        inputs={"messages": [[lc("HumanMessage", content="How long do refunds take?")]]},
        outputs={"generations": [[{"text": DOC, "message": lc("AIMessage", content=DOC)}]]},
    )
    answer.update(llm or {})
    ret.update(retriever or {})
    return [root, ret, answer]


def read(runs: list[dict[str, Any]] | str) -> tuple[list[Trace], list[Problem]]:
    text = runs if isinstance(runs, str) else json.dumps(runs)
    items = list(RunTreeAdapter().parse(io.BytesIO(text.encode("utf-8", "surrogatepass")), "runs.json"))
    return [i for i in items if isinstance(i, Trace)], [i for i in items if isinstance(i, Problem)]


def evidence_texts(traces: list[Trace]) -> list[list[str]]:
    return [[e.text for e in a.evidence if e.kind == "retrieved_document"] for a in reconstruct(traces)]


def test_the_clean_turn_answers_from_the_document() -> None:
    traces, problems = read(rag_turn())
    assert problems == [] and evidence_texts(traces) == [[DOC]]


@pytest.mark.parametrize(
    ("llm", "retriever", "field"),
    [
        ({"start_time": -1}, {}, "start time 1969-12-31T23:59:59+00:00 is at or before 1970"),
        ({"start_time": "1900-01-01T00:00:00Z"}, {}, "start time 1900-01-01T00:00:00+00:00 is at or before"),
        (
            {"end_time": "2026-11-29T10:00:01.000000"},
            {},
            "end time 2026-11-29T10:00:01+00:00 is before the start",
        ),
        (
            {},
            {"end_time": "2026-11-29T10:00:00.000000"},
            "end time 2026-11-29T10:00:00+00:00 is before the start",
        ),
        ({}, {"end_time": 0}, "end time 1970-01-01T00:00:00+00:00 is at or before 1970"),
    ],
)
def test_an_impossible_time_is_unknown_recorded_and_keeps_the_evidence(
    llm: dict[str, Any], retriever: dict[str, Any], field: str
) -> None:
    # start_time -1 used to put the answer in 1969, before its own retrieval: the document dropped out.
    traces, problems = read(rag_turn(llm, retriever))
    assert evidence_texts(traces) == [[DOC]]
    [problem] = problems
    assert problem.severity is Severity.WARNING and problem.reason.startswith(field)
    assert problem.span_id == (RET if retriever else LLM) and problem.line is not None
    assert "unknown" in problem.reason


def test_a_run_whose_times_are_both_impossible_is_skipped_with_an_error() -> None:
    traces, problems = read(rag_turn(retriever={"start_time": -5, "end_time": -1}))
    assert [p.severity for p in problems] == [Severity.ERROR] and "both" in problems[0].reason
    assert evidence_texts(traces) == [[]]


@pytest.mark.parametrize("field", ["text", "message"])
def test_a_number_where_the_answer_text_belongs_is_not_an_answer(field: str) -> None:
    generation = {"text": 5} if field == "text" else {"text": "", "message": lc("AIMessage", content=5)}
    traces, problems = read(rag_turn({"outputs": {"generations": [[generation]]}}))
    assert reconstruct(traces) == []  # not an answer "5"
    [problem] = problems
    assert problem.span_id == LLM and "is a number, not text; the generation is ignored" in problem.reason
    assert ("message content" if field == "message" else "generations 0 text") in problem.reason


def test_a_lone_surrogate_is_repaired_and_recorded() -> None:
    text = json.dumps(rag_turn()).replace("within 30 days", "within \\ud800 days")
    traces, problems = read(text)
    assert evidence_texts(traces) == [[DOC.replace("30", "\ufffd")]]
    assert {p.span_id for p in problems} == {RET, LLM} and all("surrogates" in p.reason for p in problems)
    assert all(t.model_dump_json() for t in traces)


def nested(depth: int, first_id: int = 1) -> str:
    """A root run with ``depth`` descendants, each the only child of the one before (as text:
    json.dumps cannot nest this deep either)."""
    runs = []
    for n in range(first_id, first_id + depth + 1):
        body = json.dumps(run(f"0b9f1a9e-0000-4000-8000-{n:012x}", "chain", f"r{n}", second=0))
        runs.append(body[:-1] + ', "child_runs": [')
    return "".join(runs) + "]}" * (depth + 1)


def test_child_runs_5000_deep_in_a_list_are_one_problem_and_the_other_runs_are_read() -> None:
    first = json.dumps(run("0b9f1a9e-0000-4000-8000-00000000aaaa", "chain", "first"))
    last = json.dumps(run("0b9f1a9e-0000-4000-8000-00000000bbbb", "chain", "last"))
    traces, problems = read(f"[{first},\n{nested(5000)},\n{last}]")
    assert sorted(s.name for t in traces for s in t.spans) == ["first", "last"]
    [problem] = problems
    assert problem.line == 2 and "nested too deeply to read" in problem.reason
    assert problem.reason.endswith("skipped, the rest is read")


def test_a_nested_root_5000_deep_is_a_problem_naming_its_line() -> None:
    traces, problems = read("\n" + nested(5000))
    assert traces == [] and [(p.line, p.severity) for p in problems] == [(2, Severity.ERROR)]
    assert "nested too deeply to read" in problems[0].reason


def test_child_runs_300_deep_are_read_whole() -> None:
    traces, problems = read(nested(300))
    assert problems == [] and len(traces) == 1 and len(traces[0].spans) == 301
