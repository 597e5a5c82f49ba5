"""Between the public result models (:mod:`auditor.results`) and the store's rows.

``result_from_records(records_from(x)) == x`` for every field of the JSON contract: this is what
lets a report be re-rendered from the store. JSON-valued fields (metadata, inputs, problems,
summary) are stored as their JSON form, so they come back as JSON types (lists, not tuples).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python

from auditor.evidence import EvidenceKind, count_unanswered
from auditor.metrics import answer_counts
from auditor.results import (
    AnswerOut,
    AuditResult,
    CitationMarkerOut,
    CitationOut,
    ClaimOut,
    ConflictOut,
    EvidenceOut,
    InputRef,
    JudgeRef,
    PolicyRef,
    ProblemOut,
    RunInfo,
)
from auditor.store._schema import AnswerRecord, ClaimRecord, EvidenceRecord, RunRecord
from auditor.text import short_digest


def inputs_digest(input_digests: list[str] | tuple[str, ...] | set[str]) -> str:
    """One digest for a set of input files (order-independent): what ``find_resumable`` matches on."""
    return short_digest("inputs", *sorted(input_digests), length=64)


def run_record(run: RunInfo, policy_text: str | None, auditor_version: str, status: str) -> RunRecord:
    return RunRecord(
        id=run.id,
        auditor_version=auditor_version,
        policy_name=run.policy.name if run.policy else None,
        policy_version=run.policy.version if run.policy else None,
        policy_sha256=run.policy.sha256 if run.policy else None,
        policy_text=policy_text,
        judge_kind=run.judge.kind if run.judge else None,
        judge_model=run.judge.model if run.judge else None,
        judge_prompt_version=run.judge.prompt_version if run.judge else None,
        judge_approximate=run.judge.approximate if run.judge else False,
        inputs=[i.model_dump(mode="json") for i in run.inputs],
        inputs_digest=inputs_digest([i.sha256 for i in run.inputs]),
        started_at=run.started_at,
        finished_at=None,
        status=status,
        usage=None,
        summary=None,
        problems=[p.model_dump(mode="json") for p in run.problems],
    )


def policy_ref(row: RunRecord) -> PolicyRef | None:
    if row.policy_sha256 is None or row.policy_name is None or row.policy_version is None:
        return None
    return PolicyRef(name=row.policy_name, version=row.policy_version, sha256=row.policy_sha256)


def judge_ref(row: RunRecord) -> JudgeRef | None:
    if row.judge_kind is None:
        return None
    return JudgeRef.model_validate(
        {
            "kind": row.judge_kind,
            "model": row.judge_model,
            "prompt_version": row.judge_prompt_version,
            "approximate": row.judge_approximate,
        }
    )


def run_info(row: RunRecord) -> RunInfo:
    return RunInfo(
        id=row.id,
        started_at=row.started_at,
        policy=policy_ref(row),
        judge=judge_ref(row),
        inputs=[InputRef.model_validate(i) for i in row.inputs],
        problems=(problems := [ProblemOut.model_validate(p) for p in row.problems]),
        unanswered_traces=count_unanswered(problems),
    )


@dataclass(frozen=True)
class AnswerRows:
    """One answer as the column values of its rows: the answer, its evidence, claims and verdicts.

    Plain dicts, not ORM records: a run saves tens of rows per answer, and building mapped objects
    (instrumented attributes, collections) cost more than the ``INSERT`` itself (:mod:`._write`).
    Keys are the models' column keys; the children's ``run_id`` / ``answer_id`` are set here.
    """

    answer: dict[str, Any]
    evidence: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    verdicts: list[dict[str, Any]]


def answer_record(
    run_id: str,
    answer: AnswerOut,
    position: int,
    trace_key: str,
    saved_at: datetime,
    usage: dict[str, Any] | None = None,
) -> AnswerRows:
    """The rows of one answer of run ``run_id`` at ``position`` (``usage``: the judge usage it cost)."""
    owner = {"run_id": run_id, "answer_id": answer.answer_id}
    row = {
        **owner,
        "position": position,
        "trace_key": trace_key,
        "trace_id": answer.trace_id,
        "span_id": answer.span_id,
        "conversation_id": answer.conversation_id,
        "question": answer.question,
        "question_type": answer.question_type,
        "text": answer.text,
        "generated_at": answer.generated_at,
        "has_claims": answer.claims is not None,
        "refusal": answer.refusal,
        "groundedness": answer.groundedness,
        "contradicted": answer.contradicted,
        "unjudged": answer.unjudged,
        "grounded": answer.grounded,
        "saved_at": saved_at,
        "usage": usage,
        "counts": answer_counts(answer),
    }
    claims: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    for i, claim in enumerate(answer.claims or []):
        claims.append(_claim_row(claim, i, owner))
        if _has_verdict(claim):
            verdicts.append(_verdict_row(claim, i, owner))
    return AnswerRows(
        row, [_evidence_row(e, i, owner) for i, e in enumerate(answer.evidence)], claims, verdicts
    )


def _evidence_row(item: EvidenceOut, position: int, owner: dict[str, str]) -> dict[str, Any]:
    return {
        **owner,
        "position": position,
        "evidence_id": item.evidence_id,
        "kind": item.kind.value,
        "name": item.name,
        "text": item.text,
        "metadata": to_jsonable_python(item.metadata),  # the column of EvidenceRecord.meta
        "document_id": item.document_id,
        "url": item.url,
        "trace_id": item.trace_id,
        "span_id": item.span_id,
        "available_at": item.available_at,
        "hop_path": list(item.hop_path),
        "error": item.error,
        "current_question": item.current_question,
        "source_class": item.source_class,
        "admitted": item.admitted,
        "reason": item.reason,
    }


def _has_verdict(claim: ClaimOut) -> bool:
    return claim.verdict is not None or bool(
        claim.citations
        or claim.inadmissible_support
        or claim.rationale
        or claim.unjudged_reason
        or claim.judge_errors
        or claim.common_knowledge
        or claim.settled_by
        or claim.conflicts
    )


def _claim_row(claim: ClaimOut, position: int, owner: dict[str, str]) -> dict[str, Any]:
    return {
        **owner,
        "position": position,
        "claim_id": claim.claim_id,
        "text": claim.text,
        "start": claim.start,
        "end": claim.end,
        "screened": claim.screened,
        "screen_reason": claim.screen_reason,
        "markers": list(claim.markers),
        "citation_markers": [m.model_dump(mode="json") for m in claim.citation_markers],
        "misattributed": claim.misattributed,
    }


def _verdict_row(claim: ClaimOut, position: int, owner: dict[str, str]) -> dict[str, Any]:
    return {
        **owner,
        "position": position,
        "label": claim.verdict,
        "citations": [{"evidence_id": c.evidence_id, "quote": c.quote} for c in claim.citations],
        "inadmissible_support": list(claim.inadmissible_support),
        "rationale": claim.rationale,
        "unjudged_reason": claim.unjudged_reason,
        "judge_errors": list(claim.judge_errors),
        "common_knowledge": claim.common_knowledge,
        "settled_by": claim.settled_by,
        "conflicts": [c.model_dump(mode="json") for c in claim.conflicts],
        "conflict_resolution": claim.conflict_resolution,
    }


def answer_out(record: AnswerRecord) -> AnswerOut:
    return AnswerOut(
        answer_id=record.answer_id,
        trace_id=record.trace_id,
        span_id=record.span_id,
        conversation_id=record.conversation_id,
        question=record.question,
        question_type=record.question_type,
        text=record.text,
        generated_at=record.generated_at,
        evidence=[_evidence_out(e) for e in record.evidence],
        claims=[_claim_out(c) for c in record.claims] if record.has_claims else None,
        refusal=record.refusal,
        groundedness=record.groundedness,
        contradicted=record.contradicted,
        unjudged=record.unjudged,
        grounded=record.grounded,
    )


def _evidence_out(record: EvidenceRecord) -> EvidenceOut:
    return EvidenceOut(
        evidence_id=record.evidence_id,
        kind=EvidenceKind(record.kind),
        name=record.name,
        text=record.text,
        metadata=record.meta,
        document_id=record.document_id,
        url=record.url,
        trace_id=record.trace_id,
        span_id=record.span_id,
        available_at=record.available_at,
        hop_path=list(record.hop_path),
        error=record.error,
        current_question=record.current_question,
        source_class=record.source_class,
        admitted=record.admitted,
        reason=record.reason,
    )


def _claim_out(record: ClaimRecord) -> ClaimOut:
    fields: dict[str, Any] = {
        "claim_id": record.claim_id,
        "text": record.text,
        "start": record.start,
        "end": record.end,
        "screened": record.screened,
        "screen_reason": record.screen_reason,
        "verdict": None,
        "markers": list(record.markers or []),
        "citation_markers": [CitationMarkerOut.model_validate(m) for m in record.citation_markers or []],
        "misattributed": bool(record.misattributed),
    }
    verdict = record.verdict
    if verdict is not None:
        fields.update(
            verdict=verdict.label,
            citations=[CitationOut.model_validate(c) for c in verdict.citations],
            inadmissible_support=list(verdict.inadmissible_support),
            rationale=verdict.rationale,
            unjudged_reason=verdict.unjudged_reason,
            judge_errors=list(verdict.judge_errors),
            common_knowledge=verdict.common_knowledge,
            settled_by=verdict.settled_by,
            conflicts=[ConflictOut.model_validate(c) for c in verdict.conflicts or []],
            conflict_resolution=verdict.conflict_resolution,
        )
    return ClaimOut.model_validate(fields)


def audit_result(row: RunRecord) -> AuditResult:
    return AuditResult(
        auditor_version=row.auditor_version,
        run=run_info(row),
        answers=[answer_out(a) for a in row.answers],
        summary=dict(row.summary or {}),
    )
