"""The OpenTelemetry GenAI semantic conventions, current and older forms.

Follows ``open-telemetry/semantic-conventions-genai`` main (the v1.37+ content attributes, v1.38
tool-call attributes, v1.40 ``retrieval`` spans), and still reads the v1.26-v1.27 span events
``gen_ai.content.prompt`` / ``gen_ai.content.completion`` (OpenAI-format JSON in ``gen_ai.prompt``
/ ``gen_ai.completion``), because old and new forms are emitted side by side.

Also read: ``gen_ai.prompt`` / ``gen_ai.completion`` as span attributes (JSON message lists);
any-agent's ``call_llm`` operation (its answer or tool calls in ``gen_ai.output``, tool
spans' ``gen_ai.tool.args``), pydantic-ai 1.x's ``tool_arguments`` / ``tool_response``, and
Anthropic content blocks inside OpenAI-format messages (:func:`block_messages`).

Tolerated spec inconsistencies: content attributes as JSON strings *or* structured values; a
``tool_call_response`` part's text under ``response`` or ``result``; ids with stray whitespace.
A retrieved document that carries no text (the schema standardises only ``id`` and ``score``) is
dropped with a note, since there is nothing to audit an answer against.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Document, Message, SpanKind, ToolCall, ToolInvocation

from .common import (
    Extraction,
    arguments,
    as_dict,
    as_str,
    content_text,
    loads,
    normalise_role,
    strip_id,
)

OPERATION_KINDS = {
    "chat": SpanKind.LLM,
    "call_llm": SpanKind.LLM,  # any-agent's name for a model call
    "generate_content": SpanKind.LLM,
    "text_completion": SpanKind.LLM,
    "execute_tool": SpanKind.TOOL,
    "retrieval": SpanKind.RETRIEVER,
    "invoke_agent": SpanKind.AGENT,
    "create_agent": SpanKind.AGENT,
    "invoke_workflow": SpanKind.CHAIN,
    "plan": SpanKind.AGENT,
    "embeddings": SpanKind.EMBEDDING,
}

DOCUMENT_TEXT_KEYS = ("content", "text", "page_content")


def kind_for(name: str, attrs: dict[str, Any]) -> SpanKind:
    """The span kind from ``gen_ai.operation.name``, falling back to the span name's first word."""
    operation = attrs.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation in OPERATION_KINDS:
        return OPERATION_KINDS[operation]
    first = name.split(" ", 1)[0] if name else ""
    return OPERATION_KINDS.get(first, SpanKind.OTHER)


def _tool_call(part: dict[str, Any], arguments_key: str) -> ToolCall:
    """A tool call part or block: its id, name and arguments (under ``arguments_key``)."""
    name = part.get("name")
    return ToolCall(
        id=strip_id(part.get("id")),
        name=name if isinstance(name, str) else "",
        arguments=arguments(part.get(arguments_key)),
    )


def _parts_message(raw: dict[str, Any], notes: list[str]) -> list[Message]:
    role = normalise_role(raw.get("role"))
    name = raw.get("name") if isinstance(raw.get("name"), str) else None
    parts = raw.get("parts")
    if not isinstance(parts, list):
        notes.append(f"message with role {role!r} has no list of parts; kept empty")
        parts = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    responses: list[tuple[str | None, str]] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "reasoning") or (kind is None and "content" in part):
            if kind == "reasoning":
                continue  # the model's own reasoning is neither input nor answer text
            texts.append(content_text(part.get("content")))
        elif kind == "tool_call":
            calls.append(_tool_call(part, "arguments"))
        elif kind == "tool_call_response":
            value = part.get("response", part.get("result"))
            responses.append((strip_id(part.get("id")), content_text(value)))
    messages: list[Message] = []
    if texts or calls or not responses:
        messages.append(
            Message(role=role, content="\n".join(t for t in texts if t), name=name, tool_calls=tuple(calls))
        )
    for call_id, text in responses:
        # One message per response, so each tool result keeps its own call id.
        messages.append(
            Message(
                role="tool" if role in ("tool", "user", "unknown") else role,
                content=text,
                name=name,
                tool_call_id=call_id,
            )
        )
    return messages


def _openai_tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    if not isinstance(raw, list):
        return ()
    for call in raw:
        if not isinstance(call, dict):
            continue
        function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
        name = function.get("name")
        calls.append(
            ToolCall(
                id=strip_id(call.get("id")),
                name=name if isinstance(name, str) else "",
                arguments=arguments(function.get("arguments", function.get("args"))),
            )
        )
    return tuple(calls)


def openai_message(raw: dict[str, Any]) -> Message:
    """One OpenAI-format message (``{role, content, tool_calls, tool_call_id, name}``)."""
    name = raw.get("name")
    return Message(
        role=normalise_role(raw.get("role")),
        content=content_text(raw.get("content")),
        name=name if isinstance(name, str) else None,
        tool_calls=_openai_tool_calls(raw.get("tool_calls")),
        tool_call_id=strip_id(raw.get("tool_call_id", raw.get("id") if raw.get("role") == "tool" else None)),
    )


_BLOCK_KINDS = frozenset({"tool_use", "tool_result"})


def block_messages(raw: dict[str, Any]) -> list[Message]:
    """An OpenAI-format message whose content is a list of Anthropic content blocks, as messages:
    ``text`` blocks its text, ``tool_use`` blocks its tool calls, and each ``tool_result`` block a
    tool message of its own (keyed by ``tool_use_id``), as the Messages API sends them in a user
    turn. A message without such blocks is one :func:`openai_message`."""
    content = raw.get("content")
    if not isinstance(content, list) or not any(
        isinstance(b, dict) and b.get("type") in _BLOCK_KINDS for b in content
    ):
        return [openai_message(raw)]
    role = normalise_role(raw.get("role"))
    texts: list[str] = []
    calls = list(_openai_tool_calls(raw.get("tool_calls")))
    results: list[Message] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_use":
            calls.append(_tool_call(block, "input"))  # Anthropic names the arguments input
        elif kind == "tool_result":
            results.append(
                Message(
                    role="tool",
                    content=content_text(block.get("content")),
                    tool_call_id=strip_id(block.get("tool_use_id")),
                )
            )
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    messages = (
        [Message(role=role, content="\n".join(texts), tool_calls=tuple(calls))] if texts or calls else []
    )
    return [*messages, *results]


def parse_messages(value: Any, notes: list[str], what: str) -> list[Message]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON string or structured)."""
    if value is None:
        return []
    data = loads(value)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        notes.append(f"{what} is not a JSON list of messages; ignored")
        return []
    messages: list[Message] = []
    for raw in data:
        if not isinstance(raw, dict):
            notes.append(f"{what}: an entry is not a message object; skipped")
            continue
        if isinstance(raw.get("message"), dict):  # an OpenAI choice
            raw = {**raw["message"], "role": raw["message"].get("role", "assistant")}
        if "parts" in raw:
            messages.extend(_parts_message(raw, notes))
        else:
            messages.extend(block_messages(raw))
    return messages


def system_instructions(value: Any, notes: list[str]) -> list[Message]:
    """``gen_ai.system_instructions``: a list of parts with no role, as one system message."""
    data = loads(value)
    if data is None and isinstance(value, str):
        return [Message(role="system", content=value)]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        notes.append("gen_ai.system_instructions is not a list of parts; ignored")
        return []
    text = "\n".join(content_text(p.get("content")) for p in data if isinstance(p, dict))
    return [Message(role="system", content=text)] if text else []


def _documents(value: Any, notes: list[str]) -> list[Document]:
    data = loads(value)
    if data is None:
        return []
    if not isinstance(data, list):
        notes.append("gen_ai.retrieval.documents is not a list; ignored")
        return []
    docs: list[Document] = []
    textless: list[str] = []
    for raw in data:
        if not isinstance(raw, dict):
            continue
        text = next((raw[k] for k in DOCUMENT_TEXT_KEYS if isinstance(raw.get(k), str)), None)
        doc_id = strip_id(raw.get("id"))
        if text is None:
            textless.append(doc_id or "?")
            continue
        metadata = as_dict(raw.get("metadata")) or {}
        extras = {k: v for k, v in raw.items() if k not in {"id", "score", "metadata", *DOCUMENT_TEXT_KEYS}}
        score = raw.get("score")
        docs.append(
            Document(
                id=doc_id,
                text=text,
                metadata={**extras, **metadata},
                score=float(score)
                if isinstance(score, int | float) and not isinstance(score, bool)
                else None,
            )
        )
    if textless:
        notes.append(
            f"{len(textless)} retrieved document(s) carry no text and were dropped (ids: {', '.join(textless)})"
        )
    return docs


def _events(events: list[tuple[str, dict[str, Any]]], result: Extraction) -> None:
    for name, attrs in events:
        if name == "gen_ai.content.prompt" and "gen_ai.prompt" in attrs:
            result.input_messages.extend(
                parse_messages(attrs["gen_ai.prompt"], result.notes, "gen_ai.prompt")
            )
        elif name == "gen_ai.content.completion" and "gen_ai.completion" in attrs:
            result.output_messages.extend(
                parse_messages(attrs["gen_ai.completion"], result.notes, "gen_ai.completion")
            )


_NAME_KEYS = {
    SpanKind.TOOL: ("gen_ai.tool.name",),
    SpanKind.RETRIEVER: ("gen_ai.data_source.id",),
    SpanKind.AGENT: ("gen_ai.agent.name",),
    SpanKind.CHAIN: ("gen_ai.workflow.name",),
}


def entity_name(name: str, attrs: dict[str, Any], kind: SpanKind) -> str | None:
    """The tool, retriever, agent or workflow name, without the ``{operation} `` span-name prefix."""
    for key in _NAME_KEYS.get(kind, ()):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    operation = attrs.get("gen_ai.operation.name")
    first, _, rest = name.partition(" ")
    if rest and (first == operation or first in OPERATION_KINDS):
        return rest
    return name or None


def model_of(attrs: dict[str, Any]) -> str | None:
    for key in ("gen_ai.response.model", "gen_ai.request.model"):
        value = attrs.get(key)
        if isinstance(value, str) and value and value != "unknown":
            return value
    return None


#: Where a tool span's arguments and result are, in order: the conventions' names, then those of
#: pydantic-ai's instrumentation versions 1-2 (its 1.x default, the names Logfire shows:
#: ``running tool`` spans with ``tool_arguments`` / ``tool_response``).
#: any-agent's ``gen_ai.tool.args`` / ``gen_ai.output`` come last.
_TOOL_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "tool_arguments", "gen_ai.tool.args")
_TOOL_RESULT_KEYS = ("gen_ai.tool.call.result", "tool_response", "gen_ai.output")


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((attrs[key] for key in keys if attrs.get(key) is not None), None)


def tool_of(name: str, attrs: dict[str, Any]) -> ToolInvocation:
    tool_name = as_str(attrs.get("gen_ai.tool.name")) or (name.split(" ", 1)[1] if " " in name else name)
    return ToolInvocation(
        name=tool_name,
        call_id=strip_id(attrs.get("gen_ai.tool.call.id")),
        arguments=arguments(_first(attrs, _TOOL_ARGUMENT_KEYS)),
        result=as_str(_first(attrs, _TOOL_RESULT_KEYS)),
    )


def _prompt_attributes(attrs: dict[str, Any], result: Extraction) -> None:
    """The deprecated ``gen_ai.prompt`` / ``gen_ai.completion`` written as span attributes (a JSON
    list of OpenAI-format messages, as in the old content events), where nothing newer was read."""
    if not result.input_messages and isinstance(loads(attrs.get("gen_ai.prompt")), list):
        result.input_messages.extend(parse_messages(attrs["gen_ai.prompt"], result.notes, "gen_ai.prompt"))
    if not result.output_messages and isinstance(loads(attrs.get("gen_ai.completion")), list):
        result.output_messages.extend(
            parse_messages(attrs["gen_ai.completion"], result.notes, "gen_ai.completion")
        )


def any_agent_output(value: Any) -> list[Message]:
    """any-agent's ``gen_ai.output`` on a model call: a JSON list of ``{"tool.name", "tool.args"}``
    (the calls asked for, without ids), else the reply's text."""
    data = loads(value)
    if isinstance(data, list) and data and all(isinstance(c, dict) and "tool.name" in c for c in data):
        calls = tuple(
            ToolCall(id=None, name=as_str(c.get("tool.name")) or "", arguments=arguments(c.get("tool.args")))
            for c in data
        )
        return [Message(role="assistant", content="", tool_calls=calls)]
    text = as_str(value)
    return [Message(role="assistant", content=text)] if text and text.strip() else []


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span written to the GenAI conventions."""
    result = Extraction(kind=kind_for(name, attrs))
    if "gen_ai.system_instructions" in attrs:
        result.input_messages.extend(system_instructions(attrs["gen_ai.system_instructions"], result.notes))
    result.input_messages.extend(
        parse_messages(attrs.get("gen_ai.input.messages"), result.notes, "gen_ai.input.messages")
    )
    result.output_messages.extend(
        parse_messages(attrs.get("gen_ai.output.messages"), result.notes, "gen_ai.output.messages")
    )
    _events(events, result)
    if result.kind == SpanKind.LLM:
        _prompt_attributes(attrs, result)
    if result.kind == SpanKind.LLM and not result.output_messages and "gen_ai.output" in attrs:
        result.output_messages.extend(any_agent_output(attrs["gen_ai.output"]))
    if result.kind == SpanKind.TOOL:
        result.tool = tool_of(name, attrs)
    if result.kind == SpanKind.RETRIEVER:
        result.query = as_str(attrs.get("gen_ai.retrieval.query.text"))
        result.documents = _documents(attrs.get("gen_ai.retrieval.documents"), result.notes)
    # ``session.id`` is not GenAI, but hand-instrumented services set it beside gen_ai.* attributes.
    result.conversation_id = as_str(attrs.get("gen_ai.conversation.id")) or as_str(attrs.get("session.id"))
    result.model = model_of(attrs)
    result.entity_name = entity_name(name, attrs, result.kind)
    return result
