"""summarise() on small hand-built answer sets, every figure computed by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from auditor.evidence import EvidenceKind
from auditor.metrics import Labels, Rate, summarise
from auditor.metrics._labels import Label
from auditor.metrics._model import Segment
from auditor.policy import Thresholds
from auditor.results import AnswerOut, CitationOut, ClaimOut, EvidenceOut

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def ev(evidence_id: str, source_class: str | None, document_id: str | None = None) -> EvidenceOut:
    return EvidenceOut(
        evidence_id=evidence_id,
        kind=EvidenceKind.TOOL_RESULT,
        name=None,
        text="text",
        metadata={},
        document_id=document_id,
        trace_id="t",
        span_id=None,
        available_at=WHEN,
        hop_path=[],
        source_class=source_class,
        admitted=source_class is not None,
        reason="rule",
    )


def cl(
    claim_id: str,
    verdict: str | None,
    cite: str | None = None,
    *,
    ck: bool = False,
    screened: str | None = None,
) -> ClaimOut:
    return ClaimOut(
        claim_id=claim_id,
        text=claim_id,
        start=0,
        end=len(claim_id),
        screened=screened is not None,
        screen_reason=screened,
        verdict=None if screened else verdict,  # type: ignore[arg-type]
        citations=[CitationOut(evidence_id=cite, quote="q")] if cite else [],
        common_knowledge=ck,
    )


def ans(
    answer_id: str,
    claims: list[ClaimOut],
    *,
    grounded: bool | None,
    refusal: bool = False,
    question_type: str | None = None,
    question: str | None = None,
    trace_id: str = "t",
    evidence: list[EvidenceOut] | None = None,
) -> AnswerOut:
    return AnswerOut(
        answer_id=answer_id,
        trace_id=trace_id,
        span_id="s",
        question=question,
        question_type=question_type,
        text="answer",
        generated_at=WHEN,
        evidence=evidence if evidence is not None else [ev("e1", "kb", "doc-1"), ev("e2", "tools")],
        claims=claims,
        refusal=refusal,
        grounded=None if refusal else grounded,
    )


def figures(r: Rate) -> tuple[int, int]:
    return r.numerator, r.denominator


def seg(segments: list[Segment]) -> dict[str, tuple[Any, ...]]:
    return {
        s.name: (
            s.answers,
            s.judged_claims,
            figures(s.groundedness_rate),
            figures(s.answers_with_unsupported_claim),
            figures(s.answer_pass_rate),
        )
        for s in segments
    }


def sample() -> list[AnswerOut]:
    return [
        ans(
            "a1",
            [
                cl("a1c1", "supported", "e1"),
                cl("a1c2", "supported", "e2"),
                cl("a1c3", None, screened="hedge"),
            ],
            grounded=True,
            question_type="billing",
        ),
        ans(
            "a2",
            [cl("a2c1", "supported", "e1"), cl("a2c2", "absent")],
            grounded=False,
            question_type="billing",
        ),
        ans("a3", [cl("a3c1", "contradicted", "e2"), cl("a3c2", "supported", "e2")], grounded=False),
        ans(
            "a4",
            [cl("a4c1", None, screened="refusal")],
            grounded=None,
            refusal=True,
            question_type="shipping",
        ),
        ans("a5", [cl("a5c1", "supported", "e1"), cl("a5c2", "unjudged")], grounded=False),
        ans(
            "a6",
            [cl("a6c1", "supported", ck=True), cl("a6c2", "supported", "e1")],
            grounded=True,
            question_type="shipping",
        ),
    ]


def test_headline_counts_and_rates() -> None:
    s = summarise(sample())
    assert (s.answers, s.refusals, s.claims, s.screened) == (6, 1, 12, 2)
    assert s.screened_by_reason == {"hedge": 1, "refusal": 1}
    assert (s.judged_claims, s.supported, s.contradicted, s.absent) == (8, 6, 1, 1)
    assert (s.unjudged, s.common_knowledge) == (1, 1)
    assert figures(s.groundedness_rate) == (6, 8) and s.groundedness_rate.value == 0.75
    assert figures(s.contradiction_rate) == (1, 8)
    # a2 absent, a3 contradicted; a5's only other claim is unjudged: undecided, out of the denominator
    assert figures(s.answers_with_unsupported_claim) == (2, 4)
    assert s.undecided_answers == 1 and s.unjudged_by_reason == {"unspecified": 1}
    assert figures(s.answer_pass_rate) == (2, 5)  # a1, a6 over the five non-refusals
    assert figures(s.answer_rate) == (5, 6)


def test_intervals_on_answer_rates_only() -> None:
    s = summarise(sample())
    for r in (s.answers_with_unsupported_claim, s.answer_pass_rate, s.answer_rate):
        assert r.wilson is not None and r.clopper_pearson is not None
        assert r.wilson.low < r.value < r.wilson.high  # type: ignore[operator]
    for r in (s.groundedness_rate, s.contradiction_rate):
        assert r.wilson is None and r.clopper_pearson is None


def test_segments_by_source_class() -> None:
    s = summarise(sample())
    assert [x.name for x in s.by_source_class] == ["kb", "none", "tools"]
    assert seg(s.by_source_class) == {
        # a1, a2, a5, a6 each have one supported claim citing e1 (the common-knowledge claim is apart)
        "kb": (4, 4, (4, 4), (0, 4), (4, 4)),
        # a2's absent claim and a5's unjudged claim cite nothing; the unjudged one is not judged, and
        # a5 is undecided in the segment: out of the unsupported rate's denominator
        "none": (2, 1, (0, 1), (1, 1), (0, 2)),
        "tools": (2, 3, (2, 3), (1, 2), (1, 2)),
    }
    assert [x.undecided_answers for x in s.by_source_class] == [0, 1, 0]
    tools = s.by_source_class[2]
    assert tools.answer_pass_rate.wilson is not None and tools.answer_pass_rate.clopper_pearson is not None
    assert tools.groundedness_rate.wilson is None


def test_segments_by_question_type() -> None:
    s = summarise(sample())
    assert seg(s.by_question_type) == {
        "billing": (2, 4, (3, 4), (1, 2), (1, 2)),
        "shipping": (1, 1, (1, 1), (0, 1), (1, 1)),  # the refusal a4 has no claim in it
        "unspecified": (2, 3, (2, 3), (1, 1), (0, 2)),  # a3 contradicted; a5 undecided
    }
    # whole answers per segment: the segment pass counts add up to the answers' own decisions
    assert sum(x.answer_pass_rate.numerator for x in s.by_question_type) == s.answer_pass_rate.numerator


def test_segment_pass_follows_the_thresholds() -> None:
    s = summarise(sample(), thresholds=Thresholds(claim_support=0.5, contradictions_allowed=1))
    by_type = seg(s.by_question_type)
    assert by_type["billing"][4] == (2, 2)  # a2 at 1/2 now passes
    assert by_type["unspecified"][4] == (1, 2)  # a3 passes with one contradiction allowed; a5 is unjudged
    assert figures(s.answer_pass_rate) == (2, 5)  # the overall rate is the answers' own decision


def test_common_knowledge_leaves_the_denominator() -> None:
    s = summarise(
        [
            ans(
                "a",
                [cl("c1", "supported", ck=True), cl("c2", "absent", ck=True), cl("c3", "supported", "e1")],
                grounded=True,
            )
        ]
    )
    assert (s.common_knowledge, s.judged_claims, s.supported, s.absent) == (2, 1, 1, 0)
    assert figures(s.groundedness_rate) == (1, 1)
    assert figures(s.answers_with_unsupported_claim) == (0, 1)
    by_class = {x.name: x for x in s.by_source_class}
    assert "none" not in by_class and by_class["kb"].judged_claims == 1  # the common-knowledge ones are apart
    assert by_class["tools"].answers == 0  # admitted but cited by no claim: there for its answer rate only


def undecided(claim_id: str, reason: str = "offline_undecided") -> ClaimOut:
    return cl(claim_id, "unjudged").model_copy(update={"unjudged_reason": reason})


def test_undecided_answers_are_counted_and_left_out_of_the_unsupported_rate() -> None:
    s = summarise(
        [
            ans("a", [cl("c1", "supported", "e1"), undecided("c2")], grounded=False),
            ans("b", [undecided("c3", "timeout")], grounded=False),
            ans("c", [cl("c4", None)], grounded=False),  # no verdict and not screened: fail closed
            ans("d", [cl("c5", "supported", "e1")], grounded=True),
        ]
    )
    assert (s.unjudged, s.judged_claims) == (3, 2)
    assert s.unjudged_by_reason == {"offline_undecided": 1, "timeout": 1, "unspecified": 1}
    assert figures(s.groundedness_rate) == (2, 2)  # unjudged claims leave the claim denominator
    assert s.undecided_answers == 3  # "the judge could not decide 3 answers"
    assert figures(s.answers_with_unsupported_claim) == (0, 1)  # only d is decided
    assert figures(s.answer_pass_rate) == (1, 4)  # fail closed: an undecided answer is not grounded
    assert seg(s.by_source_class)["none"] == (3, 0, (0, 0), (0, 0), (0, 3))


def test_a_decided_unsupported_claim_outweighs_an_undecided_one() -> None:
    s = summarise([ans("a", [cl("c1", "absent"), undecided("c2")], grounded=False)])
    assert figures(s.answers_with_unsupported_claim) == (1, 1) and s.undecided_answers == 0
    s = summarise([ans("a", [cl("c1", "contradicted", "e1"), undecided("c2")], grounded=False)])
    assert figures(s.answers_with_unsupported_claim) == (1, 1) and s.undecided_answers == 0


def test_answer_without_claims_counts_as_not_passing() -> None:
    s = summarise(
        [
            ans("a", [cl("c1", None, screened="pleasantry")], grounded=False),
            ans("b", [cl("c2", "supported", "e1")], grounded=True),
        ]
    )
    assert figures(s.answer_pass_rate) == (1, 2)
    assert figures(s.answers_with_unsupported_claim) == (0, 1)


def test_cited_item_without_class_is_unclassified() -> None:
    s = summarise(
        [
            ans(
                "a",
                [cl("c1", "supported", "e9"), cl("c2", "supported", "e3")],
                grounded=True,
                evidence=[ev("e3", None)],
            )
        ]
    )
    assert seg(s.by_source_class) == {"unclassified": (1, 2, (2, 2), (0, 1), (1, 1))}


def test_empty_input() -> None:
    s = summarise([])
    assert (s.answers, s.refusals, s.claims, s.judged_claims, s.unjudged) == (0, 0, 0, 0, 0)
    for r in (
        s.answer_rate,
        s.groundedness_rate,
        s.contradiction_rate,
        s.answers_with_unsupported_claim,
        s.answer_pass_rate,
    ):
        assert (r.numerator, r.denominator, r.value, r.wilson, r.clopper_pearson) == (0, 0, None, None, None)
    assert s.by_source_class == [] and s.by_question_type == []
    assert s.refusal is None and s.citations is None


def test_only_refusals() -> None:
    s = summarise([ans("a", [], grounded=None, refusal=True)])
    assert figures(s.answer_rate) == (0, 1) and s.answer_rate.clopper_pearson is not None
    assert s.answer_rate.clopper_pearson.low == 0.0
    assert s.answer_pass_rate.value is None and s.groundedness_rate.value is None


def labels(*items: dict[str, Any]) -> Labels:
    return Labels(source="golden.jsonl", labels=tuple(Label.model_validate(i) for i in items))


def test_refusal_accuracy_and_over_refusal_with_labels() -> None:
    answers = [
        ans("r1", [], grounded=None, refusal=True),
        ans("r2", [], grounded=None, refusal=True, trace_id="t2"),
        ans("x", [cl("x1", "supported", "e1")], grounded=True, question="Refund window?"),
        ans("y", [cl("y1", "supported", "e1")], grounded=True),
        ans("z", [cl("z1", "absent")], grounded=False),
        ans("unlabelled", [cl("u1", "absent")], grounded=False),
    ]
    s = summarise(
        answers,
        labels(
            {"answer_id": "r1", "answerable": False},
            {"trace_id": "t2", "answerable": True},
            {"question": "Refund window?", "answerable": False},
            {"answer_id": "y", "answerable": True},
            {"answer_id": "z", "answerable": True},
            {"answer_id": "gone", "answerable": True},
        ),
    )
    assert s.refusal is not None
    assert (s.refusal.labelled_answers, s.refusal.unmatched_labels) == (5, 1)
    assert figures(s.refusal.refusal_accuracy) == (1, 2)  # r1 refused; x answered an unanswerable question
    assert figures(s.refusal.over_refusal) == (1, 3)  # r2 refused an answerable one; y and z answered
    for r in (s.refusal.refusal_accuracy, s.refusal.over_refusal):
        assert r.wilson is not None and r.clopper_pearson is not None


def test_refusal_figures_come_together_even_when_one_is_empty() -> None:
    s = summarise(
        [ans("a", [cl("c", "supported", "e1")], grounded=True)],
        labels({"answer_id": "a", "answerable": True}),
    )
    assert s.refusal is not None
    assert figures(s.refusal.over_refusal) == (0, 1)
    assert s.refusal.refusal_accuracy.value is None and s.refusal.refusal_accuracy.denominator == 0


def test_label_question_type_overrides_the_answer() -> None:
    answers = [
        ans("a", [cl("c", "supported", "e1")], grounded=True, question_type="billing"),
        ans("b", [cl("d", "absent")], grounded=False, question_type="billing"),
    ]
    s = summarise(
        answers,
        labels(
            {"answer_id": "a", "answerable": True, "question_type": "refunds"},
            {"answer_id": "b", "answerable": True},
        ),
    )
    assert seg(s.by_question_type) == {
        "billing": (1, 1, (0, 1), (1, 1), (0, 1)),
        "refunds": (1, 1, (1, 1), (0, 1), (1, 1)),
    }


def test_no_labels_no_refusal_figures() -> None:
    assert summarise(sample()).refusal is None


@pytest.mark.parametrize("marked", [None, "a1c3", "a5c2", "a4c1"])
def test_no_citation_figures_without_markers_on_judged_claims(marked: str | None) -> None:
    # a1c3 is screened, a5c2 unjudged, a4c1 in a refusal: a marker there does not make the run a cited one
    answers = [
        a.model_copy(
            update={
                "claims": [
                    c.model_copy(update={"markers": ["[1]"]}) if c.claim_id == marked else c
                    for c in a.claims or []
                ]
            }
        )
        for a in sample()
    ]
    assert summarise(answers).citations is None
