"""What changing the policy does to the verdicts and the headline figures (``auditor policy diff``).

Pure: it compares two audits of the same answers, one under each policy (same answers, same
claims, same judge), with the evidence diff between the policies
(:class:`~auditor.policy.PolicyDiff`). A claim's verdict changes when where it counts changes
(:func:`~auditor.metrics.claim_status`: supported, contradicted, absent, unjudged, common knowledge
or screened). For each change it names the evidence responsible: the items that changed side and
that either verdict cites (a quote, either side of a conflict, or ``inadmissible_support``); when
no cited item changed side (an absent verdict cites nothing), every item of that answer that
changed side, marked ``cited: false``. The headline figures are summarised under each policy's own
thresholds, with the change in value. See ``docs/policy.md``, "Comparing two policies".
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from auditor.metrics._model import Rate
from auditor.metrics._rates import claim_status
from auditor.metrics._summary import summarise
from auditor.policy import Change, PolicyDiff, Thresholds
from auditor.results import AnswerOut, ClaimOut, JudgeRef

HEADLINES = ("groundedness_rate", "answers_with_unsupported_claim", "answer_pass_rate")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ResponsibleItem(_Model):
    """An evidence item that changed side between the policies, with each policy's reason."""

    evidence_id: str
    kind: str
    name: str | None
    admitted_a: bool
    admitted_b: bool
    reason_a: str
    reason_b: str
    cited: bool  # a verdict under either policy cites it (quote, conflict side, inadmissible support)


class VerdictChange(_Model):
    """One claim whose verdict differs between policy A and policy B."""

    answer_id: str
    trace_id: str
    question: str | None
    claim_id: str
    claim: str
    a: str  # where the claim counts under A: a verdict, "common_knowledge" or "screened"
    b: str
    rationale_a: str | None
    rationale_b: str | None
    evidence: tuple[ResponsibleItem, ...]


class FigureChange(_Model):
    """A headline figure under each policy, and how far it moved (B - A, None when undefined)."""

    name: str
    a: Rate
    b: Rate
    change: float | None


class VerdictDiff(_Model):
    """The claims whose verdict changes, and the headline figures under each policy."""

    judge: JudgeRef
    claims_compared: int
    changes: tuple[VerdictChange, ...]
    figures: tuple[FigureChange, ...]


class PolicyComparison(_Model):
    """``auditor policy diff``: the evidence that changes side, and what that does to the verdicts."""

    evidence: PolicyDiff
    verdicts: VerdictDiff
    problems: int  # problems in the input (``auditor evidence`` lists them)


def verdict_diff(
    a: Sequence[AnswerOut],
    b: Sequence[AnswerOut],
    evidence: PolicyDiff,
    judge: JudgeRef,
    thresholds_a: Thresholds,
    thresholds_b: Thresholds,
) -> VerdictDiff:
    """Compare two audits of the same answers (same order), one under each policy.

    Args:
        a: the audited answers under policy A.
        b: the same answers audited under policy B.
        evidence: the evidence diff from A to B (:func:`auditor.policy.diff`).
        judge: the judge both audits used.
        thresholds_a: policy A's thresholds (for its figures).
        thresholds_b: policy B's thresholds.
    """
    changed_items = {d.answer_id: d.changes for d in evidence.answers}
    changes: list[VerdictChange] = []
    compared = 0
    for answer_a, answer_b in zip(a, b, strict=True):
        claims_b = {c.claim_id: c for c in answer_b.claims or []}
        for claim_a in answer_a.claims or []:
            claim_b = claims_b.get(claim_a.claim_id)
            if claim_b is None:
                continue
            compared += 1
            status_a, status_b = claim_status(claim_a), claim_status(claim_b)
            if status_a == status_b:
                continue
            changes.append(
                VerdictChange(
                    answer_id=answer_a.answer_id,
                    trace_id=answer_a.trace_id,
                    question=answer_a.question,
                    claim_id=claim_a.claim_id,
                    claim=claim_a.text,
                    a=status_a,
                    b=status_b,
                    rationale_a=claim_a.rationale,
                    rationale_b=claim_b.rationale,
                    evidence=_responsible(claim_a, claim_b, changed_items.get(answer_a.answer_id, ())),
                )
            )
    summary_a = summarise(a, thresholds=thresholds_a)
    summary_b = summarise(b, thresholds=thresholds_b)
    figures = []
    for name in HEADLINES:
        rate_a, rate_b = getattr(summary_a, name), getattr(summary_b, name)
        moved = None if rate_a.value is None or rate_b.value is None else rate_b.value - rate_a.value
        figures.append(FigureChange(name=name, a=rate_a, b=rate_b, change=moved))
    return VerdictDiff(judge=judge, claims_compared=compared, changes=tuple(changes), figures=tuple(figures))


def _cited(claim: ClaimOut) -> set[str]:
    return (
        {c.evidence_id for c in claim.citations}
        | {c.evidence_id for c in claim.conflicts}
        | set(claim.inadmissible_support)
    )


def _responsible(a: ClaimOut, b: ClaimOut, changes: Sequence[Change]) -> tuple[ResponsibleItem, ...]:
    cited = _cited(a) | _cited(b)
    chosen = [c for c in changes if c.evidence.evidence_id in cited] or list(changes)
    return tuple(
        ResponsibleItem(
            evidence_id=c.evidence.evidence_id,
            kind=c.evidence.kind.value,
            name=c.evidence.name,
            admitted_a=c.a.admitted,
            admitted_b=c.b.admitted,
            reason_a=c.a.reason,
            reason_b=c.b.reason,
            cited=c.evidence.evidence_id in cited,
        )
        for c in chosen
    )
