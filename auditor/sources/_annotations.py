"""What a write-back puts on an answer's span: one layout for every backend.

Per audited answer, on the span that produced it:

- ``auditor.groundedness``: label the answer's status (``grounded``, ``not_grounded``,
  ``undecided``, ``refusal``), score its groundedness (supported / judged claims; none for a
  refusal or an answer with nothing judged), an explanation with the counts, the policy and the
  judge, and metadata holding them as fields;
- ``auditor.claim``, one per claim that was judged (screened-out sentences are counted on the
  groundedness annotation, not written), keyed by the claim's id: label the verdict
  (``supported``, ``contradicted``, ``absent``, ``unjudged``), score 1 for supported and 0 for the
  others (none for unjudged: a claim the judge could not decide is no zero), the claim text and
  its quotes or reason as the explanation, and in the metadata the offsets, citations, excluded
  items that would have supported it, the policy's SHA-256 and the judge.

Every annotation carries the run id, the policy (name, version, SHA-256) and the judge (kind,
model, prompt version), so a verdict read in the backend can be traced to the run that made it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from auditor.results import AnswerOut, AuditResult, ClaimOut

#: Every annotation's name starts with this, so a backend's filter finds the auditor's own.
ANNOTATION_PREFIX = "auditor."


@dataclass(frozen=True)
class Annotation:
    """One verdict for one span: ``name`` (with ``identifier`` telling several of one name apart on
    one span), ``label``, ``score``, ``explanation`` and ``metadata``. ``annotator`` is ``LLM``
    when a model judged, ``CODE`` for the offline judge."""

    trace_id: str
    span_id: str
    name: str
    label: str
    score: float | None
    explanation: str
    annotator: Literal["LLM", "CODE"]
    identifier: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


def _provenance(result: AuditResult) -> dict[str, Any]:
    run = result.run
    return {
        "run_id": run.id,
        "auditor_version": result.auditor_version,
        "policy": run.policy.model_dump() if run.policy else None,
        "judge": run.judge.model_dump() if run.judge else None,
    }


def _identity(result: AuditResult) -> str:
    run = result.run
    policy = (
        f"policy {run.policy.name} {run.policy.version} (sha256 {run.policy.sha256})" if run.policy else ""
    )
    judge = run.judge
    if judge is None:
        return policy
    said = (
        judge.kind
        + (f" {judge.model}" if judge.model else "")
        + (" (approximate)" if judge.approximate else "")
    )
    return f"{policy}; judge {said}"


def _answer_annotation(answer: AnswerOut, result: AuditResult, provenance: dict[str, Any]) -> Annotation:
    claims = answer.claims or []
    judged = [c for c in claims if not c.screened]
    counts = {
        v: sum(c.verdict == v for c in judged) for v in ("supported", "contradicted", "absent", "unjudged")
    }
    counts["screened"] = len(claims) - len(judged)
    decided = counts["supported"] + counts["contradicted"] + counts["absent"]
    if answer.refusal:
        said = "a refusal: no claims to judge"
    else:
        said = (
            f"{counts['supported']} of {decided} judged claim(s) supported, {counts['contradicted']} "
            f"contradicted, {counts['absent']} absent, {counts['unjudged']} unjudged, "
            f"{counts['screened']} screened out"
        )
    judge = result.run.judge
    return Annotation(
        trace_id=answer.trace_id,
        span_id=answer.span_id,
        name=f"{ANNOTATION_PREFIX}groundedness",
        label=answer.status or "not_judged",
        score=answer.groundedness,
        explanation=f"{said}; {_identity(result)}",
        annotator="LLM" if judge is not None and judge.kind == "openai" else "CODE",
        metadata={"answer_id": answer.answer_id, "counts": counts, **provenance},
    )


def _claim_explanation(claim: ClaimOut) -> str:
    lines = [f'Claim: "{claim.text}"']
    lines += [f'{c.evidence_id}: "{c.quote}"' for c in claim.citations]
    if claim.inadmissible_support:
        lines.append("rests only on excluded evidence: " + ", ".join(claim.inadmissible_support))
    if claim.unjudged_reason:
        lines.append(f"unjudged: {claim.unjudged_reason}")
    if claim.rationale:
        lines.append(claim.rationale)
    return "\n".join(lines)


def _claim_annotation(
    answer: AnswerOut, claim: ClaimOut, result: AuditResult, provenance: dict[str, Any]
) -> Annotation:
    verdict = claim.verdict or "unjudged"
    judge = result.run.judge
    return Annotation(
        trace_id=answer.trace_id,
        span_id=answer.span_id,
        name=f"{ANNOTATION_PREFIX}claim",
        identifier=claim.claim_id,
        label=verdict,
        score=None if verdict == "unjudged" else float(verdict == "supported"),
        explanation=_claim_explanation(claim),
        annotator="LLM" if judge is not None and judge.kind == "openai" else "CODE",
        metadata={
            "answer_id": answer.answer_id,
            "claim_id": claim.claim_id,
            "text": claim.text,
            "start": claim.start,
            "end": claim.end,
            "citations": [c.model_dump() for c in claim.citations],
            "inadmissible_support": list(claim.inadmissible_support),
            "unjudged_reason": claim.unjudged_reason,
            **provenance,
        },
    )


def verdict_annotations(result: AuditResult) -> list[Annotation]:
    """The annotations of every audited answer in ``result``, answer by answer: its groundedness,
    then its judged claims in order (module docstring). Answers without claims judged
    (``auditor evidence`` results) give none."""
    provenance = _provenance(result)
    out: list[Annotation] = []
    for answer in result.answers:
        if answer.claims is None:
            continue
        out.append(_answer_annotation(answer, result, provenance))
        out += [_claim_annotation(answer, c, result, provenance) for c in answer.claims if not c.screened]
    return out
