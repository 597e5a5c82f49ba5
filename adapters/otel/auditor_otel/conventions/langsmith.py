"""LangSmith's own OpenTelemetry exporter: the ``langsmith`` SDK with ``tracing_mode="otel"`` or
``"hybrid"`` (``LANGSMITH_OTEL_ENABLED``), one span per run, instrumentation scope ``langsmith``.

Follows ``langsmith`` 0.14 (``langsmith/_internal/otel/_otel_exporter.py``). The run's inputs and
outputs are written whole, as JSON, in the deprecated GenAI span attributes ``gen_ai.prompt`` /
``gen_ai.completion`` (not the messages alone, and not in events):

- ``langsmith.span.kind`` is the run type: ``llm`` (``gen_ai.operation.name`` ``chat``), ``tool``
  (``execute_tool``, ``gen_ai.tool.name``), ``retriever`` (written as ``embeddings``, so the run type
  decides), ``chain``, ``embedding``, ``prompt`` / ``parser``;
- an ``llm`` span's prompt is the request (``{"messages": [...], "model", "tools"}`` from
  ``wrap_openai`` / ``wrap_anthropic``, whose messages may hold Anthropic ``tool_use`` /
  ``tool_result`` / text blocks, or LangChain's ``{"messages": [[lc messages]]}``), its completion
  the response (an OpenAI chat completion's ``choices[0].message``, LangChain's ``generations``, an
  Anthropic message with ``role`` ``assistant``, or a ``message`` / ``output``);
- a ``tool`` span's prompt is its arguments (``{"input": ...}`` for one value), its completion
  ``{"output": text or a serialised ToolMessage}``;
- a ``retriever``'s completion is ``{"documents": [{"page_content", "metadata"}]}``;
- a chain's prompt and completion are kept as its input and output text (one key: its value).

The conversation is the run metadata's ``session_id`` / ``thread_id`` / ``conversation_id``
(``langsmith.metadata.*``); ``langsmith.trace.session_id`` is the LangSmith project, not one.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Document, Message, SpanKind, ToolInvocation

from . import genai
from .common import (
    Extraction,
    arguments,
    as_dict,
    as_str,
    content_text,
    lc_document,
    lc_message,
    loads,
    strip_id,
)

SCOPE = "langsmith"
KIND_ATTRIBUTE = "langsmith.span.kind"
_KINDS = {
    "llm": SpanKind.LLM,
    "tool": SpanKind.TOOL,
    "retriever": SpanKind.RETRIEVER,
    "chain": SpanKind.CHAIN,
    "embedding": SpanKind.EMBEDDING,
}
_SESSION_KEYS = ("session_id", "thread_id", "conversation_id")


def is_langsmith(scope: str, attrs: dict[str, Any]) -> bool:
    """Whether LangSmith's exporter wrote the span (its scope, or its run-type attribute)."""
    return scope == SCOPE or KIND_ATTRIBUTE in attrs


def _message(raw: Any, notes: list[str]) -> Message | None:
    """An OpenAI-format message (``wrap_openai``), else a serialised LangChain message."""
    if isinstance(raw, dict) and "role" in raw and "lc" not in raw:
        return genai.openai_message(raw)
    fields = lc_message(raw)
    if fields is None:
        notes.append("gen_ai.prompt: a message is neither OpenAI's nor LangChain's; skipped")
        return None
    return Message(
        role=fields["role"],
        content=fields["content"],
        name=fields["name"],
        tool_calls=genai.openai_message({"tool_calls": fields["tool_calls"]}).tool_calls,
        tool_call_id=fields["tool_call_id"],
    )


def _input_messages(inputs: dict[str, Any], notes: list[str]) -> list[Message]:
    raw = inputs.get("messages")
    if isinstance(raw, list) and raw and isinstance(raw[0], list):
        raw = raw[0]  # LangChain's batch of message lists: the first (and, in a chat run, only) one
    if not isinstance(raw, list):
        return []
    messages: list[Message] = []
    for item in raw:
        if isinstance(item, dict) and "role" in item and "lc" not in item:
            # OpenAI-format, its content possibly Anthropic blocks (``wrap_anthropic``).
            messages.extend(genai.block_messages(item))
        elif (message := _message(item, notes)) is not None:
            messages.append(message)
    return messages


def _output_messages(outputs: dict[str, Any], notes: list[str]) -> list[Message]:
    choices = outputs.get("choices")
    if isinstance(choices, list):
        found = [c["message"] for c in choices if isinstance(c, dict) and isinstance(c.get("message"), dict)]
        if found:
            return [_assistant(m, notes) for m in found[:1]]
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0][0] if isinstance(generations[0], list) and generations[0] else generations[0]
        if isinstance(first, dict):
            if first.get("message") is not None:
                return [_assistant(first["message"], notes)]
            return [Message(role="assistant", content=content_text(first.get("text")))]
    if outputs.get("role") == "assistant":
        # The reply itself (``wrap_anthropic``: an Anthropic message, its ``content`` blocks, or
        # null beside the OpenAI-style ``tool_calls`` LangSmith adds for a tool-use reply).
        reply = {**outputs, "content": outputs.get("content") or ""}
        return [m for m in genai.block_messages(reply) if m.role == "assistant"] or [
            genai.openai_message(reply)
        ]
    for key in ("message", "output"):
        value = outputs.get(key)
        if isinstance(value, dict):
            return [_assistant(value, notes)]
        if isinstance(value, str):
            return [Message(role="assistant", content=value)]
    return []


def _assistant(raw: Any, notes: list[str]) -> Message:
    message = _message(raw, notes)
    return (message or Message(role="assistant", content="")).model_copy(update={"role": "assistant"})


def _tool(name: str, attrs: dict[str, Any]) -> ToolInvocation:
    inputs = loads(attrs.get("gen_ai.prompt"))
    if isinstance(inputs, dict) and set(inputs) == {"input"}:
        inputs = inputs["input"]
    outputs = as_dict(attrs.get("gen_ai.completion"))
    output: Any = outputs.get("output", outputs) if outputs is not None else attrs.get("gen_ai.completion")
    call_id = strip_id(attrs.get("gen_ai.tool.call.id"))
    fields = lc_message(output) if isinstance(output, dict) else None  # a ToolMessage
    if fields is not None:
        result: str | None = fields["content"]
        call_id = call_id or fields["tool_call_id"]
    else:
        result = output if isinstance(output, str) else as_str(output)
    return ToolInvocation(
        name=as_str(attrs.get("gen_ai.tool.name")) or as_str(attrs.get("langsmith.trace.name")) or name,
        call_id=call_id,
        arguments=arguments(inputs) if not isinstance(inputs, dict) else inputs,
        result=result,
    )


def _documents(outputs: dict[str, Any]) -> list[Document]:
    docs: list[Document] = []
    raw_docs = outputs.get("documents", outputs.get("output"))
    for raw in raw_docs if isinstance(raw_docs, list) else []:
        document = lc_document(raw)
        if document is not None:
            docs.append(document)
    return docs


def _plain(value: Any) -> str | None:
    """A chain's inputs or outputs as text: the one key's value, else the JSON."""
    parsed = loads(value)
    if isinstance(parsed, dict) and len(parsed) == 1:
        return as_str(next(iter(parsed.values())))
    return as_str(value)


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span written by LangSmith's OpenTelemetry exporter."""
    run_type = str(attrs.get(KIND_ATTRIBUTE, ""))
    kind = _KINDS.get(run_type, SpanKind.OTHER if run_type else genai.kind_for(name, attrs))
    result = Extraction(kind=kind)
    inputs = as_dict(attrs.get("gen_ai.prompt")) or {}
    outputs = as_dict(attrs.get("gen_ai.completion")) or {}
    if kind is SpanKind.LLM:
        result.input_messages = _input_messages(inputs, result.notes)
        result.output_messages = _output_messages(outputs, result.notes)
    elif kind is SpanKind.TOOL:
        result.tool = _tool(name, attrs)
    elif kind is SpanKind.RETRIEVER:
        query = inputs.get("query", inputs.get("input"))
        result.query = query if isinstance(query, str) else None
        result.documents = _documents(outputs)
    else:
        result.input_text = _plain(attrs.get("gen_ai.prompt"))
        result.output_text = _plain(attrs.get("gen_ai.completion"))
    for key in _SESSION_KEYS:
        value = as_str(attrs.get(f"langsmith.metadata.{key}"))
        if value:
            result.conversation_id = value
            break
    result.conversation_id = result.conversation_id or as_str(attrs.get("gen_ai.conversation.id"))
    result.model = genai.model_of(attrs)
    result.entity_name = (
        result.tool.name if result.tool else as_str(attrs.get("langsmith.trace.name")) or name
    )
    return result
