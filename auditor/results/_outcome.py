"""Per-answer figures: groundedness, contradictions, unjudged claims, and the grounded decision.

Rules (DESIGN, "Semantics that must hold"):

- judged claims are those with a verdict of supported, contradicted or absent; ``unjudged`` and
  screened-out claims are not judged, and common-knowledge claims (only when a policy allows
  them) are counted apart and leave the denominator;
- groundedness = supported / judged, undefined (None) with no judged claim;
- an answer is grounded when it has at least one judged claim, groundedness reaches the policy's
  ``claim_support`` threshold, contradicted claims do not exceed ``contradictions_allowed``, and
  (fail closed) no claim is unjudged, and no claim carries a conflict between admitted sources
  that the policy's ``on_conflict = "flag"`` left standing, unless ``conflicts_allowed``;
- a refusal has no claims: every figure is None and it is not grounded or ungrounded.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from auditor.claims import Decomposition
from auditor.judges import ClaimVerdict, Label


class AnswerFigures(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    claims: int
    screened: int
    judged: int
    supported: int
    contradicted: int
    absent: int
    unjudged: int
    common_knowledge: int
    refusal: bool
    groundedness: float | None
    grounded: bool | None
    conflicted: int = 0  # judged claims whose admitted sources disagree (kept in ``conflicts``)
    flagged: int = 0  # ... of which on_conflict left the judge's verdict standing ("flag")


def answer_figures(
    decomposition: Decomposition,
    verdicts: Sequence[ClaimVerdict],
    claim_support: float,
    contradictions_allowed: int,
    conflicts_allowed: bool = False,
) -> AnswerFigures:
    """The figures of one answer from its claims and their verdicts."""
    counted = [v for v in verdicts if not v.common_knowledge]
    supported = sum(v.label is Label.SUPPORTED for v in counted)
    contradicted = sum(v.label is Label.CONTRADICTED for v in counted)
    absent = sum(v.label is Label.ABSENT for v in counted)
    unjudged = sum(v.label is Label.UNJUDGED for v in verdicts)
    judged = supported + contradicted + absent
    screened = sum(c.screened for c in decomposition.claims)
    refusal = decomposition.refusal and judged == 0 and unjudged == 0
    ratio = supported / judged if judged else None
    conflicted = sum(bool(v.conflicts) for v in counted if v.label is not Label.UNJUDGED)
    flagged = sum(v.conflict_resolution == "flag" for v in counted if v.label is not Label.UNJUDGED)
    grounded: bool | None
    if refusal:
        grounded = None
    else:
        grounded = (
            ratio is not None
            and ratio >= claim_support
            and contradicted <= contradictions_allowed
            and unjudged == 0
            and (flagged == 0 or conflicts_allowed)
        )
    return AnswerFigures(
        claims=len(decomposition.claims),
        screened=screened,
        judged=judged,
        supported=supported,
        contradicted=contradicted,
        absent=absent,
        unjudged=unjudged,
        common_knowledge=len(verdicts) - len(counted),
        refusal=refusal,
        groundedness=None if refusal else ratio,
        grounded=grounded,
        conflicted=conflicted,
        flagged=flagged,
    )
