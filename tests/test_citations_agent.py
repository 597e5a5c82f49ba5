"""Numbered markers in agent traces (issue 28 item 4): an agent whose tools return its sources has
no retriever span to count in, so ``[n]`` names the n-th tool result of the answer's turn, in the
order the results became available (``docs/metrics.md``, "Citations"); a claim supported by
another tool's result than the one its marker names is misattributed.

The traces are the fixtures captured from real instrumentations (``tests/fixtures``), with markers
written into the answer where the model wrote its text (every copy of it in the capture).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.metrics import Summary
from auditor.results import AnswerOut, AuditResult, ClaimOut
from auditor.run import audit
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
CAPTURES = ["runtree.json", "openinference.otlp.jsonl", "openllmetry.otlp.jsonl"]
PARALLEL = (
    "Order 10057 has shipped with DHL (tracking JD014600006281), and the K10 Kettle has a 12-month warranty."
)
REFUND = "Yes, order 10042 was refunded $80.00 because of a damaged lid."


def marked(tmp_path: Path, scenario: str, capture: str, text: str, replacement: str) -> list[AnswerOut]:
    return audited(tmp_path, scenario, capture, text, replacement).answers


def audited(tmp_path: Path, scenario: str, capture: str, text: str, replacement: str) -> AuditResult:
    raw = (FIXTURES / scenario / capture).read_text(encoding="utf-8")
    assert text in raw
    path = tmp_path / capture
    path.write_text(raw.replace(text, replacement), encoding="utf-8")
    return audit([path], store=False)


def judged(answer: AnswerOut) -> list[ClaimOut]:
    return [c for c in answer.claims or [] if not c.screened]


def tool_of(answer: AnswerOut, evidence_id: str) -> str | None:
    return next(e.name for e in answer.evidence if e.evidence_id == evidence_id)


@pytest.mark.parametrize("capture", CAPTURES)
def test_a_marker_naming_the_other_tools_result_is_misattributed(tmp_path: Path, capture: str) -> None:
    # get_order returned first, get_product second: the markers below are swapped
    swapped = "Order 10057 has shipped with DHL (tracking JD014600006281) [2]. The K10 Kettle has a 12-month warranty [1]."
    result = audited(tmp_path, "parallel_tools", capture, PARALLEL, swapped)
    (answer,) = result.answers
    shipped, warranty = judged(answer)
    for claim, named in ((shipped, "get_product"), (warranty, "get_order")):
        (marker,) = claim.citation_markers
        assert marker.resolved_by == "position"
        assert [tool_of(answer, e) for e in marker.evidence_ids] == [named]
        assert claim.verdict == "supported" and marker.supports is False and claim.misattributed
    figures = Summary.model_validate(result.summary).citations
    assert figures is not None
    assert (figures.misattribution.numerator, figures.misattribution.denominator) == (2, 2)


@pytest.mark.parametrize("capture", CAPTURES)
def test_markers_in_retrieval_order_are_cited_support(tmp_path: Path, capture: str) -> None:
    ordered = "Order 10057 has shipped with DHL (tracking JD014600006281) [1]. The K10 Kettle has a 12-month warranty [2]."
    (answer,) = marked(tmp_path, "parallel_tools", capture, PARALLEL, ordered)
    for claim, named in zip(judged(answer), ("get_order", "get_product"), strict=True):
        (marker,) = claim.citation_markers
        assert [tool_of(answer, e) for e in marker.evidence_ids] == [named]
        assert marker.supports is True and not claim.misattributed


def test_a_later_turn_counts_its_own_tool_results(tmp_path: Path) -> None:
    """In the second turn, [1] is get_refund (this turn's first), not the first turn's search_orders."""
    _, second = marked(tmp_path, "multi_turn", "runtree.json", REFUND, REFUND[:-1] + " [1].")
    (claim,) = judged(second)
    (marker,) = claim.citation_markers
    assert [tool_of(second, e) for e in marker.evidence_ids] == ["get_refund"]
    assert marker.supports is True


def test_a_position_past_the_turns_tool_results_says_so(tmp_path: Path) -> None:
    _, second = marked(tmp_path, "multi_turn", "runtree.json", REFUND, REFUND[:-1] + " [3].")
    (marker,) = judged(second)[0].citation_markers
    assert marker.evidence_ids == [] and marker.supports is None
    assert (
        marker.reason
        == "the answer saw no retrieved document and 1 tool result(s) in its turn; 3 names the 3rd"
    )
