"""The JSON result: the public contract that ``auditor evidence --json`` and ``auditor audit --json`` write.

Users' scripts and CI read this document, so the core fields below are fixed: more may be added,
none renamed (README, "The JSON result", documents each field). Validation happens on the way
out, so a document that breaks the contract is never written.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from auditor import __version__
from auditor.evidence_model import EvidenceKind


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PolicyRef(_Out):
    name: str
    version: str
    sha256: str


class JudgeRef(_Out):
    kind: Literal["offline", "openai"]
    model: str | None = None
    prompt_version: str | None = None


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


class RunInfo(_Out):
    id: str
    started_at: datetime
    policy: PolicyRef | None
    judge: JudgeRef | None
    inputs: list[InputRef] = Field(default_factory=list)
    problems: list[ProblemOut] = Field(default_factory=list)


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


class ClaimOut(_Out):
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


class AnswerOut(_Out):
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


class AuditResult(_Out):
    """The whole document."""

    auditor_version: str = __version__
    run: RunInfo
    answers: list[AnswerOut]
    summary: dict[str, Any] = Field(default_factory=dict)

    def to_json(self) -> str:
        data = self.model_dump(mode="json")
        for answer in data["answers"]:
            if answer["claims"] is None:
                del answer["claims"]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
