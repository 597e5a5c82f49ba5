"""The results stage: the public JSON contract and the per-answer outcome.

:class:`AuditResult` and its parts are what ``auditor audit --json`` writes and what the store,
the metrics and the report read; the core fields are fixed (README, "The JSON result").
:func:`answer_figures` applies the per-answer rules (judged claims, groundedness, grounded).
:func:`claim_rows` flattens a result to one :class:`ClaimRow` per claim and :func:`write_rows`
writes them as JSON Lines, CSV or Parquet (``auditor export``).
"""

from __future__ import annotations

from auditor.results._export import FORMATS, ExportFormat, formula_safe, from_formula_safe, write_rows
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
from auditor.results._rows import ClaimRow, claim_rows

__all__ = [
    "FORMATS",
    "AnswerFigures",
    "AnswerOut",
    "AuditResult",
    "CitationMarkerOut",
    "CitationOut",
    "ClaimOut",
    "ClaimRow",
    "ConflictOut",
    "EvidenceOut",
    "ExportFormat",
    "InputRef",
    "JudgeRef",
    "PolicyRef",
    "ProblemOut",
    "RunInfo",
    "answer_figures",
    "answer_out",
    "claim_out",
    "claim_rows",
    "formula_safe",
    "from_formula_safe",
    "judge_ref",
    "write_rows",
]
