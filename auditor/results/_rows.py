"""A result as flat rows, one per claim: what ``auditor export`` writes for spreadsheets and dataframes.

Each :class:`ClaimRow` carries its answer (ids, question, text, outcome) beside the claim (text,
offsets, verdict, the verified quotes and the evidence ids they come from, those items' source
classes). An answer with no claim (a refusal, a blank answer) is still one row, with the claim
fields empty, so every answer of the run appears. Screened sentences are rows too
(``screened`` true, ``screen_reason`` set, no verdict): a reader can count them beside the rates.
The rows are a projection of the public JSON result; nothing is computed here that the result
does not hold.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict

from auditor.results._model import AnswerOut, AuditResult, ClaimOut


class ClaimRow(BaseModel):
    """One row of an export. List fields stay lists (JSON Lines, Parquet) or JSON text (CSV)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    answer_id: str
    trace_id: str
    conversation_id: str | None
    question: str | None
    question_type: str | None
    answer: str
    refusal: bool | None
    answer_grounded: bool | None
    answer_groundedness: float | None
    claim_index: int | None  # position among the answer's claims, screened ones included
    claim_id: str | None
    claim: str | None
    claim_start: int | None
    claim_end: int | None
    screened: bool | None
    screen_reason: str | None
    verdict: str | None
    quotes: list[str]
    evidence_ids: list[str]  # the item of each quote, in the same order
    source_classes: list[str]  # the source class of each distinct cited item
    inadmissible_support: list[str]  # excluded items that would have supported the claim
    markers: list[str]
    misattributed: bool | None
    conflict: bool | None  # admitted sources disagree on this claim
    unjudged_reason: str | None
    rationale: str | None


#: The columns, in order (the CSV header and the Parquet schema follow it).
COLUMNS: tuple[str, ...] = tuple(ClaimRow.model_fields)
#: The list-valued columns.
LIST_COLUMNS: tuple[str, ...] = (
    "quotes",
    "evidence_ids",
    "source_classes",
    "inadmissible_support",
    "markers",
)


def claim_rows(result: AuditResult) -> Iterator[ClaimRow]:
    """The rows of ``result``, in answer order and then claim order."""
    for answer in result.answers:
        claims = answer.claims or []
        if not claims:
            yield _row(result.run.id, answer, None, None)
        for index, claim in enumerate(claims):
            yield _row(result.run.id, answer, index, claim)


def _row(run_id: str, answer: AnswerOut, index: int | None, claim: ClaimOut | None) -> ClaimRow:
    classes = {e.evidence_id: e.source_class for e in answer.evidence}
    cited = [c.evidence_id for c in claim.citations] if claim else []
    sources = [cls for eid in dict.fromkeys(cited) if (cls := classes.get(eid)) is not None]
    return ClaimRow(
        run_id=run_id,
        answer_id=answer.answer_id,
        trace_id=answer.trace_id,
        conversation_id=answer.conversation_id,
        question=answer.question,
        question_type=answer.question_type,
        answer=answer.text,
        refusal=answer.refusal,
        answer_grounded=answer.grounded,
        answer_groundedness=answer.groundedness,
        claim_index=index,
        claim_id=claim.claim_id if claim else None,
        claim=claim.text if claim else None,
        claim_start=claim.start if claim else None,
        claim_end=claim.end if claim else None,
        screened=claim.screened if claim else None,
        screen_reason=claim.screen_reason if claim else None,
        verdict=claim.verdict if claim else None,
        quotes=[c.quote for c in claim.citations] if claim else [],
        evidence_ids=cited,
        source_classes=sources,
        inadmissible_support=list(claim.inadmissible_support) if claim else [],
        markers=list(claim.markers) if claim else [],
        misattributed=claim.misattributed if claim else None,
        conflict=bool(claim.conflicts) if claim else None,
        unjudged_reason=claim.unjudged_reason if claim else None,
        rationale=claim.rationale if claim else None,
    )


__all__ = ["COLUMNS", "LIST_COLUMNS", "ClaimRow", "claim_rows"]
