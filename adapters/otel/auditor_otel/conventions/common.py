"""Helpers shared by the convention readers: the extraction record, roles, JSON and indexed keys.

Everything here is lenient: a value of the wrong type yields ``None`` (and, where it matters, a
note), never an exception, because trace content is untrusted.
"""

from __future__ import annotations

import ast
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from auditor.trace import Document, Message, SpanKind, ToolInvocation, loads_fast

_ROLES = {
    "human": "user",
    "user": "user",
    "humanmessage": "user",
    "humanmessagechunk": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "aimessage": "assistant",
    "aimessagechunk": "assistant",
    "system": "system",
    "developer": "system",
    "systemmessage": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
    "toolmessage": "tool",
    "toolmessagechunk": "tool",
    "functionmessage": "tool",
}


@dataclass
class Extraction:
    """What a convention found on one span; ``notes`` are warnings for the problem list."""

    kind: SpanKind = SpanKind.OTHER
    input_messages: list[Message] = field(default_factory=list)
    output_messages: list[Message] = field(default_factory=list)
    tool: ToolInvocation | None = None
    query: str | None = None
    documents: list[Document] = field(default_factory=list)
    input_text: str | None = None
    output_text: str | None = None
    conversation_id: str | None = None
    model: str | None = None
    entity_name: str | None = None
    #: The span marks an event (BeeAI 0.1.5 writes one span per emitter event, ended much later
    #: when its run closes): it happened at its start, which is taken as its end too.
    instant: bool = False
    notes: list[str] = field(default_factory=list)


def normalise_role(role: Any) -> str:
    """``human`` -> ``user``, ``ai`` -> ``assistant`` and so on; unknown roles kept as written."""
    if not isinstance(role, str) or not role.strip():
        return "unknown"
    text = role.strip()
    return _ROLES.get(text.lower(), text)


def strip_id(value: Any) -> str | None:
    """An id as a stripped string (the spec's own example has a leading space), or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value or None


def as_str(value: Any) -> str | None:
    """A scalar as a string; None stays None; containers become JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return dumps(value)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False, default=str)


class _Escaped(threading.local):
    """Per thread, how many texts :func:`loads` and :func:`literal` parsed that hold an escape able
    to spell a UTF-16 surrogate (see :func:`escaped_parses`)."""

    # A class default, so a thread that has parsed nothing reads 0 from the class: a missing
    # attribute read as ``getattr(local, "count", 0)`` raises and catches an AttributeError inside
    # (about 1 us, and it is read twice a span).
    count = 0


_escaped = _Escaped()
#: The Python escapes that can spell a surrogate, or a character that then builds one.
_PY_ESCAPE = re.compile(r"\\[uUxN0-7]")


def escaped_parses() -> int:
    """How many texts this thread has parsed (as JSON or as a Python literal) whose escapes could
    spell a lone surrogate: a count to compare before and after reading a span.

    The OTLP JSON typed reader decodes strictly (invalid UTF-8 and escaped lone surrogates are
    refused), so a span read from it holds a surrogate only if a text parsed again here spelled one;
    when this count did not move, the span's text is valid and the repair check need not look at it.
    """
    return _escaped.count


def _escaped_parse() -> None:
    _escaped.count += 1


def loads(value: Any) -> Any:
    """``value`` parsed as JSON when it is a JSON string; containers pass through; else None."""
    if isinstance(value, dict | list):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or text[0] not in '[{"':
        return None
    if "\\u" in text:  # JSON's only escape that can spell a surrogate (or build one for a later parse)
        _escaped_parse()
    return _parse_json(text)


def _parse_json(text: str) -> Any:
    """``json.loads(text)``, or None where it fails; the fast reader first (attribute values such as
    ``gen_ai.input.messages`` hold long JSON texts), which gives the same value or refuses."""
    try:
        # A lone surrogate cannot be encoded (UnicodeEncodeError is a ValueError): json.loads decides.
        return loads_fast(text.encode())
    except ValueError:
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def literal(value: str) -> Any:
    """A Python literal (OpenLLMetry's ``input_str`` is a ``repr``), or None; never evaluates code."""
    if len(value) > 1_000_000:
        return None
    if _PY_ESCAPE.search(value) is not None:
        _escaped_parse()
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def as_dict(value: Any) -> dict[str, Any] | None:
    parsed = loads(value)
    return parsed if isinstance(parsed, dict) else None


def content_text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a multimodal list joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                text = part.get("text", part.get("content"))
                if isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts)
    return dumps(content)


def arguments(value: Any) -> dict[str, Any] | str | None:
    """Tool-call arguments: a dict when they parse as a JSON object, else the text as given."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    parsed = loads(value)
    if isinstance(parsed, dict):
        return parsed
    return as_str(value)


_INDEXED = re.compile(r"^(\d+)\.(.+)$")


def indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Un-flatten ``prefix.N.rest`` keys into a list ordered by N of ``{rest: value}`` dicts."""
    start = prefix + "."
    # Most spans have no such key: one search of the joined keys says so (a key holding a newline
    # can only make it look for them in vain).
    if "\n" + start not in "\n" + "\n".join(attrs):
        return []
    groups: dict[int, dict[str, Any]] = {}
    size = len(start)
    for key in [key for key in attrs if key.startswith(start)]:
        rest = key[size:]
        number, _, tail = rest.partition(".")
        # _INDEXED's rule without the regex (\d is a decimal digit, as str.isdecimal says), except
        # for a key holding a newline, where ``.`` and ``$`` have their own say.
        if "\n" in rest:
            match = _INDEXED.match(rest)
            if match:
                groups.setdefault(int(match.group(1)), {})[match.group(2)] = attrs[key]
        elif tail and number.isdecimal():
            groups.setdefault(int(number), {})[tail] = attrs[key]
    return [groups[i] for i in sorted(groups)]


def lc_document(raw: Any) -> Document | None:
    """A serialised LangChain ``Document`` (plain, or ``dumpd``'s ``{"lc":1, "kwargs":{...}}``):
    ``page_content`` (or ``content``) as the text, the id from the document or its metadata's
    ``id`` / ``doc_id``; None when ``raw`` holds no text."""
    fields = raw.get("kwargs", raw) if isinstance(raw, dict) else None
    if not isinstance(fields, dict):
        return None
    text = fields.get("page_content", fields.get("content"))
    if not isinstance(text, str):
        return None
    metadata = as_dict(fields.get("metadata")) or {}
    doc_id = strip_id(fields.get("id")) or strip_id(metadata.get("id")) or strip_id(metadata.get("doc_id"))
    return Document(id=doc_id, text=text, metadata=metadata)


def lc_message(obj: Any) -> dict[str, Any] | None:
    """The fields of a serialised LangChain message, whichever serialisation wrote it.

    Accepts ``dumpd`` form (``{"lc":1,"type":"constructor","id":[..., "ToolMessage"],
    "kwargs":{...}}``), ``message_to_dict`` form (``{"type":"tool","data":{...}}``) and a plain
    ``{"content":..., "type":...}`` dict. Returns a dict with ``role``, ``content`` (text),
    ``tool_call_id``, ``name`` and ``tool_calls`` (raw), or None when ``obj`` is not a message.
    """
    if not isinstance(obj, dict):
        return None
    role: Any = None
    fields: Any = None
    if obj.get("lc") == 1 and isinstance(obj.get("kwargs"), dict):
        fields = obj["kwargs"]
        ident = obj.get("id")
        role = fields.get("type") or (ident[-1] if isinstance(ident, list) and ident else None)
    elif isinstance(obj.get("data"), dict) and "content" in obj["data"]:
        fields = obj["data"]
        role = obj.get("type") or fields.get("type")
    elif "content" in obj:
        fields = obj
        role = obj.get("type") or obj.get("role")
    if not isinstance(fields, dict):
        return None
    return {
        "role": normalise_role(role),
        "content": content_text(fields.get("content")),
        "tool_call_id": strip_id(fields.get("tool_call_id")),
        "name": fields.get("name") if isinstance(fields.get("name"), str) else None,
        "tool_calls": fields.get("tool_calls"),
    }
