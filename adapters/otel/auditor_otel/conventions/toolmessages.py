"""Tool calls written as message text, and tool results that carry no call id.

Some exporters flatten a chat into numbered ``role`` / ``content`` attributes and keep nothing
else: JetBrains Koog's Langfuse exporter writes an assistant's tool calls as the OpenAI-style
list in JSON *text* (``[{"function": {"name", "arguments"}, "id", "type": "function"}]``, role
``tool`` in the prompt, ``assistant`` in the completion), and its tool results without their
``tool_call_id``. Read as written, the tool-call text would be an answer and the results would
belong to no call. This module restores both:

- :func:`calls_in_text`: a message whose whole text is such a list (or one such object) is an
  assistant message asking for those calls, with no text of its own, so never an answer;
- :func:`pair_results`: a tool message without an id takes the id (and name) of the call it
  answers: the calls asked for before it, in order, skipping those already answered; where the
  message names its tool, the first unanswered call of that name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from auditor.trace import Message, ToolCall

from .common import arguments, loads, strip_id

#: Roles under which a flattened prompt writes an assistant's tool calls (Koog: ``tool``).
_CALL_ROLES = frozenset({"assistant", "tool", "unknown"})


def _call(raw: Any) -> ToolCall | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        return None
    if raw.get("type", "function") != "function":
        return None
    name = raw["function"].get("name")
    if not isinstance(name, str) or not name:
        return None
    return ToolCall(
        id=strip_id(raw.get("id")), name=name, arguments=arguments(raw["function"].get("arguments"))
    )


def calls_in_text(content: str) -> tuple[ToolCall, ...]:
    """The tool calls a message's text spells as OpenAI-style JSON, or ``()`` if it is not that."""
    text = content.strip()
    if not text.startswith(("[{", "{")):
        return ()
    data = loads(text)
    items = data if isinstance(data, list) else [data]
    calls = [_call(item) for item in items]
    if not calls or any(c is None for c in calls):
        return ()
    return tuple(c for c in calls if c is not None)


def as_call_message(message: Message) -> Message:
    """``message`` as an assistant tool-call message when its text is tool-call JSON, else as is."""
    if message.role not in _CALL_ROLES or message.tool_calls or message.tool_call_id:
        return message
    calls = calls_in_text(message.content)
    if not calls:
        return message
    return Message(role="assistant", content="", tool_calls=calls)


def pair_results(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each id-less tool result given the id and name of the call it answers."""
    pending: list[ToolCall] = []
    paired: list[Message] = []
    for message in messages:
        pending.extend(message.tool_calls)
        if message.role == "tool" and message.tool_call_id:
            pending = [c for c in pending if c.id != message.tool_call_id]
        elif message.role == "tool" and pending:
            named = [c for c in pending if message.name and c.name == message.name]
            call = (named or pending)[0]
            pending.remove(call)
            if call.id:
                message = message.model_copy(
                    update={"tool_call_id": call.id, "name": message.name or call.name}
                )
        paired.append(message)
    return paired


def restore(messages: Sequence[Message]) -> list[Message]:
    """:func:`as_call_message` on every message, then :func:`pair_results`."""
    return pair_results([as_call_message(m) for m in messages])
