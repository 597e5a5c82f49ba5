"""Decode LangChain's serialised messages and documents into core types, without LangChain.

A run tree spells one chat message in several ways, depending on who wrote it:

- ``dumpd`` (LangChainTracer): ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
  "kwargs": {"content": ..., "tool_calls": [...], "tool_call_id": ..., "name": ...}}``;
- ``model_dump`` of a message: ``{"type": "ai", "content": ..., "tool_calls": [...]}``;
- ``message_to_dict``: ``{"type": "ai", "data": {...}}``;
- OpenAI style: ``{"role": "assistant", "content": ..., "tool_calls": [{"function": ...}]}``;
- and, from a plain ``BaseTracer``, one flattened prompt string per model call,
  ``"System: ...\\nHuman: ...\\nAI: ...\\nTool: ..."`` (see :func:`split_prompt`).

Guarantees: every function here accepts any JSON value and never raises; roles are normalised
to ``system``, ``user``, ``assistant`` and ``tool`` (a ``ChatMessage`` keeps its own role);
content given as a list of blocks becomes the concatenation of its text blocks, as LangChain's
``BaseMessage.text`` does.
"""

from __future__ import annotations

import ast
import json
import re
import threading
from typing import Any

from auditor.trace import Document, Message, ToolCall, dumps_fast

_ROLE_BY_TYPE = {
    "system": "system",
    "developer": "system",
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}

_ROLE_BY_CLASS = {
    "SystemMessage": "system",
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
}

#: Prefixes ``get_buffer_string`` writes in front of each message of a flattened prompt.
_PROMPT_ROLES = {"System": "system", "Human": "user", "AI": "assistant", "Tool": "tool", "Function": "tool"}
#: What ``json.dumps(value, ensure_ascii=False, default=str)`` builds on every call, built once.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
_PROMPT_SPLIT = re.compile(r"(?:^|\n)(System|Human|AI|Tool|Function): ")


class _Escaped(threading.local):
    """Per thread, how many texts :func:`_prompt_tool_calls` read as a Python literal holding a
    backslash (see :func:`escaped_literals`)."""

    count = 0


_escaped = _Escaped()


def escaped_literals() -> int:
    """How many texts this thread has read as a Python literal holding a backslash, an escape
    that could spell a lone surrogate (in a prompt's tool-call ids and names): a count to compare
    before and after building a run, whose span is vouched for to the repair check only when it
    did not move (``auditor_langchain.records.plain_line``)."""
    return _escaped.count


def content_text(content: Any) -> str:
    """The text of a message's ``content``: a string, or the text blocks of a block list joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif (
                isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
            ):
                parts.append(block["text"])
        return "".join(parts)
    return json_text(content)


def json_text(value: Any, *, fast: bool = False) -> str:
    """A compact JSON rendering of any value (non-JSON values through ``str``).

    ``fast``: the value was read by the fast JSON reader (JSON's types, finite numbers), so the fast
    writer may render it (the same text; :func:`auditor.trace.dumps_fast`).
    """
    if fast:
        try:
            return dumps_fast(value)
        except ValueError:
            pass
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        if isinstance(value, dict | list):
            return f"<{type(value).__name__} of {len(value)} items, not renderable>"
        return str(value)


def lc_fields(value: Any) -> tuple[str | None, dict[str, Any]] | None:
    """Unwrap one serialised LangChain object into ``(class name, fields)``.

    Accepts the ``dumpd`` constructor form, the ``message_to_dict`` ``{"type", "data"}`` form and a
    plain field dict (class name ``None``). Returns ``None`` when ``value`` is not a dict.
    """
    if not isinstance(value, dict):
        return None
    if value.get("lc") is not None and isinstance(value.get("kwargs"), dict):
        ident = value.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else None
        return cls, value["kwargs"]
    data = value.get("data")
    if isinstance(data, dict) and isinstance(value.get("type"), str) and "content" in data:
        return None, {"type": value["type"], **data}
    return None, value


def _role(cls: str | None, fields: dict[str, Any]) -> str:
    if cls is not None:
        base = cls.removesuffix("Chunk")
        if base in _ROLE_BY_CLASS:
            return _ROLE_BY_CLASS[base]
    kind = fields.get("role") if isinstance(fields.get("role"), str) else fields.get("type")
    if isinstance(kind, str):
        kind = kind.removesuffix("Chunk").removesuffix("MessageChunk")
        return _ROLE_BY_TYPE.get(kind.lower(), _ROLE_BY_CLASS.get(kind, kind))
    return "unknown"


def _arguments(value: Any) -> dict[str, Any] | str | None:
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        return parsed if isinstance(parsed, dict) else value
    return json_text(value)


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def tool_calls(fields: dict[str, Any]) -> tuple[ToolCall, ...]:
    """The tool calls on a serialised assistant message.

    Reads LangChain's ``tool_calls`` (``{"name", "args", "id"}``) and ``invalid_tool_calls``
    (arguments kept as the raw string the model wrote); failing both, the OpenAI form
    (``{"id", "function": {"name", "arguments"}}``) in ``tool_calls`` or ``additional_kwargs``.
    """
    calls: list[ToolCall] = []
    extra = fields.get("additional_kwargs")
    given, invalid = fields.get("tool_calls"), fields.get("invalid_tool_calls")
    sources = [given, invalid]
    if (
        not (isinstance(given, list) and given)
        and not (isinstance(invalid, list) and invalid)
        and isinstance(extra, dict)
    ):
        sources.append(extra.get("tool_calls"))
    for source in sources:
        if not isinstance(source, list):
            continue
        for raw in source:
            if not isinstance(raw, dict):
                continue
            function = raw.get("function")
            if isinstance(function, dict):
                name, args = function.get("name"), function.get("arguments")
            else:
                name, args = raw.get("name"), raw.get("args", raw.get("arguments"))
            arguments = _arguments(args)
            # Each value has its field's type (built so) and is not validated again, unless the
            # arguments (read from a prompt's text) have a key that is not a string.
            build = (
                ToolCall.trusted
                if not isinstance(arguments, dict) or all(type(key) is str for key in arguments)
                else ToolCall
            )
            calls.append(build(id=_opt_str(raw.get("id")), name=_opt_str(name) or "", arguments=arguments))
    return tuple(calls)


def decode_message(value: Any) -> Message | None:
    """One serialised message as a :class:`Message`, or ``None`` when ``value`` is not one."""
    if isinstance(value, str):
        return Message(role="user", content=value)
    unwrapped = lc_fields(value)
    if unwrapped is None:
        return None
    cls, fields = unwrapped
    if cls is None and "content" not in fields and "type" not in fields and "role" not in fields:
        return None
    role = _role(cls, fields)
    if cls is not None and cls.removesuffix("Chunk") == "ChatMessage" and isinstance(fields.get("role"), str):
        role = fields["role"]
    return Message.trusted(  # each value has its field's type (built so): not validated again
        role=role,
        content=content_text(fields.get("content")),
        name=_opt_str(fields.get("name")),
        tool_calls=tool_calls(fields) if role == "assistant" else (),
        tool_call_id=_opt_str(fields.get("tool_call_id")),
    )


def decode_messages(values: Any) -> list[Message]:
    """A list of serialised messages; items that are not messages are skipped."""
    if not isinstance(values, list):
        return []
    return [m for m in (decode_message(v) for v in values) if m is not None]


def _prompt_tool_calls(text: str) -> tuple[str, tuple[ToolCall, ...]]:
    """Split ``str(ai_message.tool_calls)``, which ``get_buffer_string`` appends to AI text."""
    start = text.rfind("[{")
    while start != -1:
        tail = text[start:]
        if "\\" in tail:
            _escaped.count += 1
        try:
            parsed = ast.literal_eval(tail)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            start = text.rfind("[{", 0, start)
            continue
        if isinstance(parsed, list) and parsed and all(isinstance(c, dict) and "name" in c for c in parsed):
            return text[:start], tool_calls({"tool_calls": parsed})
        break
    return text, ()


def split_prompt(prompt: str) -> tuple[list[Message], bool]:
    """Split a flattened prompt (``get_buffer_string`` output) back into messages.

    The string keeps roles as prefixes (``System:``, ``Human:``, ``AI:``, ``Tool:``) and the
    assistant's tool calls as a Python repr after its text, but no ``tool_call_id`` on tool
    messages. Those are given back by position: when the tool messages that follow an
    assistant message are exactly as many as its calls, the n-th gets the n-th call's id.
    A message whose content itself contains a line starting ``Human: `` (etc.) is split there:
    the flattened form cannot tell the difference.

    Returns:
        The messages, and whether any tool-call id was inferred by position.
    """
    pieces = _PROMPT_SPLIT.split(prompt)
    messages: list[Message] = []
    if pieces[0].strip():
        messages.append(Message(role="user", content=pieces[0]))
    for prefix, body in zip(pieces[1::2], pieces[2::2], strict=True):
        role = _PROMPT_ROLES[prefix]
        if role == "assistant":
            text, calls = _prompt_tool_calls(body)
            messages.append(Message(role=role, content=text, tool_calls=calls))
        else:
            messages.append(Message(role=role, content=body))
    inferred = False
    for i, message in enumerate(messages):
        if not message.tool_calls:
            continue
        run = []
        for follower in messages[i + 1 :]:
            if follower.role != "tool":
                break
            run.append(follower)
        if len(run) == len(message.tool_calls):
            for offset, call in enumerate(message.tool_calls):
                messages[i + 1 + offset] = run[offset].model_copy(
                    update={"tool_call_id": call.id, "name": call.name}
                )
                inferred = inferred or call.id is not None
    return messages, inferred


def _score(metadata: dict[str, Any]) -> float | None:
    for key in ("score", "relevance_score", "similarity_score", "_score"):
        value = metadata.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def decode_document(value: Any) -> Document | None:
    """One retrieved ``Document`` (plain or ``dumpd`` form), or ``None`` when it is not one.

    The id is the document's ``id``, else ``metadata["id"]``; the score is read from
    ``metadata`` (``score``, ``relevance_score``, ``similarity_score``) when a retriever put it there.
    """
    if isinstance(value, str):
        return Document(text=value)
    unwrapped = lc_fields(value)
    if unwrapped is None:
        return None
    _, fields = unwrapped
    text = fields.get("page_content", fields.get("content", fields.get("text")))
    if text is None:
        return None
    metadata = fields.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    doc_id = fields.get("id")
    if doc_id is None and isinstance(metadata.get("id"), str | int):
        doc_id = metadata["id"]
    return Document.trusted(  # each value has its field's type (built so): not validated again
        id=_opt_str(doc_id), text=content_text(text), metadata=metadata, score=_score(metadata)
    )
