"""The OpenInference semantic conventions (Arize-ai/openinference ``spec/semantic_conventions.md``,
``openinference-semantic-conventions`` 0.1.42), as written by ``openinference-instrumentation-langchain``
0.1.80.

Quirks handled (observed in real captures):

- ``openinference.span.kind`` is ``AGENT`` whenever the LangChain run name contains "agent". That
  is kept for chains and graph nodes, but a span that carries tool, model or retrieval attributes
  gets the exact kind (TOOL, LLM, RETRIEVER), since evidence depends on it.
- TOOL spans: ``input.value`` is the *bare* argument when the tool has one argument; when the
  tool's ``tool.parameters`` schema names exactly one property it is keyed by that name. The result
  is the ToolMessage content inside ``output.value`` (``{"type":"tool","data":{...}}``), which also
  holds the only tool-call id.
- Frameworks' call envelopes and tool output objects inside ``input.value`` / ``output.value``
  are read by :mod:`.openinference_shapes`.
- RETRIEVER spans: ``retrieval.documents.N.document.id`` is never set by the LangChain
  instrumentation; ids are taken from the document metadata, or from ``output.value``'s
  ``documents[N].id`` when it is there.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import Document, Message, SpanKind, ToolCall, ToolInvocation

from .common import (
    Extraction,
    arguments,
    as_dict,
    as_str,
    content_text,
    indexed,
    lc_message,
    loads,
    normalise_role,
    strip_id,
)
from .openinference_shapes import (
    adapter_reply,
    calls_in_output,
    event_tool_name,
    is_event_span,
    joined_stream,
    parameters_as_arguments,
    prompts,
    reply_from_output,
    repr_messages,
    tool_output_text,
    unwrap_arguments,
)

KINDS = {
    "LLM": SpanKind.LLM,
    "TOOL": SpanKind.TOOL,
    "RETRIEVER": SpanKind.RETRIEVER,
    "RERANKER": SpanKind.RETRIEVER,
    "AGENT": SpanKind.AGENT,
    "CHAIN": SpanKind.CHAIN,
    "EMBEDDING": SpanKind.EMBEDDING,
}

#: Attributes only a model call carries. Token counts are not among them: smolagents sums its
#: run's usage on the AGENT span (``llm.token_count.*``), which is still the agent.
_LLM_MARKERS = ("llm.model_name", "llm.invocation_parameters", "llm.provider")


def _kind(attrs: dict[str, Any]) -> SpanKind:
    declared = str(attrs.get("openinference.span.kind", "")).upper()
    kind = KINDS.get(declared, SpanKind.OTHER)
    if kind in (SpanKind.AGENT, SpanKind.CHAIN, SpanKind.OTHER):
        if "tool.name" in attrs:
            return SpanKind.TOOL
        if any(k.startswith("retrieval.documents.") for k in attrs):
            return SpanKind.RETRIEVER
        if any(k in attrs for k in _LLM_MARKERS):
            return SpanKind.LLM
    return kind


def _messages(attrs: dict[str, Any], prefix: str) -> list[Message]:
    messages: list[Message] = []
    for entry in indexed(attrs, prefix):
        calls = []
        for call in indexed(entry, "message.tool_calls"):
            name = call.get("tool_call.function.name")
            calls.append(  # each value has its field's type (built so): not validated again
                ToolCall.trusted(
                    id=strip_id(call.get("tool_call.id")),
                    name=name if isinstance(name, str) else "",
                    arguments=arguments(call.get("tool_call.function.arguments")),
                )
            )
        content = entry.get("message.content")
        if content is None:
            parts = indexed(entry, "message.contents")
            content = "\n".join(
                p["message_content.text"] for p in parts if isinstance(p.get("message_content.text"), str)
            )
        name = entry.get("message.name")
        messages.append(  # each value has its field's type (built so): not validated again
            Message.trusted(
                role=normalise_role(entry.get("message.role")),
                content=content_text(content),
                name=name if isinstance(name, str) else None,
                tool_calls=tuple(calls),
                tool_call_id=strip_id(entry.get("message.tool_call_id")),
            )
        )
    return messages


def _tool(name: str, attrs: dict[str, Any]) -> ToolInvocation:
    # DSPy sets no tool.name: its tool spans are named ``<tool>.__call__``.
    tool_name = as_str(attrs.get("tool.name")) or event_tool_name(attrs) or name.removesuffix(".__call__")
    raw_input = attrs.get("input.value")
    args = arguments(raw_input) if raw_input is not None else parameters_as_arguments(attrs)
    if isinstance(args, dict):
        args = unwrap_arguments(args)
    if isinstance(args, str):
        schema = as_dict(attrs.get("tool.parameters")) or as_dict(attrs.get("tool.json_schema")) or {}
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else None
        if props is not None and len(props) == 1:
            args = {next(iter(props)): args}
    call_id = strip_id(attrs.get("tool.id")) or strip_id(attrs.get("tool_call.id"))
    raw_output = attrs.get("output.value")
    result = as_str(raw_output)
    parsed = loads(raw_output)
    framework_output = tool_output_text(parsed)
    if framework_output is not None:
        result = framework_output
    message = None if framework_output is not None else lc_message(parsed)
    if message is not None:
        result = message["content"]
        call_id = call_id or message["tool_call_id"]
    return ToolInvocation(name=tool_name, call_id=call_id, arguments=args, result=result)


def _documents(attrs: dict[str, Any], notes: list[str], prefix: str) -> list[Document]:
    output = as_dict(attrs.get("output.value")) or {}
    found = output.get("documents")
    output_docs: list[Any] = found if isinstance(found, list) else []
    docs: list[Document] = []
    for index, entry in enumerate(indexed(attrs, prefix)):
        text = entry.get("document.content")
        if not isinstance(text, str):
            notes.append(f"{prefix}.{index} has no content; dropped")
            continue
        metadata = as_dict(entry.get("document.metadata")) or {}
        doc_id = strip_id(entry.get("document.id"))
        if doc_id is None:
            for key in ("id", "doc_id", "document_id"):
                doc_id = strip_id(metadata.get(key))
                if doc_id:
                    break
        if doc_id is None and index < len(output_docs) and isinstance(output_docs[index], dict):
            doc_id = strip_id(output_docs[index].get("id"))
        score = entry.get("document.score")
        docs.append(  # each value has its field's type (built so): not validated again
            Document.trusted(
                id=doc_id,
                text=text,
                metadata=metadata,
                score=float(score)
                if isinstance(score, int | float) and not isinstance(score, bool)
                else None,
            )
        )
    return docs


def _query(attrs: dict[str, Any]) -> str | None:
    value = attrs.get("input.value")
    parsed = as_dict(value)
    if parsed is not None:
        for key in ("query", "input", "question"):
            if isinstance(parsed.get(key), str):
                return str(parsed[key])
    return as_str(value)


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one span written to the OpenInference conventions."""
    result = Extraction(kind=_kind(attrs))
    result.input_messages = _messages(attrs, "llm.input_messages")
    result.output_messages = _messages(attrs, "llm.output_messages")
    result.input_text = as_str(attrs.get("input.value"))
    result.output_text = as_str(attrs.get("output.value"))
    if result.kind == SpanKind.LLM and not result.output_messages:
        # agno 1.x and LlamaIndex's completion spans write the reply only as output.value.
        result.output_messages = reply_from_output(attrs.get("output.value"))
        if not result.input_messages:
            result.input_messages = prompts(attrs.get("llm.prompts"))
    if result.kind == SpanKind.LLM and any(m.role == "tool" and not m.content for m in result.input_messages):
        result.input_messages = repr_messages(attrs.get("input.value")) or result.input_messages  # Haystack
    if result.kind == SpanKind.LLM and result.output_messages:
        result.output_messages = [adapter_reply(m) for m in joined_stream(result.output_messages)]  # DSPy
        calls = (
            ()
            if any(m.tool_calls for m in result.output_messages)
            else calls_in_output(attrs.get("output.value"))
        )
        if calls:  # BeeAI 0.1.5: the calls only in output.value
            first = result.output_messages[0]
            result.output_messages = [
                first.model_copy(update={"tool_calls": calls}),
                *result.output_messages[1:],
            ]
    if result.kind == SpanKind.TOOL:
        result.tool = _tool(name, attrs)
    elif result.kind == SpanKind.RETRIEVER:
        result.query = _query(attrs)
        # A reranker's evidence is what it kept: its output documents.
        reranker = str(attrs.get("openinference.span.kind", "")).upper() == "RERANKER"
        prefix = "reranker.output_documents" if reranker else "retrieval.documents"
        result.documents = _documents(attrs, result.notes, prefix)
        if reranker and isinstance(attrs.get("reranker.query"), str):
            result.query = str(attrs["reranker.query"])
    result.instant = is_event_span(attrs)
    result.conversation_id = as_str(attrs.get("session.id"))
    model = attrs.get("llm.model_name")
    result.model = model if isinstance(model, str) and model else None
    result.entity_name = result.tool.name if result.tool else (name or None)
    return result
