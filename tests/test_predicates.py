"""Near misses in the predicate (issue 28 item 3): another rank or another role is never support.

"Alice finished second in the race" holds three of the four content words of "Alice finished first
in the race", and "sung by Paul McCartney" all the names of "written by Paul McCartney"; no figure
or name check sees the difference (:mod:`auditor.judges.verify._predicates`). Checked for the offline
judge end to end and for any judge's quote.
"""

from __future__ import annotations

import pytest

from auditor.evidence import Evidence, EvidenceKind
from auditor.judges import QUOTE_DISAGREES, Citation, ClaimVerdict, Label, UnjudgedReason, verify_quotes
from auditor.testing import NotGroundedError, assert_grounded

SONG = "Yesterday is a song sung by Paul McCartney on the album Help!"
RACE = "Alice finished second in the race, behind Carol."


def audited(text: str, source: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    with pytest.raises(NotGroundedError) as failed:
        assert_grounded(text, [source])
    (answer,) = failed.value.answers
    (claim,) = [c for c in answer.claims or [] if not c.screened]
    return claim.verdict, claim.unjudged_reason, tuple(claim.judge_errors)


def test_another_role_never_supports_and_is_not_certain() -> None:
    verdict, reason, errors = audited("Yesterday was written by Paul McCartney.", SONG)
    assert (verdict, reason) == ("unjudged", "quote_disagrees")  # he may have written it too
    assert QUOTE_DISAGREES in errors


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("Alice finished first in the race.", RACE),
        ("Alice finished 2nd in the race.", "Alice finished first in the race, ahead of Carol."),
        ("Alice finished 1st in the race.", RACE),
        ("Alice finished 3rd in the race.", "Alice finished 2nd in the race, behind Carol."),
    ],
)
def test_another_rank_contradicts(claim: str, source: str) -> None:
    """Ranks in digits ("2nd") and in words ("first") are one reading, so they contradict alike."""
    verdict, _, errors = audited(claim, source)
    assert verdict == "contradicted" and QUOTE_DISAGREES in errors


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("Yesterday was written by Paul McCartney.", "Yesterday was written by Paul McCartney in 1965."),
        ("Alice finished second in the race.", RACE),
        ("Alice finished 2nd in the race.", RACE),  # digits and words: one rank
        ("Alice finished second in the race.", "Alice finished 2nd in the race, behind Carol."),
        ("The order was placed on March 2nd.", "Order placed: 2026-03-02."),  # a day, not a rank
    ],
)
def test_the_same_role_or_rank_still_supports(claim: str, source: str) -> None:
    (answer,) = assert_grounded(claim, [source])
    assert [c.verdict for c in answer.claims or [] if not c.screened] == ["supported"]


@pytest.mark.parametrize(
    ("claim", "quote", "label"),
    [
        ("Yesterday was written by Paul McCartney.", SONG, Label.UNJUDGED),
        ("Alice finished first in the race.", RACE, Label.CONTRADICTED),
        ("Alice finished third in the race.", RACE, Label.CONTRADICTED),
    ],
)
def test_any_judges_supported_verdict_quoting_another_predicate_is_turned(
    claim: str, quote: str, label: Label
) -> None:
    evidence = {
        "kb": Evidence(evidence_id="kb", kind=EvidenceKind.RETRIEVED_DOCUMENT, text=quote, trace_id="t")
    }
    said = ClaimVerdict(
        claim_id="c1", label=Label.SUPPORTED, citations=(Citation(evidence_id="kb", quote=quote),)
    )
    checked = verify_quotes(said, evidence, claim_text=claim)
    assert checked.label is label and QUOTE_DISAGREES in checked.judge_errors
    if label is Label.UNJUDGED:
        assert checked.unjudged_reason is UnjudgedReason.QUOTE_DISAGREES
