"""Repair tool spans from the model's side of the conversation, within one trace.

Some conventions lose what the model's messages still hold:

- OpenInference TOOL spans record a one-argument tool's input as the bare value (``"10042"``);
  the model's tool call with the same id has the keyed form (``{"order_id": "10042"}``), which is
  used when its single value matches.
- A tool span without a call id (OpenLLMetry spans without ``kwargs.tool_call_id``, GenAI spans
  without ``gen_ai.tool.call.id``) gets the id of the one ``tool`` message, in a later model
  input, whose content is exactly the tool's result and whose call names the same tool.

Only exact matches are used, so a repair never guesses between candidates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from auditor.trace import Span, SpanKind, ToolCall


def _matches_bare(value: Any, bare: str) -> bool:
    if isinstance(value, str):
        return value == bare
    try:
        return json.dumps(value, ensure_ascii=False) == bare or str(value) == bare
    except (TypeError, ValueError):
        return False


def link_tool_spans(spans: Iterable[Span]) -> list[Span]:
    """The spans, with tool-span arguments and call ids completed where an exact match exists."""
    spans = list(spans)
    calls: dict[str, ToolCall] = {}
    results: dict[str, set[str]] = {}
    for span in spans:
        if span.kind != SpanKind.LLM:
            continue
        for message in (*span.input_messages, *span.output_messages):
            for call in message.tool_calls:
                if call.id:
                    calls.setdefault(call.id, call)
            if message.role == "tool" and message.tool_call_id:
                results.setdefault(message.content, set()).add(message.tool_call_id)
    out: list[Span] = []
    for span in spans:
        tool = span.tool
        if span.kind == SpanKind.TOOL and tool is not None:
            update: dict[str, Any] = {}
            call_id = tool.call_id
            if call_id is None and tool.result is not None:
                candidates = [
                    c for c in results.get(tool.result, set()) if c in calls and calls[c].name == tool.name
                ]
                if len(candidates) == 1:
                    call_id = update["call_id"] = candidates[0]
            found = calls.get(call_id) if call_id else None
            if (
                isinstance(tool.arguments, str)
                and found is not None
                and isinstance(found.arguments, dict)
                and len(found.arguments) == 1
                and _matches_bare(next(iter(found.arguments.values())), tool.arguments)
            ):
                update["arguments"] = found.arguments
            if update:
                span = span.model_copy(update={"tool": tool.model_copy(update=update)})
        out.append(span)
    return out
