"""Map one LangChain run (a ``langsmith.RunTree`` as JSON) to a core :class:`~auditor.trace.Span`.

The layout of the file (flat list, nested ``child_runs``, JSONL) is :mod:`auditor_langchain.runtree`'s
business; this module sees one run dict at a time, already placed in its trace.

Guarantees: :func:`run_to_span` never raises; whatever it cannot read becomes a
:class:`~auditor.trace.Problem` and the span keeps what could be read. Ids and times are read by
:mod:`auditor_langchain.ids`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.trace import (
    Document,
    Message,
    Problem,
    Severity,
    SourceRef,
    Span,
    SpanEvent,
    SpanKind,
    SpanStatus,
    ToolInvocation,
    quote_value,
)
from auditor_langchain.ids import KNOWN_TIMES, parse_time
from auditor_langchain.messages import (
    content_text,
    decode_document,
    decode_message,
    decode_messages,
    json_text,
    lc_fields,
    split_prompt,
)

_KIND = {
    "llm": SpanKind.LLM,
    "chat_model": SpanKind.LLM,
    "tool": SpanKind.TOOL,
    "retriever": SpanKind.RETRIEVER,
    "chain": SpanKind.CHAIN,
    "embedding": SpanKind.EMBEDDING,
    "prompt": SpanKind.OTHER,
    "parser": SpanKind.OTHER,
}

#: Chain inputs/outputs longer than this are cut in ``input_text``/``output_text`` (a LangGraph
#: state repeats every message of the conversation; the LLM and tool spans carry them in full).
TEXT_LIMIT = 4000

_CONVERSATION_KEYS = ("session_id", "thread_id", "conversation_id")
#: Run fields kept as string attributes, and the attribute each becomes.
_STRING_ATTRIBUTES = tuple(
    (key, f"langchain.{key}") for key in ("dotted_order", "session_name", "reference_example_id")
)


@dataclass
class RunContext:
    """Where a run sits: its trace, its parent, and where it was read."""

    trace_id: str
    parent_id: str | None
    source: str
    line: int | None = None
    problems: list[Problem] = field(default_factory=list)
    #: The run was read by the fast JSON reader (``Record.fast``): rendered by the fast writer.
    fast: bool = False

    def warn(self, span_id: str | None, reason: str, severity: Severity = Severity.WARNING) -> None:
        self.problems.append(
            Problem(
                file=self.source,
                line=self.line,
                reason=reason,
                severity=severity,
                trace_id=self.trace_id,
                span_id=span_id,
            )
        )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _short(value: Any, fast: bool) -> str | None:
    if value is None or value == {}:
        return None
    text = value if isinstance(value, str) else json_text(value, fast=fast)
    if len(text) > TEXT_LIMIT:
        return f"{text[:TEXT_LIMIT]}... [{len(text) - TEXT_LIMIT} more characters]"
    return text


def _only(value: dict[str, Any], key: str) -> Any:
    """``value[key]`` when it is the only key, else ``value`` itself."""
    return value[key] if len(value) == 1 and key in value else value


def _returned(outputs: dict[str, Any]) -> Any:
    """What a run returned: ``outputs["output"]``; the JS SDK's ``traceable`` wraps a value that is
    not an object as ``{"outputs": value}`` (Python's as ``{"output": value}``); else ``outputs``."""
    if "output" in outputs:
        return outputs["output"]
    if len(outputs) == 1 and "outputs" in outputs:
        return outputs["outputs"]
    return outputs if outputs else None


def _first_str(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value:
            return value
    return None


def _llm_inputs(
    inputs: dict[str, Any], ctx: RunContext, span_id: str
) -> tuple[tuple[Message, ...], dict[str, Any]]:
    attributes: dict[str, Any] = {}
    batches = inputs.get("messages")
    if isinstance(batches, list) and batches:
        if all(isinstance(b, list) for b in batches):
            if len(batches) > 1:
                ctx.warn(span_id, f"llm run has {len(batches)} message batches; only the first is read")
            return tuple(decode_messages(batches[0])), attributes
        return tuple(decode_messages(batches)), attributes
    prompts = inputs.get("prompts")
    if isinstance(prompts, list) and prompts:
        if len(prompts) > 1:
            ctx.warn(span_id, f"llm run has {len(prompts)} prompts; only the first is read")
        if isinstance(prompts[0], str):
            messages, inferred = split_prompt(prompts[0])
            attributes["langchain.input_form"] = "prompts"
            if inferred:
                attributes["langchain.tool_call_ids_inferred"] = True
            return tuple(messages), attributes
    prompt = inputs.get("prompt", inputs.get("input"))
    if isinstance(prompt, str):
        messages, _ = split_prompt(prompt)
        attributes["langchain.input_form"] = "prompts"
        return tuple(messages), attributes
    if inputs:
        ctx.warn(span_id, "llm run inputs have neither messages nor prompts; input messages left empty")
    return (), attributes


def _not_text(value: Any) -> str | None:
    """What ``value`` is when it cannot be a model's text (text is a string or a list of blocks)."""
    if value is None or isinstance(value, str | list):
        return None
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, int | float) else "an object"


def _llm_outputs(
    outputs: dict[str, Any], ctx: RunContext, span_id: str
) -> tuple[tuple[Message, ...], dict[str, Any]]:
    generations = outputs.get("generations")
    messages: list[Message] = []
    response_meta: dict[str, Any] = {}
    if isinstance(generations, list) and generations:
        first = generations[0]
        candidates = first if isinstance(first, list) else generations
        for index, gen in enumerate(candidates):
            if not isinstance(gen, dict):
                continue
            raw = gen.get("message")
            message = decode_message(raw) if raw is not None else None
            unwrapped = lc_fields(raw)
            field, value = (
                ("message content", unwrapped[1].get("content"))
                if message is not None and unwrapped is not None
                else ("text", gen.get("text"))
            )
            wrong = _not_text(value)
            if wrong is not None:
                # A number is not an answer: "5" would be judged as one.
                ctx.warn(
                    span_id,
                    f"outputs.generations {index} {field} is {wrong}, not text; the generation is ignored",
                )
                continue
            if message is None:
                message = Message.trusted(role="assistant", content=content_text(gen.get("text")))
            elif message.role != "assistant":
                message = message.model_copy(update={"role": "assistant"})
            messages.append(message)
            if unwrapped is not None and not response_meta:
                response_meta = _dict(unwrapped[1].get("response_metadata"))
    else:
        # Runs traced outside LangChain (``@traceable``, ``wrap_openai``) keep the provider's shape.
        choices = outputs.get("choices")
        raw_messages = (
            [c.get("message") for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
        )
        raw_messages = raw_messages or [outputs.get("message"), outputs.get("output")]
        for raw in raw_messages:
            message = decode_message(raw) if isinstance(raw, dict) else None
            if message is not None:
                messages.append(message.model_copy(update={"role": "assistant"}))
                break
    return tuple(messages), response_meta


def _tool(run: dict[str, Any], name: str, fast: bool) -> tuple[ToolInvocation, str | None]:
    """The invocation, and an error message when the tool returned an error ToolMessage."""
    inputs = run.get("inputs")
    outputs = _dict(run.get("outputs"))
    extra = _dict(run.get("extra"))
    arguments: dict[str, Any] | str | None
    if isinstance(inputs, dict) and set(inputs) == {"input"}:
        raw = inputs["input"]
        arguments = raw if isinstance(raw, str | dict) else json_text(raw, fast=fast)
    elif isinstance(inputs, dict):
        arguments = inputs or None
    elif inputs is None:
        arguments = None
    else:
        arguments = json_text(inputs, fast=fast)
    output = _returned(outputs)
    call_id = _first_str(extra.get("tool_call_id"))
    result: str | None = None
    failure: str | None = None
    unwrapped = lc_fields(output)
    if unwrapped is not None and (
        "content" in unwrapped[1] and (unwrapped[0] or unwrapped[1].get("type") == "tool")
    ):
        fields = unwrapped[1]
        result = content_text(fields.get("content"))
        call_id = call_id or _first_str(fields.get("tool_call_id"))
        if fields.get("status") == "error":
            failure = result
    elif isinstance(output, str):
        result = output
    elif output is not None:
        result = json_text(output, fast=fast)
    # Every value has its field's exact type (built so above), so nothing is validated again.
    return ToolInvocation.trusted(name=name, call_id=call_id, arguments=arguments, result=result), failure


def _events(raw: Any) -> tuple[tuple[SpanEvent, ...], int]:
    events: list[SpanEvent] = []
    tokens = 0
    if not isinstance(raw, list):
        return (), 0
    event = SpanEvent.trusted
    for item in raw:
        if type(item) is not dict and not isinstance(item, dict):
            continue
        name = item.get("name")
        if type(name) is not str and not isinstance(name, str):
            continue
        if name == "new_token":
            tokens += 1
            continue
        attrs = item.get("kwargs")
        if type(attrs) is not dict and not isinstance(attrs, dict):
            attrs = {}
        time = item.get("time")
        # parse_time's cache, looked up here: a run's events repeat its start and end times
        when = KNOWN_TIMES.get(time) if type(time) is str else None
        # every field in model order, as a dict display: cheaper than three keywords
        events.append(event({"name": name, "time": when or parse_time(time), "attributes": attrs}))
    return tuple(events), tokens


def run_to_span(run: dict[str, Any], span_id: str, start: datetime, ctx: RunContext) -> Span:
    """The span for one run whose id and start time have already been read.

    Args:
        run: the run as JSON.
        span_id: its normalised id.
        start: its start time.
        ctx: its trace, parent and location; problems are appended to ``ctx.problems``.
    """
    name = run.get("name")
    name = name if isinstance(name, str) and name else None
    run_type = run.get("run_type")
    run_type = run_type if isinstance(run_type, str) else None
    if run_type is None:
        ctx.warn(span_id, "run has no run_type; kind set to other")
    elif run_type not in _KIND:
        ctx.warn(span_id, f"unknown run_type {quote_value(run_type)}; kind set to other")
    kind = _KIND.get(run_type or "", SpanKind.OTHER)
    name = name or run_type or "run"

    end_time = run.get("end_time")
    end = KNOWN_TIMES.get(end_time) if type(end_time) is str else None
    if end is None:
        end = parse_time(end_time)
    if end is None:
        if end_time is not None:
            ctx.warn(span_id, f"unreadable end_time {quote_value(end_time)}; end set to start")
        else:
            ctx.warn(span_id, "run has no end_time (still running when exported); end set to start")
        end = start

    raw_inputs, raw_outputs, raw_extra = run.get("inputs"), run.get("outputs"), run.get("extra")
    if not (type(raw_inputs) is dict and type(raw_outputs) is dict and type(raw_extra) is dict):
        # not three objects (the common case, nothing to warn about): which are not, in this order
        for key, value in (("inputs", raw_inputs), ("outputs", raw_outputs), ("extra", raw_extra)):
            if value is not None and not isinstance(value, dict):
                ctx.warn(span_id, f"run {key} is a {type(value).__name__}, not an object")
    # _dict's rule, its common case inline (a call per field costs more than the test)
    inputs = raw_inputs if type(raw_inputs) is dict else _dict(raw_inputs)
    outputs = raw_outputs if type(raw_outputs) is dict else _dict(raw_outputs)
    extra = raw_extra if type(raw_extra) is dict else _dict(raw_extra)
    metadata = extra.get("metadata")
    metadata = (metadata if type(metadata) is dict else _dict(metadata)) or _dict(run.get("metadata"))

    attributes: dict[str, Any] = {"langchain.run_type": run_type}
    if metadata:
        attributes["langchain.metadata"] = metadata
    tags = run.get("tags")
    if isinstance(tags, list) and tags:
        attributes["langchain.tags"] = tags
    for key, attribute in _STRING_ATTRIBUTES:
        value = run.get(key)
        if isinstance(value, str):
            attributes[attribute] = value
    events, tokens = _events(run.get("events"))
    if tokens:
        attributes["langchain.new_token_events"] = tokens

    error = run.get("error")
    status = SpanStatus.OK if end_time is not None else SpanStatus.UNSET
    status_message: str | None = None
    if error:
        status, status_message = (
            SpanStatus.ERROR,
            error if isinstance(error, str) else json_text(error, fast=ctx.fast),
        )

    # Every field of the span in model order, so Span.trusted keeps this call's dict as it is.
    input_messages: tuple[Message, ...] = ()
    output_messages: tuple[Message, ...] = ()
    tool: ToolInvocation | None = None
    query: str | None = None
    documents: tuple[Document, ...] = ()
    model: str | None = None
    if kind is SpanKind.LLM:
        params = _dict(extra.get("invocation_params"))
        input_messages, input_attrs = _llm_inputs(inputs, ctx, span_id)
        output_messages, response_meta = _llm_outputs(outputs, ctx, span_id)
        attributes.update(input_attrs)
        model = _first_str(
            params.get("model_name"),
            params.get("model"),
            params.get("model_id"),
            metadata.get("ls_model_name"),
            response_meta.get("model_name"),
            response_meta.get("model"),
            inputs.get("model"),
            outputs.get("model"),
        )
    elif kind is SpanKind.TOOL:
        tool, failure = _tool(run, name, ctx.fast)
        if failure is not None and status is not SpanStatus.ERROR:
            status, status_message = SpanStatus.ERROR, failure
        if not isinstance(run.get("outputs"), dict) and not error:
            ctx.warn(span_id, "tool run has no outputs; result left empty")
    elif kind is SpanKind.RETRIEVER:
        raw_query = inputs.get("query", inputs.get("input"))
        query = raw_query if isinstance(raw_query, str) else _short(raw_query, ctx.fast)
        raw_docs = outputs.get("documents", outputs.get("output"))
        if isinstance(raw_docs, list):
            docs = [decode_document(d) for d in raw_docs]
            skipped = sum(d is None for d in docs)
            if skipped:
                ctx.warn(span_id, f"{skipped} retrieved document(s) had no text and were skipped")
            documents = tuple(d for d in docs if d is not None)
        elif outputs and not error:
            ctx.warn(span_id, "retriever run outputs have no documents list")
    input_text = _short(_only(inputs, "input"), ctx.fast) if not input_messages else None
    returned = outputs if len(outputs) != 1 else _returned(outputs)
    output_text = _short(returned, ctx.fast) if not output_messages else None

    # Every value has its field's exact type (read and checked above), so nothing is validated again;
    # a dict display, as 22 keywords take longer to collect.
    return Span.trusted(
        {
            "trace_id": ctx.trace_id,
            "span_id": span_id,
            "parent_id": ctx.parent_id,
            "name": name,
            "kind": kind,
            "start": start,
            "end": end,
            "status": status,
            "status_message": status_message,
            "input_messages": input_messages,
            "output_messages": output_messages,
            "tool": tool,
            "query": query,
            "documents": documents,
            "input_text": input_text,
            "output_text": output_text,
            "conversation_id": _conversation_id(metadata) if metadata else None,
            "model": model,
            "entity_name": None,
            "attributes": attributes,
            "events": events,
            "source": SourceRef.trusted({"file": ctx.source, "line": ctx.line}),
        }
    )


def _conversation_id(metadata: dict[str, Any]) -> str | None:
    """The first conversation key holding a non-empty string, else a non-string id as a string."""
    return _first_str(*map(metadata.get, _CONVERSATION_KEYS)) or _opt_id(metadata)


def _opt_id(metadata: dict[str, Any]) -> str | None:
    """A non-string conversation id (an int thread id, say) as a string."""
    for key in _CONVERSATION_KEYS:
        value = metadata.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    return None
