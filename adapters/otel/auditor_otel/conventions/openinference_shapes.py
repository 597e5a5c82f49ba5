"""What OpenInference-instrumented frameworks put inside the convention's generic attributes.

The OpenInference spec fixes the attribute names (``input.value``, ``output.value``,
``llm.output_messages``); each framework's instrumentation fills them with its own objects. The
shapes read here were seen in captures made by the real packages (``tests/fixtures/frameworks/``):

- **Tool arguments in a call envelope.** ``input.value`` of a TOOL span is the framework's call,
  not the model's arguments: smolagents writes ``{"args": [], "sanitize_inputs_outputs": true,
  "kwargs": {...}}``, LlamaIndex ``{"kwargs": {...}}``, BeeAI ``{"input": {...}, "options": null}``.
  The arguments are the inner object.
- **A model call's reply only in ``output.value``** (no ``llm.output_messages``): agno 1.x's
  instrumentation writes the OpenAI response (``chat.completion``) or, streamed, the list of its
  chunks (``chat.completion.chunk``, each a JSON string); LlamaIndex's completion spans
  (``llm.prompts`` in, no messages) write the completion's text. Read as the assistant message
  they hold (streamed deltas joined, tool-call fragments assembled by index).
- **Streamed replies written one output message per chunk** (BeeAI's instrumentation 0.1.5:
  ``llm.output_messages.N`` = ``"You "``, ``"can "``, ...): assistant messages without tool calls
  that follow one another in one reply are joined into one message, without separators.
- **BeeAI 0.1.5's event spans**: a tool is ``tool.<group>.<name>.<event>`` (attribute ``target``),
  its call's input in ``tool.parameters`` (no ``input.value``), its result on the ``success``
  event's span; a model call's tool calls are only in ``output.value`` (BeeAI messages whose
  content parts are ``{"type": "tool-call", "tool_name", "args", "id"}``). Each span is one
  emitter event, ended when its run closes: it happened at its start.
- **Haystack's chat messages as Python reprs.** Haystack's instrumentation writes a tool
  message into ``llm.input_messages`` with its role alone (no content, no call id); the
  generator's ``input.value`` holds the messages as ``ChatMessage(_role=<ChatRole.TOOL: 'tool'>,
  _content=[ToolCallResult(result='...', origin=ToolCall(tool_name=..., arguments={...},
  id=...), error=False)], ...)`` reprs. They are parsed (with :mod:`ast`, never evaluated) and
  replace the input messages when these lack tool results.
- **DSPy's ChatAdapter fields.** DSPy has the model write its output fields as text,
  ``[[ ## name ## ]]`` then the value, ending with ``[[ ## completed ## ]]``. A ReAct step's
  ``next_tool_name`` / ``next_tool_args`` are the tool call it asks for; otherwise the reply is its
  ``answer`` (or ``response``, ``output``, ...) field, else its last field other than
  ``reasoning``. A DSPy tool's ``output.value`` is its text JSON-encoded (a JSON string).
- **Tool output objects.** LlamaIndex's ``FunctionTool`` writes its ``ToolOutput``
  (``{"blocks": [{"text": ...}], "tool_name", "raw_input", "raw_output", "is_error"}``): the
  result is the blocks' text.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from auditor.trace import Message, ToolCall

from .common import arguments, loads, strip_id

#: Keys of a call envelope besides the arguments object: (the arguments' key, the others allowed).
_ENVELOPES: tuple[tuple[str, frozenset[str]], ...] = (
    ("kwargs", frozenset({"args", "sanitize_inputs_outputs"})),  # smolagents, LlamaIndex
    ("input", frozenset({"options", "context"})),  # BeeAI
)


def unwrap_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """The model's arguments inside a framework's call envelope, or ``args`` as they are."""
    for key, others in _ENVELOPES:
        inner = args.get(key)
        if not isinstance(inner, dict) or not set(args) - {key} <= others:
            continue
        if key == "kwargs" and args.get("args"):
            continue  # positional arguments too: not a plain keyword call
        return inner
    return args


def tool_output_text(output: Any) -> str | None:
    """The result text of a framework's tool output object (LlamaIndex ``ToolOutput``; DSPy's
    JSON string), else None."""
    if isinstance(output, str):
        return output
    if (
        not isinstance(output, dict)
        or not isinstance(output.get("blocks"), list)
        or "tool_name" not in output
    ):
        return None
    texts = [b["text"] for b in output["blocks"] if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(texts) if texts else None


def _chunk(value: Any) -> dict[str, Any] | None:
    parsed = loads(value) if isinstance(value, str) else value
    return parsed if isinstance(parsed, dict) and parsed.get("object") == "chat.completion.chunk" else None


def _calls(raw: Any) -> tuple[ToolCall, ...]:
    calls = []
    for call in raw if isinstance(raw, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            name = function.get("name")
            calls.append(
                ToolCall.trusted(
                    id=strip_id(call.get("id")),
                    name=name if isinstance(name, str) else "",
                    arguments=arguments(function.get("arguments")),
                )
            )
    return tuple(calls)


def _from_chunks(chunks: list[dict[str, Any]]) -> list[Message]:
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(int(part.get("index") or 0), {"function": {"arguments": ""}})
                call["id"] = call.get("id") or part.get("id")
                function = part.get("function") or {}
                if function.get("name"):
                    call["function"]["name"] = function["name"]
                call["function"]["arguments"] += function.get("arguments") or ""
    ordered = [calls[i] for i in sorted(calls)]
    return [Message.trusted(role="assistant", content="".join(text), tool_calls=_calls(ordered))]


def reply_from_output(value: Any) -> list[Message]:
    """The assistant reply an LLM span wrote only as ``output.value``, or [] when it holds none."""
    if not isinstance(value, str) or not value.strip():
        return []
    parsed = loads(value)
    if parsed is None:
        return [Message.trusted(role="assistant", content=value)]  # a completion's plain text
    if isinstance(parsed, dict) and parsed.get("object") == "chat.completion":
        messages = []
        for choice in parsed.get("choices") or []:
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict):
                content = message.get("content")
                messages.append(
                    Message.trusted(
                        role="assistant",
                        content=content if isinstance(content, str) else "",
                        tool_calls=_calls(message.get("tool_calls")),
                    )
                )
        return messages
    if isinstance(parsed, list):
        chunks = [c for c in map(_chunk, parsed) if c is not None]
        if chunks and len(chunks) == len(parsed):
            return _from_chunks(chunks)
    return []


def prompts(value: Any) -> list[Message]:
    """A completion span's ``llm.prompts`` (the prompt strings) as the user turns they were."""
    given = value if isinstance(value, list | tuple) else [value] if isinstance(value, str) else []
    return [Message.trusted(role="user", content=p) for p in given if isinstance(p, str) and p.strip()]


def joined_stream(messages: list[Message]) -> list[Message]:
    """A reply streamed as one output message per chunk, as the one message it is."""
    if len(messages) < 2 or any(m.role != "assistant" or m.tool_calls for m in messages):
        return messages
    return [Message.trusted(role="assistant", content="".join(m.content for m in messages))]


def event_tool_name(attrs: dict[str, Any]) -> str | None:
    """A BeeAI 0.1.5 tool's name from its event span's ``target`` (``tool.custom.NAME.success``)."""
    target = attrs.get("target")
    if not isinstance(target, str) or not target.startswith("tool."):
        return None
    parts = target.split(".")
    return ".".join(parts[2:-1]) or None if len(parts) >= 4 else None


def parameters_as_arguments(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """A call's arguments written as ``tool.parameters`` (no ``input.value``), not a JSON schema."""
    if "input.value" in attrs:
        return None
    given = loads(attrs.get("tool.parameters"))
    if not isinstance(given, dict) or {"properties", "type", "$schema"} & set(given):
        return None
    return given


def calls_in_output(value: Any) -> tuple[ToolCall, ...]:
    """Tool calls held only in ``output.value`` as BeeAI messages' ``tool-call`` content parts."""
    parsed = loads(value)
    calls = []
    for message in parsed if isinstance(parsed, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            if (
                isinstance(part, dict)
                and part.get("type") == "tool-call"
                and isinstance(part.get("tool_name"), str)
            ):
                calls.append(
                    ToolCall.trusted(
                        id=strip_id(part.get("id")),
                        name=part["tool_name"],
                        arguments=arguments(part.get("args")),
                    )
                )
    return tuple(calls)


#: The events BeeAI's emitter names (the last part of a 0.1.5 span's ``target``).
_EVENTS = frozenset({"start", "success", "finish", "error", "retry", "new_token", "update"})


def is_event_span(attrs: dict[str, Any]) -> bool:
    """Whether a span is one BeeAI 0.1.5 emitter event (``target`` = ``<path>.<event>``, ``name`` = event)."""
    target, name = attrs.get("target"), attrs.get("name")
    return isinstance(target, str) and name in _EVENTS and target.endswith("." + str(name))


_ENUM_REPR = re.compile(r"<\w+\.\w+: ('[^']*')>")


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _fields(node: ast.AST, name: str) -> dict[str, ast.expr] | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
        return {k.arg: k.value for k in node.keywords if k.arg}
    return None


def _repr_message(text: str) -> Message | None:
    try:
        tree = ast.parse(_ENUM_REPR.sub(r"\1", text), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    fields = _fields(tree, "ChatMessage")
    parts = fields.get("_content") if fields else None
    if fields is None or not isinstance(parts, ast.List):
        return None
    role = _literal(fields.get("_role"))
    texts: list[str] = []
    calls: list[ToolCall] = []
    call_id: str | None = None
    for part in parts.elts:
        if (found := _fields(part, "TextContent")) is not None:
            texts.append(str(_literal(found.get("text")) or ""))
        elif (found := _fields(part, "ToolCall")) is not None:
            calls.append(_repr_call(found))
        elif (found := _fields(part, "ToolCallResult")) is not None:
            texts.append(str(_literal(found.get("result")) or ""))
            origin = _fields(found["origin"], "ToolCall") if "origin" in found else None
            call_id = _repr_call(origin).id if origin else None
    return Message.trusted(
        role=str(role) if isinstance(role, str) else "unknown",
        content="\n".join(texts),
        tool_calls=tuple(calls),
        tool_call_id=call_id,
    )


def _repr_call(fields: dict[str, ast.expr]) -> ToolCall:
    name = _literal(fields.get("tool_name"))
    return ToolCall.trusted(
        id=strip_id(_literal(fields.get("id"))),
        name=name if isinstance(name, str) else "",
        arguments=arguments(_literal(fields.get("arguments"))),
    )


def repr_messages(input_value: Any) -> list[Message]:
    """Haystack's ``input.value`` messages (``ChatMessage(...)`` reprs), or [] when it holds none."""
    given = loads(input_value)
    found = given.get("messages") if isinstance(given, dict) else None
    if not isinstance(found, list) or not all(
        isinstance(m, str) and m.startswith("ChatMessage(") for m in found
    ):
        return []
    messages = [_repr_message(m) for m in found]
    return [m for m in messages if m is not None] if all(messages) else []


_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]")
#: Output fields that hold a DSPy program's answer, in the order they are tried.
_ANSWER_FIELDS = ("answer", "response", "output", "result", "text")


def adapter_fields(text: str) -> dict[str, str] | None:
    """DSPy ChatAdapter output fields (``[[ ## name ## ]]`` sections), or None when not so written."""
    if "[[ ## completed ## ]]" not in text:
        return None
    pieces = _FIELD.split(text)
    fields = {pieces[i]: pieces[i + 1].strip() for i in range(1, len(pieces) - 1, 2)}
    fields.pop("completed", None)
    return fields or None


def adapter_reply(message: Message) -> Message:
    """A reply written as DSPy ChatAdapter fields, as the tool call or the answer it holds."""
    fields = adapter_fields(message.content) if message.role == "assistant" else None
    if fields is None:
        return message
    if fields.get("next_tool_name"):
        call = ToolCall.trusted(
            id=None, name=fields["next_tool_name"], arguments=arguments(fields.get("next_tool_args"))
        )
        return message.model_copy(update={"content": fields.get("next_thought", ""), "tool_calls": (call,)})
    answer = next((fields[k] for k in _ANSWER_FIELDS if k in fields), None)
    if answer is None:
        rest = [v for k, v in fields.items() if k != "reasoning"]
        answer = rest[-1] if rest else ""
    return message.model_copy(update={"content": answer})
