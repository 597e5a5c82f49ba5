"""The JSON result: the public contract that ``auditor evidence --json`` and ``auditor audit --json`` write.

Users' scripts and CI read this document, so the core fields below are fixed: more may be added,
none renamed (README, "The JSON result", documents each field). Validation happens on the way
out, so a document that breaks the contract is never written.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from auditor import __version__
from auditor.claims import Claim
from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.judges import Attribution, ClaimVerdict, JudgeIdentity, describe_unjudged
from auditor.policy import Decision
from auditor.results._outcome import AnswerFigures


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Derived(_Out):
    """A model with fields derived from the others (``computed_field``): written to the JSON, and
    dropped on reading it back (they are recomputed), so a written document validates again."""

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.model_computed_fields.keys() & data.keys():
            return {k: v for k, v in data.items() if k not in cls.model_computed_fields}
        return data


class PolicyRef(_Out):
    name: str
    version: str
    sha256: str


class JudgeRef(_Out):
    kind: Literal["offline", "openai"]
    model: str | None = None
    prompt_version: str | None = None
    approximate: bool = False  # true for the offline judge: its verdicts are surface heuristics


class InputRef(_Out):
    path: str
    sha256: str
    format: str | None
    traces: int


class ProblemOut(_Out):
    file: str
    line: int | None
    severity: Literal["warning", "error"]
    reason: str
    trace_id: str | None = None
    span_id: str | None = None
    code: str | None = None  # "no_answer": a trace with model calls from which no answer was read


class RunInfo(_Out):
    id: str
    started_at: datetime
    policy: PolicyRef | None
    judge: JudgeRef | None
    inputs: list[InputRef] = Field(default_factory=list)
    problems: list[ProblemOut] = Field(default_factory=list)
    #: Traces holding model calls from which no answer was read (each named by a ``no_answer`` problem).
    unanswered_traces: int = 0
    usage: dict[str, Any] | None = None  # LLM calls, tokens, cost; cascade and cache counts (LLM judges)
    #: Runs on the same inputs, policy and judge that this one, on finishing, marked ``superseded``:
    #: left ``running`` by a process that is gone (see ``Store.supersede_runs``).
    superseded: list[str] = Field(default_factory=list)


class EvidenceOut(_Out):
    evidence_id: str
    kind: EvidenceKind
    name: str | None
    text: str
    metadata: dict[str, Any]
    document_id: str | None = None
    url: str | None = None
    trace_id: str
    span_id: str | None
    available_at: datetime | None
    hop_path: list[str]
    error: bool = False
    current_question: bool = False
    source_class: str | None
    admitted: bool | None
    reason: str | None


class CitationOut(_Out):
    evidence_id: str
    quote: str


class CitationMarkerOut(_Out):
    """One citation marker of a claim, judged against the item(s) it resolves to."""

    marker: str  # as written: "[KB-101]", "[^2]", "【3】", a URL
    evidence_ids: list[str] = Field(default_factory=list)  # the items it resolves to, admitted or not
    resolved_by: str | None = None  # "definition", "id", "url", "position"; null when unresolved
    supports: bool | None = None  # null: resolves to nothing admitted, or nothing decided; see reason
    reason: str = ""


class ConflictOut(_Out):
    """One side of a conflict between admitted sources: a verified quote and where it stands."""

    evidence_id: str
    quote: str
    stance: Literal["supports", "contradicts"]


class ClaimOut(_Derived):
    claim_id: str
    text: str
    start: int
    end: int
    screened: bool
    screen_reason: str | None
    verdict: Literal["supported", "contradicted", "absent", "unjudged"] | None
    citations: list[CitationOut] = Field(default_factory=list)
    inadmissible_support: list[str] = Field(default_factory=list)
    rationale: str | None = None
    unjudged_reason: str | None = None
    judge_errors: list[str] = Field(default_factory=list)
    common_knowledge: bool = False
    settled_by: str | None = None
    markers: list[str] = Field(default_factory=list)  # citation markers attached to the claim, as written
    citation_markers: list[CitationMarkerOut] = Field(default_factory=list)  # each marker, judged
    misattributed: bool = False  # supported, but by no item its markers cite
    conflicts: list[ConflictOut] = Field(default_factory=list)  # both sides, when admitted items disagree
    conflict_resolution: Literal["flag", "contradicted", "prefer_newest"] | None = None  # on_conflict applied

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unjudged_text(self) -> str | None:
        """Why the claim was not decided, in a sentence a person understands (null when it was)."""
        if self.verdict != "unjudged":
            return None
        return describe_unjudged(self.unjudged_reason) or None


#: An answer's standing in one word (``AnswerOut.status``).
Status = Literal["grounded", "not_grounded", "undecided", "refusal"]


class AnswerOut(_Derived):
    answer_id: str
    trace_id: str
    span_id: str
    conversation_id: str | None = None
    question: str | None
    question_type: str | None = None
    text: str
    generated_at: datetime
    evidence: list[EvidenceOut]
    claims: list[ClaimOut] | None = None  # None (and left out of the JSON) for `auditor evidence`
    refusal: bool | None = None
    groundedness: float | None = None
    contradicted: int | None = None
    unjudged: int | None = None
    grounded: bool | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def undecided(self) -> bool:
        """No claim decided unsupported and at least one the judge could not decide: shown as
        *undecided*, never as a groundedness percentage (which leaves those claims out)."""
        if self.refusal or not self.claims:
            return False
        verdicts = [c.verdict for c in self.claims if not c.screened]
        return "unjudged" in verdicts and not {"contradicted", "absent"} & set(verdicts)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Status | None:
        """``grounded``, ``not_grounded``, ``undecided`` (before ``not_grounded``: nothing was decided
        unsupported), ``refusal``; None when the answer was not judged (``auditor evidence``)."""
        if self.refusal:
            return "refusal"
        if self.undecided:
            return "undecided"
        if self.grounded is None:
            return None
        return "grounded" if self.grounded else "not_grounded"


class AuditResult(_Out):
    """The whole document."""

    auditor_version: str = __version__
    run: RunInfo
    answers: list[AnswerOut]
    summary: dict[str, Any] = Field(default_factory=dict)

    def to_json(self) -> str:
        """The document as indented JSON (two spaces, UTF-8 text unescaped) and a newline; an
        answer without claims (a refusal) leaves the key out.

        Written by pydantic's own serialiser: about 15 times as fast as dumping to Python values
        and formatting those (0.27 s -> 0.016 s for the dev set's 309 answers), the same
        document; only small floats are spelled otherwise (``2.5e-05`` is ``0.000025``).
        """
        unclaimed = {i: {"claims"} for i, answer in enumerate(self.answers) if answer.claims is None}
        return self.model_dump_json(indent=2, exclude={"answers": unclaimed} if unclaimed else None) + "\n"


def evidence_out(item: Evidence, decision: Decision | None = None) -> EvidenceOut:
    return EvidenceOut(
        evidence_id=item.evidence_id,
        kind=item.kind,
        name=item.name,
        text=item.text,
        metadata=item.metadata,
        document_id=item.document_id,
        url=item.url,
        trace_id=item.trace_id,
        span_id=item.span_id,
        available_at=item.available_at,
        hop_path=list(item.hop_path),
        error=item.error,
        current_question=item.current_question,
        source_class=decision.source_class if decision else None,
        admitted=decision.admitted if decision else None,
        reason=decision.reason if decision else None,
    )


def claim_out(claim: Claim, verdict: ClaimVerdict | None, attribution: Attribution | None = None) -> ClaimOut:
    checked = attribution.markers if attribution is not None else ()
    return ClaimOut(
        claim_id=claim.claim_id,
        text=claim.text,
        start=claim.start,
        end=claim.end,
        screened=claim.screened,
        screen_reason=claim.screen_reason.value if claim.screen_reason else None,
        verdict=verdict.label.value if verdict else None,
        citations=[CitationOut(evidence_id=c.evidence_id, quote=c.quote) for c in verdict.citations]
        if verdict
        else [],
        inadmissible_support=list(verdict.inadmissible_support) if verdict else [],
        rationale=verdict.rationale if verdict else None,
        unjudged_reason=verdict.unjudged_reason.value if verdict and verdict.unjudged_reason else None,
        judge_errors=list(verdict.judge_errors) if verdict else [],
        common_knowledge=verdict.common_knowledge if verdict else False,
        settled_by=verdict.settled_by or None if verdict else None,
        markers=list(claim.citations),
        citation_markers=[
            CitationMarkerOut(
                marker=m.marker,
                evidence_ids=list(m.evidence_ids),
                resolved_by=m.resolved_by,
                supports=m.supports,
                reason=m.reason,
            )
            for m in checked
        ],
        misattributed=attribution.misattributed if attribution is not None else False,
        conflicts=[
            ConflictOut(evidence_id=c.evidence_id, quote=c.quote, stance=c.stance)
            for c in (verdict.conflicts if verdict else ())
        ],
        conflict_resolution=verdict.conflict_resolution if verdict else None,
    )


def answer_out(
    answer: Answer,
    decisions: list[Decision] | None = None,
    claims: list[ClaimOut] | None = None,
    figures: AnswerFigures | None = None,
) -> AnswerOut:
    chosen = decisions if decisions is not None else [None] * len(answer.evidence)
    return AnswerOut(
        answer_id=answer.answer_id,
        trace_id=answer.trace_id,
        span_id=answer.span_id,
        conversation_id=answer.conversation_id,
        question=answer.question,
        question_type=answer.question_type,
        text=answer.text,
        generated_at=answer.generated_at,
        evidence=[evidence_out(e, d) for e, d in zip(answer.evidence, chosen, strict=True)],
        claims=claims,
        refusal=figures.refusal if figures else None,
        groundedness=figures.groundedness if figures else None,
        contradicted=figures.contradicted if figures else None,
        unjudged=figures.unjudged if figures else None,
        grounded=figures.grounded if figures else None,
    )


def judge_ref(identity: JudgeIdentity) -> JudgeRef:
    kind: Literal["offline", "openai"] = "openai" if identity.kind == "openai" else "offline"
    return JudgeRef(
        kind=kind,
        model=identity.model,
        prompt_version=identity.prompt_version,
        approximate=identity.approximate,
    )
