"""OpenLLMetry (traceloop/openllmetry) as written by ``opentelemetry-instrumentation-langchain``.

Follows 0.62.4 (new GenAI semconv since 0.55.0, traceloop/openllmetry commit e012bb12) and the
indexed attributes of 0.54.0 and earlier (``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``,
``llm.request.type``). Neither form is part of the OTel spec.

Quirks handled:

- ``traceloop.span.kind`` is ``workflow`` / ``task`` / ``tool`` / ``agent``; a retriever is a
  ``task`` whose ``gen_ai.operation.name`` is ``vector_db_retrieve`` and whose documents exist
  only in ``traceloop.entity.output`` (``{"documents":[{"page_content","metadata"}]}``).
- ``gen_ai.tool.call.arguments`` is the whole ``traceloop.entity.input`` envelope; the arguments
  are its ``input_str``, a Python ``repr`` read with :func:`ast.literal_eval` (never ``eval``).
- ``gen_ai.tool.call.result`` is ``{"output": <lc-serialised ToolMessage>}``; the text is its
  ``kwargs.content`` and the only tool-call id on the tool span is its ``kwargs.tool_call_id``.
- The SDK's decorators (``@workflow`` / ``@task`` / ``@agent`` / ``@tool`` around plain code)
  write the function's arguments as ``{"args": [...], "kwargs": {...}}`` and its return value as
  JSON in ``traceloop.entity.input`` / ``output``: a ``@tool``'s arguments are its ``kwargs``, and
  a returned string is a JSON string (the tool's own JSON text encoded once more), read back as
  the string itself; a ``@task`` called with a list of chat messages (around a model call no
  instrumentation recorded) has them as its input messages.
- The session is ``traceloop.association.properties.session_id`` (or ``thread_id`` /
  ``conversation_id``), or ``gen_ai.conversation.id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from auditor.trace import Message, SpanKind, ToolCall, ToolInvocation

from . import genai, toolmessages
from .common import (
    Extraction,
    arguments,
    as_str,
    content_text,
    indexed,
    lc_document,
    lc_message,
    literal,
    loads,
    normalise_role,
    strip_id,
)

_TRACELOOP_KINDS = {
    "workflow": SpanKind.CHAIN,
    "task": SpanKind.CHAIN,
    "tool": SpanKind.TOOL,
    "agent": SpanKind.AGENT,
}
_LLM_OPERATIONS = {"chat", "llm_request", "completion", "text_completion", "generate_content"}
_SESSION_KEYS = ("session_id", "thread_id", "conversation_id")


def _kind(name: str, attrs: dict[str, Any]) -> SpanKind:
    operation = attrs.get("gen_ai.operation.name")
    if operation == "vector_db_retrieve" or name.startswith("vector_db_retrieve"):
        return SpanKind.RETRIEVER
    if operation in _LLM_OPERATIONS or attrs.get("llm.request.type") in ("chat", "completion"):
        return SpanKind.LLM
    if operation == "execute_tool":
        return SpanKind.TOOL
    declared = _TRACELOOP_KINDS.get(str(attrs.get("traceloop.span.kind", "")))
    if declared is not None:
        # The root ``workflow`` says ``invoke_agent`` even for a plain RAG chain: keep CHAIN.
        return declared
    return genai.kind_for(name, attrs)


def _legacy_messages(attrs: dict[str, Any], prefix: str) -> list[Message]:
    messages: list[Message] = []
    for entry in indexed(attrs, prefix):
        calls = []
        for call in indexed(entry, "tool_calls"):
            name = call.get("name")
            calls.append(  # each value has its field's type (built so): not validated again
                ToolCall.trusted(
                    id=strip_id(call.get("id")),
                    name=name if isinstance(name, str) else "",
                    arguments=arguments(call.get("arguments")),
                )
            )
        role = entry.get("role", "assistant" if prefix == "gen_ai.completion" else None)
        messages.append(  # each value has its field's type (built so): not validated again
            Message.trusted(
                role=normalise_role(role),
                content=content_text(entry.get("content")),
                tool_calls=tuple(calls),
                tool_call_id=strip_id(entry.get("tool_call_id")),
            )
        )
    return messages


class _Entity:
    """A decorated span's ``traceloop.entity.input`` / ``output``, each parsed at most once and
    only when a reader needs its structure: on a workflow's spans they hold the whole state, and
    parsing them per reader (or for nothing) was a third of reading OpenLLMetry spans."""

    _UNPARSED: Any = object()

    def __init__(self, attrs: dict[str, Any]) -> None:
        self.input = attrs.get("traceloop.entity.input")
        self.output = attrs.get("traceloop.entity.output")
        self._input: Any = self._UNPARSED
        self._output: Any = self._UNPARSED

    @property
    def parsed_input(self) -> Any:
        if self._input is self._UNPARSED:
            self._input = loads(self.input)
        return self._input

    @property
    def parsed_output(self) -> Any:
        if self._output is self._UNPARSED:
            self._output = loads(self.output)
        return self._output

    def input_text(self) -> str | None:
        return self._text(self.input, lambda: self.parsed_input)

    def output_text(self) -> str | None:
        return self._text(self.output, lambda: self.parsed_output)

    @staticmethod
    def _text(value: Any, parsed: Callable[[], Any]) -> str | None:
        """The value as text: a JSON string (a decorated function's returned text) is the text it
        encodes; anything else as written. Only a value opening with a quote can be a JSON string."""
        if isinstance(value, str) and value.lstrip()[:1] == '"':
            decoded = parsed()
            if isinstance(decoded, str):
                return decoded
        return as_str(value)

    def call_envelope(self) -> dict[str, Any] | None:
        """The input as the SDK decorators' ``{"args", "kwargs"}`` call envelope, else None."""
        raw = self.input
        # Without a "kwargs" key (or an escape that could spell one) it cannot be the envelope.
        if isinstance(raw, str) and '"kwargs"' not in raw and "\\u" not in raw:
            return None
        parsed = self.parsed_input
        return parsed if isinstance(parsed, dict) and set(parsed) == {"args", "kwargs"} else None


def _envelope_arguments(value: Any, parsed: Any) -> dict[str, Any] | str | None:
    envelope = parsed if isinstance(parsed, dict) else None
    if envelope is None:
        return arguments(value)
    if set(envelope) == {"args", "kwargs"} and isinstance(envelope["kwargs"], dict):
        # The SDK decorators' call envelope: keyword arguments are the tool's arguments.
        args = envelope["args"]
        if not args:
            return envelope["kwargs"]
        return {"args": args, **envelope["kwargs"]} if isinstance(args, list) else envelope
    if "input_str" not in envelope and "inputs" not in envelope:
        return envelope  # already plain arguments (a GenAI-conformant emitter)
    input_str = envelope.get("input_str")
    if isinstance(input_str, str):
        parsed = literal(input_str)
        if isinstance(parsed, dict):
            return parsed
        as_json = loads(input_str)
        if isinstance(as_json, dict):
            return as_json
    inputs = envelope.get("inputs")
    if isinstance(inputs, dict) and inputs:
        return inputs
    return input_str if isinstance(input_str, str) else None


def _decorated_messages(envelope: dict[str, Any] | None) -> list[Message]:
    """The chat messages a decorated function was called with (a ``@task`` around a model call):
    the first argument of the ``{"args", "kwargs"}`` envelope that is a list of role messages."""
    if envelope is None:
        return []
    args = envelope["args"] if isinstance(envelope["args"], list) else []
    kwargs = envelope["kwargs"]
    # JS puts one object argument (here the messages array itself) in ``kwargs``.
    candidates = [*args, *(kwargs.values() if isinstance(kwargs, dict) else [kwargs])]
    for candidate in candidates:
        if isinstance(candidate, list) and candidate and all(_is_message(m) for m in candidate):
            return [genai.openai_message(m) for m in candidate]
    return []


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str)


def _envelope_call_id(parsed: Any) -> str | None:
    kwargs = parsed.get("kwargs") if isinstance(parsed, dict) else None
    return strip_id(kwargs.get("tool_call_id")) if isinstance(kwargs, dict) else None


def _tool(name: str, attrs: dict[str, Any], entity: _Entity) -> ToolInvocation:
    tool_name = (
        as_str(attrs.get("gen_ai.tool.name"))
        or as_str(attrs.get("traceloop.entity.name"))
        or (name.split(" ", 1)[1] if name.startswith("execute_tool ") else name.removesuffix(".tool"))
    )
    raw_args = attrs.get("gen_ai.tool.call.arguments", entity.input)
    parsed_args = entity.parsed_input if raw_args is entity.input else loads(raw_args)
    raw_result = attrs.get("gen_ai.tool.call.result", entity.output)
    parsed = entity.parsed_output if raw_result is entity.output else loads(raw_result)
    call_id = strip_id(attrs.get("gen_ai.tool.call.id")) or _envelope_call_id(parsed_args)
    result = as_str(raw_result)
    if isinstance(parsed, str):  # a decorated function's returned text, JSON-encoded
        result = parsed
    if isinstance(parsed, dict) and "output" in parsed:
        parsed = parsed["output"]
        result = parsed if isinstance(parsed, str) else as_str(parsed)
    message = lc_message(parsed)
    if message is not None:
        result = message["content"]
        call_id = call_id or message["tool_call_id"]
    return ToolInvocation(
        name=tool_name, call_id=call_id, arguments=_envelope_arguments(raw_args, parsed_args), result=result
    )


def _retrieval(attrs: dict[str, Any], entity: _Entity, result: Extraction) -> None:
    envelope = entity.parsed_input if isinstance(entity.parsed_input, dict) else {}
    inputs: dict[str, Any] = envelope["inputs"] if isinstance(envelope.get("inputs"), dict) else {}
    query = inputs.get("query", envelope.get("query", envelope.get("input_str")))
    result.query = as_str(query)
    output = entity.parsed_output if isinstance(entity.parsed_output, dict) else {}
    raw_docs = output.get("documents")
    if raw_docs is None:
        result.documents = genai.extract("retrieval", attrs, []).documents
        return
    if not isinstance(raw_docs, list):
        result.notes.append("traceloop.entity.output documents is not a list; ignored")
        return
    for index, raw in enumerate(raw_docs):
        if not isinstance(raw, dict):
            continue
        document = lc_document(raw)
        if document is None:
            result.notes.append(f"retrieved document {index} has no page_content; dropped")
            continue
        result.documents.append(document)


def _session(attrs: dict[str, Any]) -> str | None:
    for key in _SESSION_KEYS:
        value = as_str(attrs.get(f"traceloop.association.properties.{key}"))
        if value:
            return value
    return as_str(attrs.get("gen_ai.conversation.id"))


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span written by OpenLLMetry (0.62.4 or <=0.54)."""
    base = genai.extract(name, attrs, events)  # gen_ai.input/output.messages on 0.55+ chat spans
    result = Extraction(
        kind=_kind(name, attrs),
        input_messages=base.input_messages,
        output_messages=base.output_messages,
        notes=base.notes,
    )
    if not result.input_messages:
        # Koog's flattened prompts: tool calls as JSON text, tool results without ids.
        result.input_messages = toolmessages.restore(_legacy_messages(attrs, "gen_ai.prompt"))
    if not result.output_messages:
        result.output_messages = toolmessages.restore(_legacy_messages(attrs, "gen_ai.completion"))
    entity = _Entity(attrs)
    result.input_text = entity.input_text()
    result.output_text = entity.output_text()
    if result.kind in (SpanKind.CHAIN, SpanKind.AGENT) and not result.input_messages:
        result.input_messages = _decorated_messages(entity.call_envelope())
    if result.kind == SpanKind.TOOL:
        result.tool = _tool(name, attrs, entity)
    elif result.kind == SpanKind.RETRIEVER:
        _retrieval(attrs, entity, result)
    result.conversation_id = _session(attrs)
    result.model = genai.model_of(attrs)
    entity_name = attrs.get("traceloop.entity.name")
    if result.tool is not None:
        result.entity_name = result.tool.name
    elif isinstance(entity_name, str) and entity_name:
        result.entity_name = entity_name
    else:
        # ``<name>.workflow`` / ``.task`` (<=0.54), ``<ModelClass>.chat``, else the GenAI ``{operation} {name}`` form.
        stem, dot, suffix = name.rpartition(".")
        undecorated = (
            stem if dot and suffix in ("workflow", "task", "agent", "tool", "chat", "completion") else None
        )
        result.entity_name = undecorated or genai.entity_name(name, attrs, result.kind)
    return result
