"""The evidence stage: traces in, answers with the evidence each could have drawn on out.

:func:`reconstruct` finds every final answer in a trace and, for each, the evidence items that
existed before its generation began (causal cut), with provenance and the hop path through the
tools. No policy is applied here: every item is kept. :func:`unanswered_traces` names each trace
that holds model calls but yielded no answer (never a silent zero); :func:`inspect_traces` lays out,
span by span, what was read.
"""

from __future__ import annotations

from auditor.evidence._conversation import conversation_key
from auditor.evidence._inspect import Inspection, SpanReading, ToolReading, TraceReading, inspect_traces
from auditor.evidence._model import Answer, AnswerSelection, Evidence, EvidenceKind
from auditor.evidence._reconstruct import reconstruct
from auditor.evidence._shapes import without_call
from auditor.evidence._unread import (
    NO_ANSWER,
    ModelCallMarker,
    count_unanswered,
    model_call_marker,
    unanswered_traces,
)

__all__ = [
    "NO_ANSWER",
    "Answer",
    "AnswerSelection",
    "Evidence",
    "EvidenceKind",
    "Inspection",
    "ModelCallMarker",
    "SpanReading",
    "ToolReading",
    "TraceReading",
    "conversation_key",
    "count_unanswered",
    "inspect_traces",
    "model_call_marker",
    "reconstruct",
    "unanswered_traces",
    "without_call",
]
