"""The results stage: the public JSON contract and the per-answer outcome.

:class:`AuditResult` and its parts are what ``auditor audit --json`` writes and what the store,
the metrics and the report read; the core fields are fixed (README, "The JSON result").
:func:`answer_figures` applies the per-answer rules (judged claims, groundedness, grounded).
"""

from __future__ import annotations

from auditor.results._model import (
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
    answer_out,
    claim_out,
    judge_ref,
)
from auditor.results._outcome import AnswerFigures, answer_figures

__all__ = [
    "AnswerFigures",
    "AnswerOut",
    "AuditResult",
    "CitationMarkerOut",
    "CitationOut",
    "ClaimOut",
    "ConflictOut",
    "EvidenceOut",
    "InputRef",
    "JudgeRef",
    "PolicyRef",
    "ProblemOut",
    "RunInfo",
    "answer_figures",
    "answer_out",
    "claim_out",
    "judge_ref",
]
