"""The Vercel AI SDK's telemetry (npm ``ai``, ``experimental_telemetry``): the ``ai.*`` attributes.

Every span carries ``ai.operationId``; the ones read here:

- ``ai.generateText`` / ``ai.streamText`` / ``ai.generateObject`` / ``ai.streamObject``: the outer
  call, a whole agent loop of model steps and tool executions (``ai.prompt`` = ``{system, prompt,
  messages}``, ``ai.response.text``). Read as an *agent* span: its text repeats its last step's,
  so the answer is the step's, once per generation, and the step's start is the answer's causal cut
  (the tools ran before it, but after the outer call began).
- ``ai.generateText.doGenerate`` / ``ai.streamText.doStream`` (and the ``Object`` variants): one
  model call, an *LLM* span (``ai.prompt.messages`` in the SDK's own message format,
  ``ai.response.text``, ``ai.response.toolCalls``, ``ai.response.object``).
- ``ai.toolCall``: one tool execution, a *tool* span (``ai.toolCall.name`` / ``id`` / ``args`` /
  ``result``).
- ``ai.embed`` / ``ai.embedMany`` and their ``doEmbed``: embeddings.

The SDK's message format (LanguageModelV2/V3 prompts; v4 named the same fields ``args`` and
``result``): content as a string or a list of parts, ``text``, ``reasoning``, ``file``,
``tool-call`` (``toolCallId``, ``toolName``, ``input``) and ``tool-result`` (``toolCallId``,
``toolName``, ``output`` = ``{type: text | json | error-text | error-json | content, value}``).
The ``gen_ai.*`` attributes the SDK sets beside these hold no content and are not read.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Message, SpanKind, ToolCall, ToolInvocation

from .common import Extraction, arguments, as_str, content_text, dumps, loads, normalise_role, strip_id

_OUTER = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
_STEPS = tuple(f"{outer}.{inner}" for outer in _OUTER for inner in ("doGenerate", "doStream"))
_EMBEDDINGS = ("ai.embed", "ai.embedMany", "ai.embed.doEmbed", "ai.embedMany.doEmbed")


def is_vercel_ai(attrs: dict[str, Any]) -> bool:
    """Whether the span was written by the Vercel AI SDK (every one of its spans has the id)."""
    operation = attrs.get("ai.operationId")
    return isinstance(operation, str) and operation.startswith("ai.")


def _kind(operation: str) -> SpanKind:
    if operation in _STEPS:
        return SpanKind.LLM
    if operation in _OUTER:
        return SpanKind.AGENT
    if operation == "ai.toolCall":
        return SpanKind.TOOL
    if operation in _EMBEDDINGS:
        return SpanKind.EMBEDDING
    return SpanKind.OTHER


def _tool_output(output: Any) -> str:
    """A ``tool-result`` part's output (``{type, value}`` since v5, the bare result before)."""
    if isinstance(output, dict) and "type" in output and "value" in output:
        value = output["value"]
        if output["type"] == "content" and isinstance(value, list):
            return content_text(value)
        return value if isinstance(value, str) else dumps(value)
    return output if isinstance(output, str) else dumps(output)


def _call(part: dict[str, Any]) -> ToolCall:
    name = part.get("toolName")
    return ToolCall(
        id=strip_id(part.get("toolCallId")),
        name=name if isinstance(name, str) else "",
        arguments=arguments(part.get("input", part.get("args"))),
    )


def sdk_message(raw: dict[str, Any]) -> list[Message]:
    """One message of the SDK's format; a tool message gives one message per tool result."""
    role = normalise_role(raw.get("role"))
    content = raw.get("content")
    if not isinstance(content, list):
        return [Message(role=role, content=content_text(content))]
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "tool-call":
            calls.append(_call(part))
        elif kind == "tool-result":
            name = part.get("toolName")
            results.append(
                Message(
                    role="tool",
                    content=_tool_output(part.get("output", part.get("result"))),
                    name=name if isinstance(name, str) else None,
                    tool_call_id=strip_id(part.get("toolCallId")),
                )
            )
    messages = (
        [Message(role=role, content="\n".join(texts), tool_calls=tuple(calls))] if texts or calls else []
    )
    return [*messages, *results] if messages or results else [Message(role=role)]


def messages_of(value: Any, notes: list[str], what: str) -> list[Message]:
    """A JSON list of SDK-format messages."""
    data = loads(value)
    if data is None:
        return []
    if not isinstance(data, list):
        notes.append(f"{what} is not a JSON list of messages; ignored")
        return []
    found: list[Message] = []
    for raw in data:
        if isinstance(raw, dict):
            found.extend(sdk_message(raw))
    return found


def _outer_input(value: Any, notes: list[str]) -> list[Message]:
    """``ai.prompt``: ``{system, prompt, messages}``, ``prompt`` a text or a list of messages."""
    data = loads(value)
    if not isinstance(data, dict):
        if value is not None:
            notes.append("ai.prompt is not a JSON object; ignored")
        return []
    found: list[Message] = []
    system = data.get("system")
    if isinstance(system, str) and system:
        found.append(Message(role="system", content=system))
    for key in ("prompt", "messages"):
        given = data.get(key)
        if isinstance(given, str):
            found.append(Message(role="user", content=given))
        elif isinstance(given, list):
            found.extend(messages_of(given, notes, f"ai.prompt {key}"))
    return found


def _output(attrs: dict[str, Any], notes: list[str]) -> list[Message]:
    """The model's reply: its text (or object) and the tool calls it asked for."""
    text = as_str(attrs.get("ai.response.text"))
    if text is None and "ai.response.object" in attrs:
        text = as_str(attrs["ai.response.object"])
    calls: list[ToolCall] = []
    raw_calls = loads(attrs.get("ai.response.toolCalls"))
    if isinstance(raw_calls, list):
        calls = [_call(c) for c in raw_calls if isinstance(c, dict)]
    elif "ai.response.toolCalls" in attrs:
        notes.append("ai.response.toolCalls is not a JSON list; ignored")
    if text is None and not calls:
        return []
    return [Message(role="assistant", content=text or "", tool_calls=tuple(calls))]


def _model(attrs: dict[str, Any]) -> str | None:
    for key in ("ai.response.model", "ai.model.id", "gen_ai.response.model"):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span of the Vercel AI SDK."""
    operation = str(attrs.get("ai.operationId"))
    result = Extraction(kind=_kind(operation), model=_model(attrs))
    if result.kind is SpanKind.LLM:
        result.input_messages = messages_of(
            attrs.get("ai.prompt.messages"), result.notes, "ai.prompt.messages"
        )
        result.output_messages = _output(attrs, result.notes)
    elif result.kind is SpanKind.AGENT:
        result.input_messages = _outer_input(attrs.get("ai.prompt"), result.notes)
        result.output_messages = _output(attrs, result.notes)
        result.entity_name = as_str(attrs.get("ai.telemetry.functionId")) or operation
    elif result.kind is SpanKind.TOOL:
        tool_name = as_str(attrs.get("ai.toolCall.name")) or name
        result.tool = ToolInvocation(
            name=tool_name,
            call_id=strip_id(attrs.get("ai.toolCall.id")),
            arguments=arguments(attrs.get("ai.toolCall.args", attrs.get("ai.toolCall.input"))),
            result=as_str(attrs.get("ai.toolCall.result", attrs.get("ai.toolCall.output"))),
        )
        result.entity_name = tool_name
    return result
