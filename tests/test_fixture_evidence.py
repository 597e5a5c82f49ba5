"""Evidence reconstruction on fixtures made by the real instrumentations.

Each scenario was captured at once by OpenInference (OTLP JSON and protobuf), OpenLLMetry (OTLP
JSON) and LangChain's own tracer (a run tree). Every encoding must give the same answers and the
same evidence, and both must match what the scenario's script says it contains (`expected.json`,
written from the scenario definition, not from parsing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auditor.evidence import Answer, EvidenceKind, reconstruct
from auditor.text import normalise
from auditor.trace import read_traces
from tests.conftest import FIXTURES

ENCODINGS = ("openinference.otlp.jsonl", "openinference.otlp.pb", "openllmetry.otlp.jsonl", "runtree.json")
SCENARIOS = sorted(p.name for p in FIXTURES.iterdir() if (p / "runtree.json").exists())


def answers_of(path: Path) -> list[Answer]:
    result = read_traces([path])
    assert not [p for p in result.problems if p.severity == "error"], result.problems
    return reconstruct(result.traces)


def expected(scenario: str) -> dict[str, Any]:
    return json.loads((FIXTURES / scenario / "expected.json").read_text())


def signature(answer: Answer) -> tuple[Any, ...]:
    """What must agree across encodings: the answer, its question and its evidence texts."""
    evidence = sorted(
        (e.kind.value, normalise(e.text), tuple(h.split("(")[0] for h in e.hop_path))
        for e in answer.evidence
        # only the tools named in a sub-agent's inner calls differ in naming across instrumentations
    )
    return (normalise(answer.text), normalise(answer.question or ""), tuple(evidence))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_encoding_finds_the_same_answers_and_evidence(scenario: str) -> None:
    signatures = {}
    for encoding in ENCODINGS:
        path = FIXTURES / scenario / encoding
        if path.exists():
            signatures[encoding] = [signature(a) for a in answers_of(path)]
    assert len(signatures) == len(ENCODINGS)
    reference = signatures.pop("runtree.json")
    for encoding, found in signatures.items():
        assert found == reference, f"{scenario}: {encoding} differs from the run tree"


HANDMADE = sorted(p.name.removesuffix(".otlp.jsonl") for p in (FIXTURES / "handmade").glob("*.otlp.jsonl"))


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_answers_and_evidence_match_the_scenario(scenario: str, encoding: str) -> None:
    check_against_spec(
        expected(scenario), answers_of(FIXTURES / scenario / encoding), f"{scenario}/{encoding}"
    )


@pytest.mark.parametrize("name", HANDMADE)
def test_hand_written_genai_spans_match_their_spec(name: str) -> None:
    spec = json.loads((FIXTURES / "handmade" / f"{name}.expected.json").read_text())
    check_against_spec(spec, answers_of(FIXTURES / "handmade" / f"{name}.otlp.jsonl"), name)


def check_against_spec(spec: dict[str, Any], answers: list[Answer], where: str) -> None:
    scenario, encoding = where, ""
    assert [normalise(a.text) for a in answers] == [normalise(x["text"]) for x in spec["answers"]]
    for answer, want in zip(answers, spec["answers"], strict=True):
        assert normalise(answer.question or "") == normalise(want["question"])
        texts = [normalise(e.text) for e in answer.evidence]
        documents = [e for e in answer.evidence if e.kind is EvidenceKind.RETRIEVED_DOCUMENT]
        for tool in want["tool_results"]:
            wraps_documents = any(d.hop_path and d.hop_path[0].startswith(tool["name"]) for d in documents)
            if wraps_documents:
                continue  # a tool that wraps a retriever is represented by its documents
            results = [e for e in answer.evidence if e.name == tool["name"]]
            assert results, f"{scenario}/{encoding}: no evidence from tool {tool['name']}"
            assert any(normalise(tool["contains"]) in normalise(e.text) for e in results)
        for doc in want["documents"]:
            matching = [d for d in documents if normalise(doc["contains"]) in normalise(d.text)]
            assert len(matching) == 1, (
                f"{scenario}/{encoding}: document {doc['id']} found {len(matching)} times"
            )
            for key, value in doc.get("metadata", {}).items():
                assert matching[0].metadata.get(key) == value, (scenario, encoding, key)
        for unseen in want["not_visible"]:
            assert not any(normalise(unseen) in t for t in texts), f"{scenario}/{encoding}: {unseen!r} leaked"
        for hop in want["hops"]:
            paths = [tuple(h.split("(")[0] for h in e.hop_path) for e in answer.evidence]
            assert any(p[-len(hop) :] == tuple(hop) for p in paths), (
                f"{scenario}/{encoding}: hop {hop} missing"
            )
