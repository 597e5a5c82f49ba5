"""The types evidence reconstruction produces: answers and the evidence each could draw on.

Kept apart from the reconstruction algorithm (:mod:`auditor.evidence`) so downstream stages
(policy, claims, judges) depend on the types only.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class EvidenceKind(StrEnum):
    TOOL_RESULT = "tool_result"
    RETRIEVED_DOCUMENT = "retrieved_document"
    USER_MESSAGE = "user_message"
    SYSTEM_PROMPT = "system_prompt"
    MODEL_OUTPUT = "model_output"
    OTHER = "other"


class Evidence(BaseModel):
    """One item an answer could have drawn on, with its provenance.

    Attributes:
        evidence_id: stable across runs for the same trace (a digest of where it came from).
        kind: what sort of source this is; the policy decides on it.
        name: the tool or retriever name, or None (messages).
        text: the item's full text, never clipped here.
        metadata: document metadata, tool arguments and similar, as the trace had them.
        document_id: the document's id, for retrieved documents that have one.
        url: a source URL where the metadata names one.
        trace_id, span_id: the span that produced it.
        available_at: when it became available (the producing span's end).
        hop_path: the chain of tool calls from the question to it, e.g.
            ``["search_orders(customer=ACME)", "get_refund(order_id=10042)"]``.
        error: True when it came from a tool span that ended in error.
        current_question: True for the user message the answer responds to.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str
    kind: EvidenceKind
    name: str | None = None
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    document_id: str | None = None
    url: str | None = None
    trace_id: str
    span_id: str | None = None
    available_at: datetime | None = None
    hop_path: tuple[str, ...] = ()
    error: bool = False
    current_question: bool = False


class Answer(BaseModel):
    """One answer returned to a user, and everything it could have drawn on, in arrival order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer_id: str
    trace_id: str
    span_id: str
    conversation_id: str | None = None
    question: str | None = None
    text: str
    generated_at: datetime
    question_type: str | None = None
    evidence: tuple[Evidence, ...] = ()


class AnswerSelection(BaseModel):
    """How to find answers when the default rule does not fit (set from a policy's ``[answers]``).

    The default rule: an answer is the final text output of an LLM generation that requested no
    tool calls and is not nested inside a tool call (a sub-agent's output goes back to its caller,
    not to the user). When ``span_names`` or ``attributes`` are given, only LLM spans matching all
    of them are answers (names are shell-style globs; attributes compare as strings).

    ``question_type_attribute`` names a span attribute carrying the question type; it is looked
    up on the answer span, then its ancestors.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    span_names: tuple[str, ...] = ()
    attributes: dict[str, str] = Field(default_factory=dict)
    question_type_attribute: str | None = None
