"""LangSmith's OpenTelemetry exporter (``langsmith`` with ``tracing_mode="otel"``, scope ``langsmith``).

Each LangSmith run becomes a span with ``langsmith.span.kind`` (``llm``, ``chain``, ``tool``,
``retriever``, ...) and the run's inputs and outputs as JSON in the deprecated GenAI attributes
``gen_ai.prompt`` / ``gen_ai.completion`` (not in the old content events):

- a model call's inputs are the client's request (``messages``, and ``system`` when the client
  took it apart; ``wrap_anthropic`` moves it into ``messages`` as a ``system`` message of text
  blocks), its outputs the provider's reply: an Anthropic message (``content`` blocks, LangSmith's
  OpenAI-style ``tool_calls`` beside them), an OpenAI completion (``choices``) or a message;
- a tool run's inputs are its arguments and its outputs ``{"output": result}``;
- a chain run's inputs and outputs are kept as plain input and output text.

Messages may hold Anthropic content blocks (``tool_use``, ``tool_result``):
:func:`~auditor_otel.conventions.genai.block_messages` reads them.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Message, SpanKind, ToolInvocation

from .common import Extraction, arguments, as_dict, as_str, content_text, dumps, loads, strip_id
from .genai import model_of, parse_messages

KIND_KEY = "langsmith.span.kind"
_KINDS = {
    "llm": SpanKind.LLM,
    "chain": SpanKind.CHAIN,
    "tool": SpanKind.TOOL,
    "retriever": SpanKind.RETRIEVER,
    "embedding": SpanKind.EMBEDDING,
}


def is_langsmith(attrs: dict[str, Any]) -> bool:
    return KIND_KEY in attrs


def _inputs(value: Any, notes: list[str]) -> list[Message]:
    data = as_dict(value)
    if data is None:
        return parse_messages(value, notes, "gen_ai.prompt") if isinstance(loads(value), list) else []
    messages: list[Message] = []
    system = data.get("system")
    if system is not None:
        text = content_text(system)
        if text:
            messages.append(Message(role="system", content=text))
    if "messages" in data:
        messages.extend(parse_messages(data["messages"], notes, "gen_ai.prompt messages"))
    return messages


def _outputs(value: Any, notes: list[str]) -> list[Message]:
    data = as_dict(value)
    if data is None:
        return []
    if isinstance(data.get("choices"), list):
        return parse_messages(data["choices"], notes, "gen_ai.completion choices")
    if "role" in data or "content" in data or "tool_calls" in data:
        # ``content`` null beside ``tool_calls`` is a tool-use reply LangSmith reshaped.
        reply = {**data, "role": data.get("role") or "assistant", "content": data.get("content") or ""}
        return parse_messages([reply], notes, "gen_ai.completion")
    if isinstance(data.get("messages"), list):
        return parse_messages(data["messages"], notes, "gen_ai.completion messages")
    return []


def _result(value: Any) -> str | None:
    data = as_dict(value)
    if data is not None and set(data) == {"output"}:
        return as_str(data["output"])
    return as_str(value)


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span LangSmith's exporter wrote."""
    kind = _KINDS.get(str(attrs.get(KIND_KEY)), SpanKind.OTHER)
    result = Extraction(kind=kind, model=model_of(attrs))
    prompt, completion = attrs.get("gen_ai.prompt"), attrs.get("gen_ai.completion")
    if kind is SpanKind.LLM:
        result.input_messages = _inputs(prompt, result.notes)
        result.output_messages = _outputs(completion, result.notes)
    elif kind is SpanKind.TOOL:
        tool = as_str(attrs.get("gen_ai.tool.name")) or name
        result.tool = ToolInvocation(
            name=tool,
            call_id=strip_id(attrs.get("gen_ai.tool.call.id")),
            arguments=arguments(prompt),
            result=_result(completion),
        )
        result.entity_name = tool
    else:
        result.input_text = prompt if isinstance(prompt, str) else (dumps(prompt) if prompt else None)
        result.output_text = _result(completion)
        result.entity_name = as_str(attrs.get("langsmith.trace.name")) or name
    result.conversation_id = as_str(attrs.get("langsmith.metadata.thread_id")) or as_str(
        attrs.get("gen_ai.conversation.id")
    )
    return result
