"""What was read from each span: the view behind ``auditor inspect``.

A user whose framework is misread needs to see why in one command, and to attach it to a bug
report: for every span, the convention its attributes belong to, the kind the adapter read it as,
and what evidence reconstruction took from it (the question, the answer, a tool call and its
result, system prompts, documents), beside the problems recorded for it. Nothing here decides
anything: it lays out what :func:`~auditor.evidence.reconstruct` and the adapters already found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from auditor.evidence._model import Answer
from auditor.evidence._unread import model_call_marker
from auditor.trace import Problem, Span, SpanKind, SpanStatus, Trace

#: Attribute prefixes (or keys) that say which convention wrote a span, checked in this order.
_CONVENTION_KEYS: tuple[tuple[str, str], ...] = (
    ("openinference.span.kind", "OpenInference"),
    ("traceloop.", "OpenLLMetry"),
    ("llm.request.type", "OpenLLMetry"),
    ("gen_ai.prompt.0.", "OpenLLMetry"),
    ("ai.operationId", "Vercel AI SDK"),
    ("langsmith.span.kind", "LangSmith"),  # its exporter writes gen_ai.* too
    ("langchain.", "LangChain run tree"),
    ("logfire.", "Logfire"),
    ("gen_ai.", "GenAI"),
    ("llm.", "OpenInference"),
    ("input.value", "OpenInference"),
)


_MODEL_KINDS = (SpanKind.LLM, SpanKind.AGENT)


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolReading(_View):
    name: str
    call_id: str | None = None
    arguments: dict[str, Any] | str | None = None
    result: str | None = None
    error: bool = False


class SpanReading(_View):
    """One span as the auditor read it."""

    span_id: str
    parent_id: str | None
    name: str
    attributes_of: str  # the convention its attributes belong to, or "none"
    read_as: str  # the kind the adapter gave it: llm, tool, retriever, agent, chain, other...
    model_call: str | None = None  # the marker that makes it a model or agent call, if any
    question: str | None = None  # the last user message of its input
    system_prompts: list[str] = Field(default_factory=list)
    tool_calls_requested: list[str] = Field(default_factory=list)  # names, from its output messages
    answer: str | None = None  # set when an answer was read from this span
    output: str | None = None  # its output messages' text, when it is not an answer
    tool: ToolReading | None = None
    documents: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class TraceReading(_View):
    trace_id: str
    source_format: str
    convention: str  # the adapter's, for the whole trace ("mixed" when its spans differ)
    answers: int
    spans: list[SpanReading]
    problems: list[str] = Field(default_factory=list)  # problems naming the trace but no span of it


class Inspection(_View):
    """Every trace of some inputs, span by span, and the problems that name no trace."""

    traces: list[TraceReading]
    problems: list[str] = Field(default_factory=list)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def attributes_of(span: Span) -> str:
    """The convention a span's raw attributes belong to (by their names), or ``none``."""
    for key, convention in _CONVENTION_KEYS:
        if any(k.startswith(key) for k in span.attributes):
            return convention
    return "none"


def _question(span: Span) -> str | None:
    users = [m.content for m in span.input_messages if m.role == "user" and m.content.strip()]
    return users[-1] if users else None


def _output(span: Span) -> str | None:
    text = "\n".join(m.content for m in span.output_messages if m.content.strip())
    return text or span.output_text or None


def _span_reading(span: Span, answer: Answer | None, problems: list[str]) -> SpanReading:
    marker = model_call_marker(span)
    tool = span.tool
    return SpanReading(
        span_id=span.span_id,
        parent_id=span.parent_id,
        name=span.name,
        attributes_of=attributes_of(span),
        read_as=span.kind.value,
        model_call=f"{marker.convention}: {marker.marker}" if marker else None,
        question=_question(span),
        system_prompts=[m.content for m in span.input_messages if m.role == "system" and m.content.strip()],
        tool_calls_requested=[c.name for m in span.output_messages for c in m.tool_calls],
        answer=answer.text if answer else None,
        output=None if answer or not (marker or span.kind in _MODEL_KINDS) else _output(span),
        tool=ToolReading(
            name=tool.name,
            call_id=tool.call_id,
            arguments=tool.arguments,
            result=tool.result,
            error=span.status is SpanStatus.ERROR,
        )
        if tool
        else None,
        documents=[d.text for d in span.documents],
        problems=problems,
    )


def inspect_traces(
    traces: Sequence[Trace], answers: Sequence[Answer], problems: Sequence[Problem]
) -> Inspection:
    """Lay out, span by span, what was read from ``traces``.

    Args:
        traces: the traces as read.
        answers: the answers reconstructed from them.
        problems: the problems recorded while reading them and finding their answers; each is
            shown on its span, else on its trace, else on the inspection.
    """
    by_span = {(a.trace_id, a.span_id): a for a in answers}
    on_span: dict[tuple[str, str], list[str]] = {}
    on_trace: dict[str, list[str]] = {}
    loose: list[str] = []
    known = {(t.trace_id, s.span_id) for t in traces for s in t.spans}
    trace_ids = {t.trace_id for t in traces}
    for problem in problems:
        text = f"{problem.severity.value}: {problem.reason}"
        if problem.trace_id and problem.span_id and (problem.trace_id, problem.span_id) in known:
            on_span.setdefault((problem.trace_id, problem.span_id), []).append(text)
        elif problem.trace_id in trace_ids:
            on_trace.setdefault(problem.trace_id or "", []).append(text)
        else:
            where = problem.file if problem.line is None else f"{problem.file}:{problem.line}"
            loose.append(f"{where}: {text}")
    readings = []
    for trace in traces:
        spans = [
            _span_reading(
                span,
                by_span.get((trace.trace_id, span.span_id)),
                on_span.get((trace.trace_id, span.span_id), []),
            )
            for span in sorted(trace.spans, key=lambda s: (s.start, s.end))
        ]
        readings.append(
            TraceReading(
                trace_id=trace.trace_id,
                source_format=trace.source_format,
                convention=trace.convention,
                answers=sum(1 for a in answers if a.trace_id == trace.trace_id),
                spans=spans,
                problems=on_trace.get(trace.trace_id, []),
            )
        )
    return Inspection(traces=readings, problems=loose)
