"""From a decoded OTLP span to an :class:`auditor.trace.Span`, whatever convention wrote it.

Both wire formats (``otlp_json``, ``otlp_proto``) decode a span into a :class:`RawSpan` (ids as
lower-case hex, times as Unix nanoseconds, attributes as Python values). This module picks the
convention for each span, asks it for the normalised fields, and checks what every span needs:
ids and a start time. A span that lacks them is skipped with a :class:`~auditor.trace.Problem`.

Convention detection, per span, in order: the instrumentation scope
(``openinference.instrumentation.*``, ``opentelemetry.instrumentation.langchain`` and other
Traceloop scopes), then the attributes (``openinference.span.kind``; MLflow's ``mlflow.spanType`` / ``spanInputs`` / ``spanOutputs``; ``traceloop.*``,
``llm.request.type`` or indexed ``gen_ai.prompt.N.*``; the Vercel AI SDK's ``ai.operationId``;
Strands' system name or scope; LangSmith's exporter, scope ``langsmith`` or ``langsmith.span.kind``;
Logfire's scope ``logfire.openai_agents``;
Google ADK's scope ``gcp.vertex.agent``; Koog's ``koog.node.*`` or tool ``input/output.value``; any
other ``gen_ai.*`` attribute or event).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.trace import Problem, Severity, SourceRef, Span, SpanEvent, SpanStatus

from .conventions import (
    genai,
    google_adk,
    koog,
    langsmith,
    logfire_agents,
    mcp,
    mlflow,
    openinference,
    openllmetry,
    strands,
    vercel_ai,
)
from .conventions.common import Extraction

OPENINFERENCE = "openinference"
OPENLLMETRY = "openllmetry"
GENAI = "genai"
VERCEL_AI = "vercel_ai"
STRANDS = "strands"
LANGSMITH = "langsmith"
KOOG = "koog"
GOOGLE_ADK = "google_adk"
LOGFIRE_AGENTS = "logfire_openai_agents"
MLFLOW = "mlflow"

_EXTRACTORS: dict[str, Callable[[str, dict[str, Any], list[tuple[str, dict[str, Any]]]], Extraction]] = {
    OPENINFERENCE: openinference.extract,
    OPENLLMETRY: openllmetry.extract,
    GENAI: genai.extract,
    VERCEL_AI: vercel_ai.extract,
    STRANDS: strands.extract,
    LANGSMITH: langsmith.extract,
    KOOG: koog.extract,
    GOOGLE_ADK: google_adk.extract,
    LOGFIRE_AGENTS: logfire_agents.extract,
    MLFLOW: mlflow.extract,
}
_STATUS = {0: SpanStatus.UNSET, 1: SpanStatus.OK, 2: SpanStatus.ERROR}
#: Status codes by name (the enum names, with and without their prefix), as some writers spell them.
STATUS_NAMES = {
    "STATUS_CODE_UNSET": 0,
    "UNSET": 0,
    "STATUS_CODE_OK": 1,
    "OK": 1,
    "STATUS_CODE_ERROR": 2,
    "ERROR": 2,
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class RawEvent:
    name: str
    time_ns: int | None
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class RawSpan:
    """One span as decoded from either wire format, before any convention is applied."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int | None
    end_ns: int | None
    status_code: int = 0
    status_message: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[RawEvent] = field(default_factory=list)
    scope: str = ""
    line: int | None = None
    notes: list[str] = field(default_factory=list)


#: The largest time a signed 64-bit integer holds (2262-04-11): OTLP allows later ones.
MAX_SIGNED_NS = 2**63 - 1


def to_datetime(ns: int) -> datetime:
    """Unix nanoseconds as an aware UTC datetime (microsecond precision)."""
    return _EPOCH + timedelta(0, 0, ns // 1000)  # positional: the same value, without keyword parsing


#: The last span's source: the spans of one line (one request) share it (it is frozen).
_LAST_SOURCE: list[SourceRef] = []


def _source_ref(file: str, line: int | None) -> SourceRef:
    if _LAST_SOURCE:
        last = _LAST_SOURCE[0]
        if last.line == line and last.file == file:
            return last
        ref = _LAST_SOURCE[0] = SourceRef.trusted(file=file, line=line)
        return ref
    ref = SourceRef.trusted(file=file, line=line)
    _LAST_SOURCE.append(ref)
    return ref


def detect_convention(raw: RawSpan) -> str | None:
    """Which convention wrote this span, or None when it carries no GenAI attributes at all."""
    scope = raw.scope.lower()
    attrs = raw.attributes
    if scope.startswith("openinference") or "openinference.span.kind" in attrs:
        return OPENINFERENCE
    if mlflow.is_mlflow(attrs):  # MLflow Tracing: its content is in mlflow.span* attributes of its own
        return MLFLOW
    if vercel_ai.is_vercel_ai(attrs):  # before GenAI: its model-call spans carry gen_ai.* too
        return VERCEL_AI
    if logfire_agents.is_logfire_agents(scope):  # before GenAI: it sets gen_ai.system, content elsewhere
        return LOGFIRE_AGENTS
    if strands.is_strands(scope, attrs):  # before GenAI: its content is in forms of its own
        return STRANDS
    if langsmith.is_langsmith(scope, attrs):  # before GenAI: gen_ai.prompt holds the run's inputs
        return LANGSMITH
    if google_adk.is_adk(raw.scope):  # GenAI, with ADK's {"result": ...} wrapper on tool results
        return GOOGLE_ADK
    if koog.is_koog(attrs):  # before GenAI: its tool spans keep their call in input/output.value
        return KOOG
    if scope.startswith(("opentelemetry.instrumentation.langchain", "traceloop")):
        return OPENLLMETRY
    if (
        any(k.startswith("traceloop.") for k in attrs)
        or "llm.request.type" in attrs
        or "gen_ai.prompt.0.role" in attrs
        or "gen_ai.completion.0.role" in attrs
    ):
        return OPENLLMETRY
    if any(k.startswith("gen_ai.") for k in attrs) or any(e.name.startswith("gen_ai.") for e in raw.events):
        return GENAI
    return None


def _problem(raw: RawSpan, source: str, reason: str, severity: Severity = Severity.WARNING) -> Problem:
    return Problem(
        file=source,
        line=raw.line,
        reason=reason,
        severity=severity,
        trace_id=raw.trace_id or None,
        span_id=raw.span_id or None,
    )


def build_span(raw: RawSpan, source: str) -> tuple[Span | None, str | None, list[Problem]]:
    """The normalised span, its convention and the problems found; the span is None if skipped."""
    problems = [_problem(raw, source, note) for note in raw.notes]
    if not raw.trace_id or not raw.span_id:
        missing = "trace id" if not raw.trace_id else "span id"
        problems.append(
            _problem(raw, source, f"span {raw.name!r} has no valid {missing}; skipped", Severity.ERROR)
        )
        return None, None, problems
    if raw.start_ns is None or raw.start_ns <= 0:
        problems.append(
            _problem(raw, source, f"span {raw.name!r} has no start time; skipped", Severity.ERROR)
        )
        return None, None, problems
    end_ns = raw.end_ns
    if end_ns is None or end_ns <= 0:
        problems.append(_problem(raw, source, f"span {raw.name!r} has no end time; its start time is used"))
        end_ns = raw.start_ns
    if max(raw.start_ns, end_ns) > MAX_SIGNED_NS:
        # Valid OTLP (fixed64), but no clock writes it; said once, as the receiver's store holds it.
        problems.append(_problem(raw, source, f"span {raw.name!r} has a time past 2^63 ns (year 2262); kept"))
    convention = detect_convention(raw)
    events = [(e.name, e.attributes) for e in raw.events]
    try:
        found = _EXTRACTORS[convention](raw.name, raw.attributes, events) if convention else Extraction()
    except Exception as exc:  # a convention reader bug must not lose the rest of the file
        problems.append(_problem(raw, source, f"could not read {convention} attributes ({exc!r}); kept raw"))
        found = Extraction()
    if found.notes:
        problems.extend(_problem(raw, source, note) for note in found.notes)
    found.tool = mcp.unwrap(found.tool)  # a result that came over MCP: the text its blocks carry
    # Every value below has its field's exact type (checked above or built so), and every field is
    # given in the model's order (``trusted`` then takes them as they are).
    try:
        span = Span.trusted(
            trace_id=raw.trace_id,
            span_id=raw.span_id,
            parent_id=raw.parent_id,
            name=raw.name,
            kind=found.kind,
            start=to_datetime(raw.start_ns),
            end=to_datetime(raw.start_ns if found.instant else end_ns),
            status=_STATUS.get(raw.status_code, SpanStatus.UNSET),
            status_message=raw.status_message or None,
            input_messages=tuple(found.input_messages),
            output_messages=tuple(found.output_messages),
            tool=found.tool,
            query=found.query,
            documents=tuple(found.documents),
            input_text=found.input_text,
            output_text=found.output_text,
            conversation_id=found.conversation_id,
            model=found.model,
            entity_name=found.entity_name,
            attributes=raw.attributes,
            events=tuple(
                [
                    SpanEvent.trusted(
                        name=e.name,
                        time=to_datetime(e.time_ns) if e.time_ns else None,
                        attributes=e.attributes,
                    )
                    for e in raw.events
                ]
            ),
            source=_source_ref(source, raw.line),
        )
    except (ValueError, OverflowError) as exc:
        problems.append(
            _problem(raw, source, f"span {raw.name!r} could not be built ({exc}); skipped", Severity.ERROR)
        )
        return None, convention, problems
    return span, convention, problems
