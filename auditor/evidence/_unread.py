"""Never a silent zero: traces that hold model calls but yield no answer become problems.

A report of "nothing wrong" over traces that were not read is the worst output the auditor can
give, so a trace whose spans carry any convention's marker of a model or agent call, and from
which reconstruction read no answer, is a recorded :class:`~auditor.trace.Problem` (code
:data:`NO_ANSWER`, severity error) naming the trace, the span most likely to hold the answer, the
convention it looked like and what was missing there.

Markers are read from the span's raw attributes, whatever the adapter made of them, so a
convention the adapters do not know yet (or misread) is still caught: GenAI
``gen_ai.operation.name`` (chat, generate_content, text_completion, invoke_agent, any-agent's
call_llm), ``gen_ai.system`` / ``gen_ai.provider.name`` on a span that is not a tool, retrieval or
embedding; OpenInference ``openinference.span.kind`` LLM or AGENT (or CHAIN with ``llm.*``
attributes); OpenLLMetry ``llm.request.type`` and ``traceloop.span.kind`` agent / workflow;
Vercel AI SDK ``ai.*`` operation ids; and any span the adapter itself read as an LLM or agent call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from auditor.evidence._model import Answer, AnswerSelection
from auditor.trace import Problem, Severity, Span, SpanKind, Trace

#: The code of the problem recorded for a trace with model calls and no answer.
NO_ANSWER = "no_answer"

_GENAI_MODEL_OPERATIONS = frozenset(
    {"chat", "generate_content", "text_completion", "completion", "invoke_agent", "call_llm"}
)
_GENAI_NOT_MODEL = frozenset(
    {"execute_tool", "retrieval", "embeddings", "create_agent", "vector_db_retrieve"}
)
_VERCEL_OPERATIONS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")


@dataclass(frozen=True)
class ModelCallMarker:
    """Why a span looks like a model or agent call: the convention and the attribute that says so."""

    convention: str
    marker: str
    agent: bool  # an agent or workflow span rather than one model call


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def model_call_marker(span: Span) -> ModelCallMarker | None:
    """The marker that makes ``span`` a model or agent call, or None when it carries none."""
    attrs = span.attributes
    operation = _text(attrs.get("gen_ai.operation.name"))
    if operation in _GENAI_NOT_MODEL:
        return None  # a tool call, a retrieval, an embedding, or an agent being defined (not run)
    if operation in _GENAI_MODEL_OPERATIONS:
        return ModelCallMarker("GenAI", f"gen_ai.operation.name={operation}", operation == "invoke_agent")
    declared = _text(attrs.get("openinference.span.kind")).upper()
    if declared in ("LLM", "AGENT") or (declared == "CHAIN" and any(k.startswith("llm.") for k in attrs)):
        return ModelCallMarker("OpenInference", f"openinference.span.kind={declared}", declared != "LLM")
    request_type = _text(attrs.get("llm.request.type"))
    if request_type:
        return ModelCallMarker("OpenLLMetry", f"llm.request.type={request_type}", agent=False)
    traceloop = _text(attrs.get("traceloop.span.kind"))
    if traceloop in ("agent", "workflow"):
        return ModelCallMarker("OpenLLMetry", f"traceloop.span.kind={traceloop}", agent=True)
    vercel = _text(attrs.get("ai.operationId")) or _text(attrs.get("operation.name"))
    if vercel.startswith(_VERCEL_OPERATIONS):
        return ModelCallMarker("Vercel AI SDK", f"ai.operationId={vercel}", "." not in vercel[3:])
    for key in ("gen_ai.system", "gen_ai.provider.name"):
        value = _text(attrs.get(key))
        if value and span.kind not in _NOT_MODEL_KINDS:  # a chain's provider is its framework's
            return ModelCallMarker("GenAI", f"{key}={value}", span.kind is SpanKind.AGENT)
    if span.kind is SpanKind.LLM:
        return ModelCallMarker("read as an LLM call", "span kind llm", agent=False)
    if span.kind is SpanKind.AGENT:
        return ModelCallMarker("read as an agent call", "span kind agent", agent=True)
    return None


_NOT_MODEL_KINDS = (SpanKind.TOOL, SpanKind.RETRIEVER, SpanKind.EMBEDDING, SpanKind.CHAIN)


def _missing(span: Span, trace: Trace, selection: AnswerSelection) -> str:
    """What reconstruction needed from ``span`` and did not find there."""
    if span.kind not in (SpanKind.LLM, SpanKind.AGENT):
        return f"the span was read as of kind {span.kind.value!r}, not as a model or agent call"
    if any(a.kind is SpanKind.TOOL for a in trace.ancestors(span)):
        return "the span runs inside a tool call (a sub-agent's answer goes to its caller)"
    outputs = span.output_messages
    if not outputs:
        seen = " (an output text is there, in a form not read as a message)" if span.output_text else ""
        return f"no output message was read from it{seen}"
    if any(m.tool_calls for m in outputs):
        return "its output asks for tool calls only; no final text after them was read"
    if not any(m.content.strip() for m in outputs):
        return "its output messages hold no text"
    if span.kind is SpanKind.AGENT and any(s.kind is SpanKind.LLM for s in trace.spans):
        return "its output is an agent span's, and answers are read from the trace's LLM spans"
    if selection.span_names or selection.attributes:
        return "the policy's [answers] section selects none of the trace's spans"
    return "no answer text was read from it"


def _best(marked: list[tuple[Span, ModelCallMarker]]) -> tuple[Span, ModelCallMarker]:
    """The span most likely to have held the answer: the last model call to end, else the last agent."""
    calls = [m for m in marked if not m[1].agent] or marked
    return max(calls, key=lambda m: (m[0].end, m[0].start))


def unanswered_traces(
    traces: Sequence[Trace], answers: Sequence[Answer], selection: AnswerSelection | None = None
) -> list[Problem]:
    """One :data:`NO_ANSWER` problem for each trace with model calls from which no answer was read.

    Args:
        traces: the traces reconstruction read.
        answers: the answers it found in them (all of them, before any selection by trace id).
        selection: the policy's ``[answers]`` section, named in the reason when it is why.
    """
    selection = selection or AnswerSelection()
    answered = {a.trace_id for a in answers}
    problems: list[Problem] = []
    for trace in traces:
        if trace.trace_id in answered:
            continue
        marked = [(s, m) for s in trace.spans if (m := model_call_marker(s)) is not None]
        if not marked:
            continue
        span, marker = _best(marked)
        calls = sum(1 for _, m in marked if not m.agent)
        agents = len(marked) - calls
        reason = (
            f"trace {trace.trace_id}: no answer read from its {calls} model call(s) and {agents} agent "
            f"span(s): span {span.name!r} looks like {marker.convention} ({marker.marker}); "
            f"{_missing(span, trace, selection)}"
        )
        problems.append(
            Problem(
                file=span.source.file if span.source else "",
                line=span.source.line if span.source else None,
                reason=reason,
                severity=Severity.ERROR,
                trace_id=trace.trace_id,
                span_id=span.span_id,
                code=NO_ANSWER,
            )
        )
    return problems


def count_unanswered(problems: Sequence[Any]) -> int:
    """How many distinct traces ``problems`` (:class:`Problem` or their JSON form) name as unanswered."""
    return len({getattr(p, "trace_id", None) for p in problems if getattr(p, "code", None) == NO_ANSWER})
