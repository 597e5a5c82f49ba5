"""Strands Agents (AWS, PyPI ``strands-agents``): every shape its built-in tracer has written.

Strands' spans are GenAI spans (``gen_ai.system`` or ``gen_ai.provider.name`` = ``strands-agents``)
whose content is in forms of its own, read here on top of :func:`genai.extract`:

- **0.1 series**: ``gen_ai.prompt`` / ``gen_ai.completion`` as span attributes: the messages as a
  JSON list of Bedrock-style messages (``{role, content: [blocks]}``) on model spans, the tool use
  and its result blocks on tool spans (also ``tool.name`` / ``tool.id`` / ``tool.parameters`` /
  ``tool.result``), plain text on the agent span, beside a plain ``system_prompt`` attribute. No
  ``gen_ai.operation.name``: spans are named ``Model invoke``, ``Tool: NAME``, ``Cycle ID`` and the
  agent's name.
- **0.2 to 1.x default** (GenAI conventions v1.36): one span event per input message,
  ``gen_ai.{system,user,assistant}.message`` or ``gen_ai.tool.message`` (``content``: JSON blocks),
  and ``gen_ai.choice`` for the output (``message``: JSON blocks, or the agent's plain text); on a
  tool span ``gen_ai.tool.message`` holds the input and ``gen_ai.choice`` the result blocks.
- **1.x with** ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``: the current GenAI
  attributes, written as span attributes (``gen_ai_span_attributes_only``, read by
  :mod:`genai`) or inside ``gen_ai.client.inference.operation.details`` events (read here), with
  tool results as lists of Bedrock blocks.

Bedrock-style blocks: ``{"text": ...}``, ``{"toolUse": {toolUseId, name, input}}`` and
``{"toolResult": {toolUseId, status, content: [{"text"} | {"json"}]}}``; a message holding tool
results (Bedrock sends them as a user turn) becomes one tool message per result.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Message, SpanKind, ToolCall, ToolInvocation

from . import genai
from .common import Extraction, arguments, as_str, dumps, loads, normalise_role, strip_id

STRANDS = "strands-agents"
_DETAILS = "gen_ai.client.inference.operation.details"
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def is_strands(scope: str, attrs: dict[str, Any]) -> bool:
    """Whether Strands' tracer wrote the span (its system name, or its tracer's scope)."""
    return (
        attrs.get("gen_ai.system") == STRANDS
        or attrs.get("gen_ai.provider.name") == STRANDS
        or scope in (STRANDS, "strands.telemetry.tracer")
    )


def _block_text(block: Any) -> str:
    """A tool result's content block as text (``text``, or ``json`` as JSON)."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    if isinstance(block.get("text"), str):
        return str(block["text"])
    if "json" in block:
        return dumps(block["json"])
    return ""


def blocks_text(value: Any) -> str:
    """A list of result blocks (a JSON text or a list) as text; a plain text as it is."""
    data = loads(value)
    if isinstance(data, list):
        return "\n".join(t for t in (_block_text(b) for b in data) if t)
    if isinstance(data, dict):
        return _block_text(data) or dumps(data)
    return as_str(value) or ""


def bedrock_message(role: str, blocks: list[Any]) -> list[Message]:
    """One Bedrock-style message; its tool results become tool messages of their own."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            calls.append(
                ToolCall(
                    id=strip_id(use.get("toolUseId")),
                    name=as_str(use.get("name")) or "",
                    arguments=arguments(use.get("input")),
                )
            )
        elif isinstance(block.get("toolResult"), dict):
            result = block["toolResult"]
            results.append(
                Message(
                    role="tool",
                    content=blocks_text(result.get("content")),
                    tool_call_id=strip_id(result.get("toolUseId")),
                )
            )
    messages = (
        [Message(role=role, content="\n".join(texts), tool_calls=tuple(calls))] if texts or calls else []
    )
    return [*messages, *results]


def content_messages(role: str, value: Any) -> list[Message]:
    """A ``content`` (JSON list of blocks) or a plain text, as the messages of ``role``."""
    data = loads(value)
    if isinstance(data, list):
        return bedrock_message(role, data)
    text = as_str(value)
    # Strands ends the agent's plain-text output with a newline.
    return [Message(role=role, content=text.strip())] if text and text.strip() else []


def prompt_messages(value: Any, notes: list[str]) -> list[Message]:
    """0.1's ``gen_ai.prompt`` on a model span: a JSON list of ``{role, content}`` messages."""
    data = loads(value)
    if not isinstance(data, list):
        return content_messages("user", value)
    found: list[Message] = []
    for raw in data:
        if isinstance(raw, dict) and isinstance(raw.get("content"), list):
            found.extend(bedrock_message(normalise_role(raw.get("role")), raw["content"]))
        elif isinstance(raw, dict) and isinstance(raw.get("content"), str):
            found.append(Message(role=normalise_role(raw.get("role")), content=raw["content"]))
        else:
            notes.append("gen_ai.prompt: an entry is not a Strands message; skipped")
    return found


def _kind(name: str, attrs: dict[str, Any], found: SpanKind) -> SpanKind:
    if "gen_ai.operation.name" in attrs:
        return found
    # The 0.1 series named its spans instead.
    if name == "Model invoke":
        return SpanKind.LLM
    if name.startswith("Tool: "):
        return SpanKind.TOOL
    if name.startswith("Cycle "):
        return SpanKind.OTHER
    return SpanKind.AGENT if "gen_ai.agent.name" in attrs else found


def _tool(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> ToolInvocation:
    """The tool span's call and result, from whichever of Strands' forms holds them."""
    latest = genai.tool_of(name, attrs)
    tool_name = (
        as_str(attrs.get("gen_ai.tool.name")) or as_str(attrs.get("tool.name")) or name.removeprefix("Tool: ")
    )
    call_id = latest.call_id or strip_id(attrs.get("tool.id"))
    args = latest.arguments if latest.arguments is not None else arguments(attrs.get("tool.parameters"))
    result = attrs.get("gen_ai.tool.call.result", attrs.get("tool.result", attrs.get("gen_ai.completion")))
    for event, values in events:
        if event == "gen_ai.tool.message" and args is None:
            args = arguments(values.get("content"))
        elif event == "gen_ai.choice" and result is None:
            result = values.get("message")
    if args is None and isinstance(loads(attrs.get("gen_ai.prompt")), dict):
        args = arguments(loads(attrs["gen_ai.prompt"]).get("input"))
    return ToolInvocation(
        name=tool_name,
        call_id=call_id,
        arguments=args,
        result=blocks_text(result) if result is not None else None,
    )


def _events(events: list[tuple[str, dict[str, Any]]], result: Extraction) -> None:
    for event, values in events:
        if event in _MESSAGE_EVENTS:
            role = _MESSAGE_EVENTS[event]
            # a tool message's blocks are toolResults (a user turn in Bedrock's terms)
            result.input_messages.extend(
                content_messages("user" if role == "tool" else role, values.get("content"))
            )
        elif event == "gen_ai.choice":
            result.output_messages.extend(content_messages("assistant", values.get("message")))
        elif event == _DETAILS:
            if "gen_ai.system_instructions" in values:
                result.input_messages.extend(
                    genai.system_instructions(values["gen_ai.system_instructions"], result.notes)
                )
            result.input_messages.extend(
                genai.parse_messages(
                    values.get("gen_ai.input.messages"), result.notes, "gen_ai.input.messages"
                )
            )
            result.output_messages.extend(
                genai.parse_messages(
                    values.get("gen_ai.output.messages"), result.notes, "gen_ai.output.messages"
                )
            )


def unflatten(attrs: dict[str, Any], prefix: str) -> Any:
    """``prefix.0.content.0.text``-style keys back into the nested lists and objects they flatten
    (numbered levels become lists, in number order), or None when there is no such key."""
    start = prefix + "."
    keys = [k for k in attrs if k.startswith(start)]
    if not keys:
        return None
    tree: dict[str, Any] = {}
    for key in keys:
        node = tree
        *path, last = key[len(start) :].split(".")
        for part in path:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break  # a key that is both a value and a level: keep the value
            node = child
        else:
            node.setdefault(last, attrs[key])

    def listed(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if node and all(k.isdecimal() for k in node):
            return [listed(node[k]) for k in sorted(node, key=int)]
        return {k: listed(v) for k, v in node.items()}

    return listed(tree)


def _early_attributes(attrs: dict[str, Any], result: Extraction) -> None:
    """0.1's ``system_prompt``, ``gen_ai.prompt`` and ``gen_ai.completion`` span attributes, also
    flattened into numbered keys (``gen_ai.prompt.0.content.0.text``, ``gen_ai.completion.0.text``),
    as some pipelines turn the JSON into attributes."""
    system = as_str(attrs.get("system_prompt"))
    if system:
        result.input_messages.append(Message(role="system", content=system))
    prompt = attrs["gen_ai.prompt"] if "gen_ai.prompt" in attrs else unflatten(attrs, "gen_ai.prompt")
    if prompt is not None:
        result.input_messages.extend(prompt_messages(prompt, result.notes))
    completion = (
        attrs["gen_ai.completion"] if "gen_ai.completion" in attrs else unflatten(attrs, "gen_ai.completion")
    )
    if completion is not None:
        result.output_messages.extend(content_messages("assistant", completion))


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span of Strands' tracer."""
    result = genai.extract(name, attrs, events)
    result.kind = _kind(name, attrs, result.kind)
    if result.kind is SpanKind.TOOL:
        result.tool = _tool(name, attrs, events)
        result.entity_name = result.tool.name
        return result
    _events(events, result)
    if not result.input_messages and not result.output_messages:
        _early_attributes(attrs, result)
    if result.kind is SpanKind.AGENT:
        result.entity_name = as_str(attrs.get("gen_ai.agent.name")) or name
    return result
