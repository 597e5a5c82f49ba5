"""The run's figures from the per-answer results: rates with denominators, intervals and segments.

Pure functions over :class:`~auditor.results.AnswerOut` (no I/O). The definitions are written out
in ``docs/metrics.md``; in short:

- claim-level rates (groundedness, contradiction) are supported (contradicted) / judged claims and
  carry no interval, because claims within one answer are not independent trials;
- answer-level rates carry a Wilson and a Clopper-Pearson 95% interval, computed by scipy;
- a rate whose denominator is 0 has value None and no interval: nothing was measured;
- "cannot tell" is out of the denominators and counted beside them: an ``unjudged`` claim leaves the
  claim-level rates, and an answer with no decided unsupported claim but an unjudged one is
  *undecided*: neither grounded nor counted as having an unsupported claim, out of that rate's
  denominator, and counted (``undecided_answers``), so a judge that declines more cannot look better
  silently. It still fails the pass rate (fail closed: it is not grounded).

The per-answer rules (what is judged, when an answer is grounded) are :mod:`auditor.results._outcome`'s;
segments re-apply the same rule to the claims of one segment.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from auditor.judges import QUOTE_DISAGREES
from auditor.metrics._citations import citation_figures
from auditor.metrics._conflicts import conflict_figures, conflicted
from auditor.metrics._labels import Labels, match_labels
from auditor.metrics._model import RefusalFigures, Segment, Summary
from auditor.metrics._rates import Status, claim_status, interval, rate
from auditor.policy import Thresholds
from auditor.results import AnswerOut, ClaimOut, EvidenceOut

__all__ = [
    "Tally",
    "claim_source_class",
    "claim_status",
    "interval",
    "rate",
    "refusal_figures",
    "segments",
    "summarise",
]

NO_SOURCE = "none"  # the class of a claim that cites no evidence (absent or unjudged claims)
UNCLASSIFIED = "unclassified"  # a cited item the policy gave no class, or that the answer does not list
UNSPECIFIED = "unspecified"  # the question type of an answer that has none


def claim_source_class(claim: ClaimOut, evidence: Mapping[str, EvidenceOut]) -> str:
    """The source class of the evidence a claim rests on: its first citation's item.

    ``none`` for a claim citing nothing (absent and unjudged claims), ``unclassified`` when the cited
    item has no source class (no policy decided it) or is not among the answer's evidence.
    """
    if not claim.citations:
        return NO_SOURCE
    item = evidence.get(claim.citations[0].evidence_id)
    if item is None or item.source_class is None:
        return UNCLASSIFIED
    return item.source_class


@dataclass
class Tally:
    """The counted claims of one answer, or of one answer within one segment, and what the answer was."""

    supported: int = 0
    contradicted: int = 0
    absent: int = 0
    unjudged: int = 0
    conflicted: int = 0  # judged claims whose admitted sources disagree
    flagged: int = 0  # ... whose verdict on_conflict = "flag" left standing
    refusal: bool = False
    empty: bool = False  # answered, but nothing to judge (blank, or every sentence screened)

    def add(self, status: Status, claim: ClaimOut | None = None) -> None:
        if claim is not None and conflicted(claim):
            self.conflicted += 1
            self.flagged += (claim.conflict_resolution or "flag") == "flag"
        if status == "supported":
            self.supported += 1
        elif status == "contradicted":
            self.contradicted += 1
        elif status == "absent":
            self.absent += 1
        elif status == "unjudged":
            self.unjudged += 1

    @property
    def judged(self) -> int:
        return self.supported + self.contradicted + self.absent

    @property
    def counted(self) -> int:
        """Judged or unjudged claims: what makes an answer count in a segment."""
        return self.judged + self.unjudged

    @property
    def has_unsupported(self) -> bool:
        """At least one claim decided unsupported: absent or contradicted."""
        return self.absent + self.contradicted > 0

    @property
    def undecided(self) -> bool:
        """No claim decided unsupported, but one the judge could not decide: the answer is undecided."""
        return not self.has_unsupported and self.unjudged > 0

    @property
    def decided(self) -> bool:
        """The answer counts in "answers with an unsupported claim": it has a claim and is not undecided."""
        return self.counted > 0 and not self.undecided

    def grounded(self, thresholds: Thresholds) -> bool:
        """:mod:`auditor.results._outcome`'s rule on these claims: a judged claim, the ratio,
        contradictions, none unjudged, no flagged conflict unless the policy allows it."""
        return (
            self.judged > 0
            and self.supported / self.judged >= thresholds.claim_support
            and self.contradicted <= thresholds.contradictions_allowed
            and self.unjudged == 0
            and (self.flagged == 0 or thresholds.conflicts_allowed)
        )


def segments(tallies: Mapping[str, Sequence[Tally]], thresholds: Thresholds) -> list[Segment]:
    """One :class:`Segment` per name, sorted by name, from one tally per answer in the segment.

    The claim figures are over the answers with a claim in the segment; the answer rate, refusals
    and empty answers over every answer in it (refusals and empty answers have no claim to count).
    """
    out: list[Segment] = []
    for name in sorted(tallies):
        population = tallies[name]
        members = [t for t in population if t.counted]
        decided = [t for t in members if t.decided]
        judged = sum(t.judged for t in members)
        refusals = sum(t.refusal for t in population)
        out.append(
            Segment(
                name=name,
                answers=len(members),
                judged_claims=judged,
                groundedness_rate=rate(sum(t.supported for t in members), judged),
                answers_with_unsupported_claim=rate(
                    sum(t.has_unsupported for t in decided), len(decided), intervals=True
                ),
                undecided_answers=len(members) - len(decided),
                answer_pass_rate=rate(
                    sum(t.grounded(thresholds) for t in members), len(members), intervals=True
                ),
                answer_rate=rate(len(population) - refusals, len(population), intervals=True),
                refusals=refusals,
                empty_answers=sum(t.empty for t in population),
                claims_with_conflict=rate(sum(t.conflicted for t in members), judged),
                answers_with_conflict=rate(
                    sum(t.conflicted > 0 for t in members), len(members), intervals=True
                ),
            )
        )
    return out


def refusal_figures(
    refused: Sequence[bool], answerable: Sequence[bool], unmatched_labels: int
) -> RefusalFigures:
    """Refusal accuracy (refused / unanswerable) and over-refusal (refused / answerable), together.

    Args:
        refused: for each labelled answer, whether it is a refusal.
        answerable: for each labelled answer, its label.
        unmatched_labels: labels that matched no answer.
    """
    pairs = list(zip(refused, answerable, strict=True))
    unanswerable = [r for r, a in pairs if not a]
    answerable_refused = [r for r, a in pairs if a]
    return RefusalFigures(
        labelled_answers=len(pairs),
        unmatched_labels=unmatched_labels,
        refusal_accuracy=rate(sum(unanswerable), len(unanswerable), intervals=True),
        over_refusal=rate(sum(answerable_refused), len(answerable_refused), intervals=True),
    )


def summarise(
    answers: Sequence[AnswerOut],
    labels: Labels | None = None,
    *,
    thresholds: Thresholds | None = None,
) -> Summary:
    """The run's figures.

    Args:
        answers: the audited answers (refusal, grounded and claims set by the pipeline).
        labels: a labels file's content: adds refusal accuracy and over-refusal, and a label's
            ``question_type`` overrides the answer's in the question-type segments.
        thresholds: the policy's thresholds, used to decide which answers pass within a segment
            (the overall pass rate uses each answer's own ``grounded``); default ``Thresholds()``.

    Returns:
        The summary, every rate with its numerator and denominator, intervals on answer rates.
    """
    limits = thresholds if thresholds is not None else Thresholds()
    matched = match_labels(answers, labels) if labels is not None else None
    by_class: dict[str, list[Tally]] = defaultdict(list)
    by_type: dict[str, list[Tally]] = defaultdict(list)
    statuses: Counter[Status] = Counter()
    screened_by_reason: Counter[str] = Counter()
    unjudged_by_reason: Counter[str] = Counter()
    claims = refusals = empty = grounded = decided = unsupported = undecided = disagreements = 0

    for position, answer in enumerate(answers):
        answer_claims = answer.claims or []
        claims += len(answer_claims)
        for claim in answer_claims:
            if claim.screened:
                screened_by_reason[claim.screen_reason or "unspecified"] += 1
        evidence = {e.evidence_id: e for e in answer.evidence}
        whole = Tally(refusal=answer.refusal is True)
        per_class: dict[str, Tally] = defaultdict(Tally)
        if whole.refusal:
            refusals += 1
        else:
            grounded += answer.grounded is True
            for claim in answer_claims:
                status = claim_status(claim)
                if status == "screened":
                    continue
                statuses[status] += 1
                disagreements += QUOTE_DISAGREES in claim.judge_errors
                if status == "unjudged":
                    unjudged_by_reason[claim.unjudged_reason or "unspecified"] += 1
                whole.add(status, claim)
                if status != "common_knowledge":
                    per_class[claim_source_class(claim, evidence)].add(status, claim)
            decided += whole.decided
            unsupported += whole.has_unsupported
            undecided += whole.undecided
            whole.empty = all(c.screened for c in answer_claims)
            empty += whole.empty
        # The answer rate of a source class is over the answers that had one of its items admitted
        # (or a claim resting on it): a refusal cites nothing, but it did decline with that evidence.
        admitted = {e.source_class or UNCLASSIFIED for e in answer.evidence if e.admitted}
        for name in admitted or ({NO_SOURCE} if not per_class else set()):
            per_class.setdefault(name, Tally())  # claimless: the answer is in the segment all the same
        for name, tally in per_class.items():
            tally.refusal, tally.empty = whole.refusal, whole.empty
            by_class[name].append(tally)
        label = matched.by_answer.get(position) if matched else None
        question_type = (label.question_type if label else None) or answer.question_type or UNSPECIFIED
        by_type[question_type].append(whole)

    answered = len(answers) - refusals
    judged = statuses["supported"] + statuses["contradicted"] + statuses["absent"]
    refusal = None
    if matched is not None:
        labelled = sorted(matched.by_answer.items())
        refusal = refusal_figures(
            [answers[i].refusal is True for i, _ in labelled],
            [label.answerable for _, label in labelled],
            matched.unmatched_labels,
        )
    return Summary(
        answers=len(answers),
        refusals=refusals,
        answer_rate=rate(answered, len(answers), intervals=True),
        claims=claims,
        screened=sum(screened_by_reason.values()),
        screened_by_reason=dict(sorted(screened_by_reason.items())),
        judged_claims=judged,
        supported=statuses["supported"],
        contradicted=statuses["contradicted"],
        absent=statuses["absent"],
        unjudged=statuses["unjudged"],
        unjudged_by_reason=dict(sorted(unjudged_by_reason.items())),
        undecided_answers=undecided,
        quote_disagreements=disagreements,
        common_knowledge=statuses["common_knowledge"],
        groundedness_rate=rate(statuses["supported"], judged),
        contradiction_rate=rate(statuses["contradicted"], judged),
        answers_with_unsupported_claim=rate(unsupported, decided, intervals=True),
        answer_pass_rate=rate(grounded, answered, intervals=True),
        by_source_class=segments(by_class, limits),
        by_question_type=segments(by_type, limits),
        refusal=refusal,
        citations=citation_figures(answers),
        conflicts=conflict_figures(answers),
        empty_answers=empty,
    )
