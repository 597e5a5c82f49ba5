"""Every agent framework's traces read right: fixtures made by the frameworks' real packages.

Each folder under ``tests/fixtures/frameworks/`` holds the OTLP files one framework (or
instrumentation) wrote while running the shared scenarios (``tests/support/frameworks/``) against
the scripted model, and an ``expected.json`` written by reading those raw files by hand: the answers
a person finds there, with their questions, and the tool results, documents and system prompts each
answer could draw on. The auditor must find exactly those answers, and every listed item among
their evidence; a file that holds model calls but yields no answer must say so as a problem.

``expected.json``::

    {"framework": "...", "package": "name==version", "generator": "tests/support/frameworks/x.py",
     "notes": "what the raw files hold, read by hand",
     "files": [{"file": "weather.otlp.jsonl",
                "answers": [{"question": "...", "text": "...",
                             "system_prompt": "text the system prompt item contains (optional)",
                             "tool_results": [{"name": "get_weather", "arguments": {"city": "Paris"},
                                               "contains": "light rain", "hop_path": ["get_weather"],
                                               "error": false}],
                             "documents": [{"name": "retriever", "id": "KB-7", "contains": "..."}]}],
                "problems": ["a substring of a problem the file must give (optional)"]}]}

``arguments``, ``hop_path``, ``error``, ``system_prompt``, ``documents`` and ``problems`` are
checked when given. A file entry may carry ``"pending": "what the auditor does not read yet"``: the
case is then a strict expected failure, a known gap listed in docs/conventions.md, which turns into a
failure the day the auditor reads it (remove the key then). ``tool_results`` lists every tool result the answer can see: one more or one
fewer is a failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auditor.evidence import Answer, Evidence, EvidenceKind, reconstruct, unanswered_traces
from auditor.text import normalise
from auditor.trace import Problem, read_traces
from tests.conftest import FIXTURES

FRAMEWORKS = FIXTURES / "frameworks"


def _cases() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for expected in sorted(FRAMEWORKS.glob("*/expected.json")):
        spec = json.loads(expected.read_text(encoding="utf-8"))
        for entry in spec["files"]:
            cases.append((f"{expected.parent.name}/{entry['file']}", entry))
    return cases


CASES = _cases()


def _params() -> list[Any]:
    return [
        pytest.param(
            name,
            entry,
            id=name,
            marks=[pytest.mark.xfail(reason=entry["pending"], strict=True)] if "pending" in entry else [],
        )
        for name, entry in CASES
    ]


def _read(path: Path) -> tuple[list[Answer], list[Problem]]:
    result = read_traces([path])
    answers = reconstruct(result.traces)
    # A trace with model calls and no answer is a no_answer problem, as `auditor audit` records it.
    return answers, [*result.problems, *unanswered_traces(result.traces, answers)]


def _tool_results(answer: Answer) -> list[Evidence]:
    return [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]


def _matches(item: Evidence, wanted: dict[str, Any]) -> bool:
    if item.name != wanted["name"] or normalise(wanted["contains"]) not in normalise(item.text):
        return False
    if "arguments" in wanted and item.metadata.get("arguments") != wanted["arguments"]:
        return False
    if "hop_path" in wanted and [h.split("(")[0] for h in item.hop_path] != wanted["hop_path"]:
        return False
    return "error" not in wanted or item.error == wanted["error"]


@pytest.mark.parametrize(("name", "entry"), _params())
def test_framework_file_reads_as_a_person_reads_it(name: str, entry: dict[str, Any]) -> None:
    answers, problems = _read(FRAMEWORKS / name)
    expected = entry["answers"]
    assert [(normalise(a.question or ""), normalise(a.text)) for a in answers] == [
        (normalise(e["question"]), normalise(e["text"])) for e in expected
    ], f"{name}: answers differ"
    for answer, wanted in zip(answers, expected, strict=True):
        tools = _tool_results(answer)
        for tool in wanted.get("tool_results", []):
            assert any(_matches(t, tool) for t in tools), (
                f"{name}: no tool result {tool} among {[(t.name, t.text[:80], t.metadata.get('arguments')) for t in tools]}"
            )
        assert len(tools) == len(wanted.get("tool_results", [])), (
            f"{name}: {len(tools)} tool results, expected {len(wanted.get('tool_results', []))}: "
            f"{[(t.name, t.text[:60]) for t in tools]}"
        )
        if "system_prompt" in wanted:
            prompts = [e.text for e in answer.evidence if e.kind is EvidenceKind.SYSTEM_PROMPT]
            assert any(normalise(wanted["system_prompt"]) in normalise(p) for p in prompts), (
                f"{name}: no system prompt holding {wanted['system_prompt']!r} among {prompts}"
            )
        for doc in wanted.get("documents", []):
            docs = [e for e in answer.evidence if e.kind is EvidenceKind.RETRIEVED_DOCUMENT]
            assert any(
                normalise(doc["contains"]) in normalise(d.text)
                and ("id" not in doc or d.document_id == doc["id"])
                and ("name" not in doc or d.name == doc["name"])
                for d in docs
            ), f"{name}: no document {doc}"
    for wanted_problem in entry.get("problems", []):
        assert any(wanted_problem in p.reason for p in problems), f"{name}: no problem {wanted_problem!r}"


@pytest.mark.parametrize(("name", "entry"), CASES, ids=[c[0] for c in CASES])
def test_framework_file_never_reads_as_a_silent_zero(name: str, entry: dict[str, Any]) -> None:
    answers, problems = _read(FRAMEWORKS / name)
    if not answers:
        assert problems, f"{name}: no answer and no problem recorded"
