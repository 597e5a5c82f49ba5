"""The evidence stage: traces in, answers with the evidence each could have drawn on out.

:func:`reconstruct` finds every final answer in a trace and, for each, the evidence items that
existed before its generation began (causal cut), with provenance and the hop path through the
tools. No policy is applied here: every item is kept.
"""

from __future__ import annotations

from auditor.evidence._model import Answer, AnswerSelection, Evidence, EvidenceKind
from auditor.evidence._reconstruct import conversation_key, reconstruct

__all__ = [
    "Answer",
    "AnswerSelection",
    "Evidence",
    "EvidenceKind",
    "conversation_key",
    "reconstruct",
]
