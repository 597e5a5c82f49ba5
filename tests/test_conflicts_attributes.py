"""Conflicts by attribute (issue 28): two admitted records giving different values or opposite
states for the same attribute of the same thing are a conflict, shown with both sides, never a
plain ``supported`` (nor a plain ``contradicted``)."""

from __future__ import annotations

import pytest

from auditor.results import AnswerOut
from auditor.testing import NotGroundedError, assert_grounded

CLAIM = "The X200 has 14 units in stock."
COUNTED = '{"sku": "X200", "stock": 14}'


def audited(*records: str) -> AnswerOut:
    documents = [{"id": f"tool-{n}", "text": r} for n, r in enumerate(records)]
    with pytest.raises(NotGroundedError) as failed:  # a flagged conflict never passes
        assert_grounded(CLAIM, documents)
    (answer,) = failed.value.answers
    return answer


@pytest.mark.parametrize(
    ("other", "contradicting"),
    [
        ('{"sku": "X200", "stock": 0}', '"stock": 0'),
        ('{"sku": "X200", "in_stock": false}', '"in_stock": false'),
    ],
)
def test_another_value_or_the_opposite_state_is_a_conflict_with_both_sides(
    other: str, contradicting: str
) -> None:
    (claim,) = [c for c in audited(COUNTED, other).claims or [] if not c.screened]
    sides = {(c.stance, c.quote) for c in claim.conflicts}
    assert ("supports", '"stock": 14') in sides
    assert ("contradicts", contradicting) in sides
    assert claim.conflict_resolution == "flag"


def test_the_same_value_twice_is_no_conflict() -> None:
    answers = assert_grounded(CLAIM, [{"id": "a", "text": COUNTED}, {"id": "b", "text": COUNTED}])
    (claim,) = [c for c in answers[0].claims or [] if not c.screened]
    assert claim.verdict == "supported" and claim.conflicts == []
