"""Per segment: the answer rate (refusals and empty answers) and conflicting sources, by hand."""

from __future__ import annotations

from auditor.metrics import summarise
from auditor.metrics._model import Segment
from auditor.policy import Thresholds
from auditor.results import AnswerOut, ClaimOut, ConflictOut
from tests.test_metrics import ans, cl, ev, figures


def by_name(segments: list[Segment]) -> dict[str, Segment]:
    return {s.name: s for s in segments}


def conflicted(claim_id: str, resolution: str = "flag") -> ClaimOut:
    return cl(claim_id, "supported", "e1").model_copy(
        update={
            "conflicts": [
                ConflictOut(evidence_id="e1", quote="q", stance="supports"),
                ConflictOut(evidence_id="e2", quote="r", stance="contradicts"),
            ],
            "conflict_resolution": resolution,
        }
    )


def sample() -> list[AnswerOut]:
    kb_only = [ev("e1", "kb")]
    return [
        ans("a1", [cl("a1c1", "supported", "e1")], grounded=True, question_type="billing", evidence=kb_only),
        ans("a2", [], grounded=None, refusal=True, question_type="billing", evidence=kb_only),
        ans(
            "a3",
            [cl("a3c1", None, screened="pleasantry")],
            grounded=False,
            question_type="billing",
            evidence=[],
        ),
        ans("a4", [], grounded=None, refusal=True, question_type="shipping", evidence=[]),
        ans("a5", [cl("a5c1", "supported", "e2")], grounded=True, question_type="shipping"),
    ]


def test_question_type_segments_count_every_answer_for_the_answer_rate() -> None:
    s = summarise(sample())
    billing, shipping = by_name(s.by_question_type)["billing"], by_name(s.by_question_type)["shipping"]
    assert billing.answer_rate is not None and figures(billing.answer_rate) == (2, 3)  # a2 refused
    assert (billing.refusals, billing.empty_answers, billing.answers) == (
        1,
        1,
        1,
    )  # a3 is empty: nothing judged
    assert billing.answer_rate.wilson is not None and billing.answer_rate.clopper_pearson is not None
    assert shipping.answer_rate is not None and figures(shipping.answer_rate) == (1, 2)
    assert (s.refusals, s.empty_answers) == (2, 1)
    # the segments' populations add up to every answer
    assert sum(x.answer_rate.denominator for x in s.by_question_type if x.answer_rate) == s.answers


def test_source_class_segments_hold_the_answers_that_had_an_item_of_the_class() -> None:
    s = summarise(sample())
    segs = by_name(s.by_source_class)
    assert set(segs) == {"kb", "none", "tools"}
    kb = segs["kb"]  # a1 (claim), a2 (refused with kb admitted), a5 (kb admitted, its claim cites tools)
    assert kb.answer_rate is not None and figures(kb.answer_rate) == (2, 3) and kb.refusals == 1
    assert kb.answers == 1 and figures(kb.groundedness_rate) == (1, 1)  # claim figures unchanged
    none = segs["none"]  # a3 and a4 had no admitted item at all
    assert none.answer_rate is not None and figures(none.answer_rate) == (1, 2)
    assert (none.refusals, none.empty_answers, none.answers) == (1, 1, 0)
    tools = segs["tools"]
    assert tools.answer_rate is not None and figures(tools.answer_rate) == (1, 1) and tools.answers == 1


def test_conflicts_are_counted_overall_and_per_segment() -> None:
    answers = [
        ans("a", [conflicted("c1"), cl("c2", "supported", "e1")], grounded=False),
        ans(
            "b",
            [conflicted("c3", "contradicted").model_copy(update={"verdict": "contradicted"})],
            grounded=False,
        ),
        ans("c", [cl("c4", "absent")], grounded=False),
        ans("r", [], grounded=None, refusal=True),
    ]
    s = summarise(answers)
    assert s.conflicts is not None
    assert figures(s.conflicts.claims_with_conflict) == (2, 4)
    assert figures(s.conflicts.answers_with_conflict) == (2, 3)
    assert s.conflicts.answers_with_conflict.wilson is not None
    assert s.conflicts.claims_with_conflict.wilson is None  # claim-level: no interval
    assert s.conflicts.flagged == 1 and s.conflicts.by_resolution == {"contradicted": 1, "flag": 1}
    kb = by_name(s.by_source_class)["kb"]
    assert kb.claims_with_conflict is not None and figures(kb.claims_with_conflict) == (2, 3)
    assert kb.answers_with_conflict is not None and figures(kb.answers_with_conflict) == (2, 2)


def test_a_flagged_conflict_fails_the_segment_pass_unless_allowed() -> None:
    answers = [ans("a", [conflicted("c1")], grounded=False, question_type="billing")]
    strict = by_name(summarise(answers).by_question_type)["billing"]
    allowed = by_name(summarise(answers, thresholds=Thresholds(conflicts_allowed=True)).by_question_type)[
        "billing"
    ]
    assert figures(strict.answer_pass_rate) == (0, 1) and figures(allowed.answer_pass_rate) == (1, 1)


def test_summaries_written_before_these_figures_still_load() -> None:
    s = summarise(sample()).model_dump(mode="json")
    del s["conflicts"], s["empty_answers"]
    for segment in s["by_source_class"] + s["by_question_type"]:
        for key in (
            "answer_rate",
            "refusals",
            "empty_answers",
            "claims_with_conflict",
            "answers_with_conflict",
        ):
            del segment[key]
    old = type(summarise([])).model_validate(s)
    assert old.conflicts is None and old.by_question_type[0].answer_rate is None
