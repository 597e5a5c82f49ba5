"""Google ADK's own tracer (``google.adk.telemetry``, instrumentation scope ``gcp.vertex.agent``).

Follows google-adk 2.13: the GenAI conventions (``invoke_workflow`` > ``invoke_agent`` >
``generate_content`` / ``execute_tool``; content only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for it), read by :mod:`.genai`, with
one ADK habit undone: a function tool that returns anything but a dict has its value wrapped as
``{"result": value}`` (``FunctionTool``), in ``gen_ai.tool.call.result`` and in the
``tool_call_response`` parts of later prompts. The tool's own text is the wrapped value, so an
error payload the tool returned (``{"error": ...}``) reads as one, and the span's result and the
prompt's copy are the same text.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Message, ToolInvocation

from . import genai
from .common import Extraction, loads

SCOPE = "gcp.vertex.agent"


def is_adk(scope: str) -> bool:
    return scope == SCOPE


def unwrap_result(text: str | None) -> str | None:
    """The value of ADK's ``{"result": value}`` wrapper (a string, as the tool returned it)."""
    if text is None or not text.lstrip().startswith("{"):
        return text
    data = loads(text)
    if isinstance(data, dict) and len(data) == 1 and isinstance(data.get("result"), str):
        return str(data["result"])
    return text


def _unwrap_message(message: Message) -> Message:
    if message.role != "tool":
        return message
    content = unwrap_result(message.content)
    return message if content == message.content else message.model_copy(update={"content": content})


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one ADK span: the GenAI reading, with function results unwrapped."""
    result = genai.extract(name, attrs, events)
    result.input_messages = [_unwrap_message(m) for m in result.input_messages]
    if result.tool is not None:
        tool = result.tool
        result.tool = ToolInvocation(
            name=tool.name, call_id=tool.call_id, arguments=tool.arguments, result=unwrap_result(tool.result)
        )
    return result
