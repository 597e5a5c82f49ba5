"""How often admitted sources disagree: claims and answers with a conflict, each with its denominator.

A claim has a conflict when its verdict keeps both sides (``conflicts``: one admitted item supports
it, another contradicts it); the policy's ``on_conflict`` then decided what the verdict became
(``conflict_resolution``). Counted over answered answers, like every figure:

- ``claims_with_conflict`` = judged claims with a conflict / judged claims (claim-level: no interval);
- ``answers_with_conflict`` = answers with such a claim / answers with a judged or unjudged claim
  (the denominator of headline 2), with intervals;
- ``flagged``: claims whose verdict ``on_conflict = "flag"`` left standing; their answers cannot
  pass unless the policy sets ``conflicts_allowed``.

See ``docs/metrics.md``, "Conflicts".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from auditor.metrics._model import ConflictFigures
from auditor.metrics._rates import claim_status, rate
from auditor.results import AnswerOut, ClaimOut

_JUDGED = ("supported", "contradicted", "absent")


def conflicted(claim: ClaimOut) -> bool:
    """Whether a judged claim keeps conflicting admitted sources."""
    return bool(claim.conflicts) and claim_status(claim) in _JUDGED


def conflict_figures(answers: Sequence[AnswerOut]) -> ConflictFigures:
    """Claims and answers with a conflict, over the judged claims and counted answers of answered answers."""
    judged = with_conflict = counted_answers = answers_with = 0
    resolutions: Counter[str] = Counter()
    for answer in answers:
        if answer.refusal is True:
            continue
        statuses = [claim_status(c) for c in answer.claims or []]
        judged += sum(s in _JUDGED for s in statuses)
        found = [c for c in answer.claims or [] if conflicted(c)]
        with_conflict += len(found)
        resolutions.update(c.conflict_resolution or "flag" for c in found)
        if any(s in (*_JUDGED, "unjudged") for s in statuses):
            counted_answers += 1
            answers_with += bool(found)
    return ConflictFigures(
        claims_with_conflict=rate(with_conflict, judged),
        answers_with_conflict=rate(answers_with, counted_answers, intervals=True),
        flagged=resolutions["flag"],
        by_resolution=dict(sorted(resolutions.items())),
    )
