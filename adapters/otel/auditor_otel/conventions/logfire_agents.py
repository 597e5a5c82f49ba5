"""Logfire's spans of the OpenAI Agents SDK (``logfire.instrument_openai_agents``, scope
``logfire.openai_agents``).

Logfire turns each SDK span into an OpenTelemetry span named by its message template and puts the
SDK span's data in plain attributes (not ``gen_ai.*``):

- a model call, ``Chat completion with {gen_ai.request.model!r}``: ``input`` (the OpenAI
  Chat Completions messages sent, the system prompt first) and ``output`` (the messages returned);
- a tool call, ``Function: {name}``: ``name``, ``input`` (the arguments as JSON) and ``output``;
- ``Agent run: {name!r}`` an agent span, ``OpenAI Agents trace: {name}`` / ``Task: ...`` /
  ``Turn {turn} ...`` spans around the run (chain spans with nothing to read).

The Responses API's spans (``Responses API with ...``) hold the response object instead; they
are not read here.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import SpanKind, ToolInvocation

from .common import Extraction, arguments, as_str
from .genai import model_of, parse_messages

SCOPE = "logfire.openai_agents"


def is_logfire_agents(scope: str) -> bool:
    return scope == SCOPE


def _template(name: str, attrs: dict[str, Any]) -> str:
    template = attrs.get("logfire.msg_template")
    return template if isinstance(template, str) else name


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span Logfire wrote for the OpenAI Agents SDK."""
    template = _template(name, attrs)
    result = Extraction(model=model_of(attrs))
    if template.startswith("Chat completion"):
        result.kind = SpanKind.LLM
        result.input_messages = parse_messages(attrs.get("input"), result.notes, "input")
        result.output_messages = parse_messages(attrs.get("output"), result.notes, "output")
    elif template.startswith("Function:"):
        result.kind = SpanKind.TOOL
        tool = as_str(attrs.get("name")) or name.removeprefix("Function: ")
        result.tool = ToolInvocation(
            name=tool, arguments=arguments(attrs.get("input")), result=as_str(attrs.get("output"))
        )
        result.entity_name = tool
    elif template.startswith("Agent run"):
        result.kind = SpanKind.AGENT
        result.entity_name = as_str(attrs.get("name"))
    elif template.startswith(("OpenAI Agents trace", "Task:", "Turn ")):
        result.kind = SpanKind.CHAIN
    return result
