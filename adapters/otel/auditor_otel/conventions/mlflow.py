"""MLflow Tracing (MLflow 3: ``mlflow.trace``, ``mlflow.<flavor>.autolog()``, the MLflow server).

Follows mlflow-tracing 3.17 (``mlflow/tracing/constant.py`` ``SpanAttributeKey``). MLflow keeps a
span's content in three attributes of its own, each a JSON-encoded value:

- ``mlflow.spanType``: ``LLM``, ``CHAT_MODEL``, ``TOOL``, ``RETRIEVER``, ``AGENT``, ``CHAIN``,
  ``EMBEDDING``, ``PARSER``, ``RERANKER``, ``UNKNOWN`` (or a name of the user's own);
- ``mlflow.spanInputs``: the traced function's arguments by parameter name (``@mlflow.trace``),
  or the request an autologged client sent (``{"model", "messages", "tools", ...}`` for chat);
- ``mlflow.spanOutputs``: the function's return value, or the client's response (an OpenAI
  ``ChatCompletion`` with ``choices[].message``, a Responses API ``output`` list, an Anthropic
  ``Message`` with content blocks, or a plain string).

Quirks handled:

- Every value is JSON *once more*: a span type is ``"\\"TOOL\\""`` and a tool that returns JSON text
  has it as a JSON string of that text. Values read back through MLflow's own client are already
  decoded (``Span.attributes``), so both forms are read.
- A chat span's input messages are the request's ``messages`` (OpenAI or Anthropic shapes; the
  Responses API's ``input`` list or text, with ``instructions`` as the system message); MLflow 2.x
  wrote the whole conversation, the reply last, as ``mlflow.chat.messages``, read when the inputs
  hold none.
- A tool span has no call id; its name is the span's name and its arguments are its inputs (the
  function's parameters by name), so a model's call is matched by name and arguments.
- A retriever's outputs are MLflow ``Document`` objects (``page_content``, ``metadata``, ``id``);
  its query is the inputs' ``query`` (or their only text value).
- The model is ``mlflow.llm.model`` (3.x autolog), else the request's ``model``.
- A model call whose MLflow attributes hold no messages (a span MLflow received over OTLP from
  another instrumentation keeps its own attributes) is read by the GenAI reader's rules.

A span is MLflow's when it carries ``mlflow.spanType``, ``mlflow.spanInputs`` or
``mlflow.spanOutputs`` (:func:`is_mlflow`).
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Document, Message, SpanKind, ToolCall, ToolInvocation

from . import genai
from .common import Extraction, arguments, as_dict, as_str, content_text, loads, strip_id

TYPE = "mlflow.spanType"
INPUTS = "mlflow.spanInputs"
OUTPUTS = "mlflow.spanOutputs"
_CHAT_MESSAGES = "mlflow.chat.messages"  # MLflow 2.x: the whole conversation, the reply last

_KINDS = {
    "LLM": SpanKind.LLM,
    "CHAT_MODEL": SpanKind.LLM,
    "TOOL": SpanKind.TOOL,
    "RETRIEVER": SpanKind.RETRIEVER,
    "AGENT": SpanKind.AGENT,
    "CHAIN": SpanKind.CHAIN,
    "EMBEDDING": SpanKind.EMBEDDING,
}


def is_mlflow(attrs: dict[str, Any]) -> bool:
    return TYPE in attrs or INPUTS in attrs or OUTPUTS in attrs


def _value(value: Any) -> Any:
    """An MLflow attribute's value: its JSON decoded, or the value itself when it is not JSON (read
    back through MLflow's client, or written by hand)."""
    if isinstance(value, str):
        parsed = loads(value)
        return value if parsed is None else parsed
    return value


def _text(value: Any) -> str | None:
    """A decoded value as text: a string as it is, anything else as JSON."""
    return as_str(value)


def _input_messages(inputs: Any) -> list[Message]:
    if not isinstance(inputs, dict):
        return []
    messages: list[Message] = []
    instructions = inputs.get("instructions", inputs.get("system"))
    if isinstance(instructions, str) and instructions.strip():
        messages.append(Message(role="system", content=instructions))
    elif isinstance(instructions, list):  # Anthropic's system blocks
        messages.append(Message(role="system", content=content_text(instructions)))
    raw = inputs.get("messages", inputs.get("input"))
    if isinstance(raw, str) and raw.strip():
        return [*messages, Message(role="user", content=raw)]
    if not isinstance(raw, list):
        return messages
    for entry in raw:
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "function_call_output":  # Responses API: a tool result
            messages.append(
                Message(
                    role="tool",
                    content=content_text(entry.get("output")),
                    tool_call_id=strip_id(entry.get("call_id")),
                )
            )
        elif entry.get("type") == "function_call":
            messages.append(_responses_call(entry))
        elif isinstance(entry.get("role"), str):
            messages.extend(genai.block_messages(entry))
    return messages


def _responses_call(entry: dict[str, Any]) -> Message:
    name = entry.get("name")
    call = ToolCall(
        id=strip_id(entry.get("call_id", entry.get("id"))),
        name=name if isinstance(name, str) else "",
        arguments=arguments(entry.get("arguments")),
    )
    return Message(role="assistant", content="", tool_calls=(call,))


def _output_messages(outputs: Any) -> list[Message]:
    if isinstance(outputs, str):
        return [Message(role="assistant", content=outputs)] if outputs.strip() else []
    if not isinstance(outputs, dict):
        return []
    choices = outputs.get("choices")
    if isinstance(choices, list):  # an OpenAI ChatCompletion
        messages: list[Message] = []
        for choice in choices:
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict):
                messages.append(genai.openai_message({"role": "assistant", **message}))
        return messages
    output = outputs.get("output")
    if isinstance(output, list):  # a Responses API response
        texts: list[str] = []
        replies: list[Message] = []
        for item in output:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "message":
                texts.append(content_text(item.get("content")))
            elif item.get("type") == "function_call":
                replies.append(_responses_call(item))
        if texts:
            replies.insert(0, Message(role="assistant", content="\n".join(texts)))
        return replies
    if isinstance(outputs.get("content"), list):  # an Anthropic Message
        return genai.block_messages({"role": outputs.get("role", "assistant"), **outputs})
    return []


def _chat(attrs: dict[str, Any], inputs: Any, outputs: Any, result: Extraction) -> None:
    result.input_messages = _input_messages(inputs)
    result.output_messages = _output_messages(outputs)
    conversation = _value(attrs.get(_CHAT_MESSAGES))
    if result.input_messages or not isinstance(conversation, list):
        return
    messages = [genai.openai_message(m) for m in conversation if isinstance(m, dict)]
    if messages and messages[-1].role == "assistant":
        result.output_messages = result.output_messages or messages[-1:]
        messages = messages[:-1]
    result.input_messages = messages


def _tool(name: str, inputs: Any, outputs: Any) -> ToolInvocation:
    call_id = strip_id(inputs.get("tool_call_id")) if isinstance(inputs, dict) else None
    return ToolInvocation(
        name=name,
        call_id=call_id,
        arguments=inputs if isinstance(inputs, dict) else arguments(inputs),
        result=_text(outputs),
    )


def _retrieval(inputs: Any, outputs: Any, result: Extraction) -> None:
    if isinstance(inputs, dict):
        query = inputs.get("query")
        if query is None:
            texts = [v for v in inputs.values() if isinstance(v, str)]
            query = texts[0] if len(texts) == 1 else None
        result.query = as_str(query)
    else:
        result.query = as_str(inputs)
    if outputs is None:
        return
    if not isinstance(outputs, list):
        result.notes.append(f"{OUTPUTS} of a retriever is not a list of documents; ignored")
        return
    for index, raw in enumerate(outputs):
        if not isinstance(raw, dict):
            continue
        text = next((raw[k] for k in genai.DOCUMENT_TEXT_KEYS if isinstance(raw.get(k), str)), None)
        if text is None:
            result.notes.append(f"retrieved document {index} has no page_content; dropped")
            continue
        metadata = as_dict(raw.get("metadata")) or {}
        doc_id = strip_id(raw.get("id")) or strip_id(metadata.get("doc_uri")) or strip_id(metadata.get("id"))
        result.documents.append(Document(id=doc_id, text=text, metadata=metadata))


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span written by MLflow Tracing."""
    span_type = _value(attrs.get(TYPE))
    kind = _KINDS.get(span_type, SpanKind.OTHER) if isinstance(span_type, str) else SpanKind.OTHER
    inputs = _value(attrs.get(INPUTS))
    outputs = _value(attrs.get(OUTPUTS))
    result = Extraction(kind=kind)
    if kind == SpanKind.LLM:
        _chat(attrs, inputs, outputs, result)
        if not result.input_messages and not result.output_messages:
            # Spans that came to MLflow over OTLP keep their own attributes (GenAI's, say) beside
            # the type MLflow gave them: read those rather than nothing.
            found = genai.extract(name, attrs, events)
            result.input_messages, result.output_messages = found.input_messages, found.output_messages
            result.notes.extend(found.notes)
    elif kind == SpanKind.TOOL:
        result.tool = _tool(name, inputs, outputs)
    elif kind == SpanKind.RETRIEVER:
        _retrieval(inputs, outputs, result)
    if kind != SpanKind.LLM:
        result.input_text = _text(inputs)
        result.output_text = _text(outputs)
    model = _value(attrs.get("mlflow.llm.model"))
    if not isinstance(model, str) or not model:
        model = inputs.get("model") if isinstance(inputs, dict) else None
    result.model = model if isinstance(model, str) and model else genai.model_of(attrs)
    result.entity_name = name or None
    return result
