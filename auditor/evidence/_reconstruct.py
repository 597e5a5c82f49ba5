"""Evidence reconstruction: find each answer and everything it could have drawn on.

Rules (see README, "How answers and evidence are found"):

- An *answer* is the text output of an LLM generation that asked for no tool calls and that is
  not nested inside a tool call (a sub-agent's output goes back to its caller, not to the user).
  A trace whose LLM spans hold no answer (none traced, or traced without content) falls back to
  agent spans with output messages. A policy's
  ``[answers]`` section narrows this (:class:`~auditor.evidence.AnswerSelection`).
- A trace with neither (OpenLLMetry's ``@workflow`` around plain code, whose model calls no
  instrumentation recorded) falls back to its root agent or chain spans whose output is plain
  text: the workflow's return value is the answer, its own input the question.
- *Evidence is causal*: an item counts for an answer only if it existed before the answer's
  generation began: a span's output once the span has ended, an LLM's input messages once that
  LLM call has started. An answer read from an agent or workflow span (no LLM span holds it)
  exists only when that span ends, so its cutoff is the span's end (and its ``generated_at``):
  what ended inside the run before it returned is evidence, what ended after is not. Traces sharing a conversation id are one conversation, so a second turn
  sees the first turn's tool results, and the first never sees the second's.
- A retriever's output is split into one item per document. A tool that wraps a retriever is
  represented by the retriever's documents (so a policy on documents cannot be bypassed through
  the tool's copy of their text). A tool that runs a sub-agent returns model output.
- User turns, system prompts and earlier assistant answers reappear in every later LLM input;
  each becomes one item of its own kind, and the policy decides on it.
- Frameworks' own shapes (:mod:`auditor.evidence._shapes`): an answer delivered through a
  final-answer tool is an answer, not a tool result; the question and system prompt of a run reach
  its final chat span from earlier chat spans and the agent or chain spans around it; a tool
  result's text ends with the call it answers, and an error payload is an error; a tool span whose
  end a millisecond clock wrote just after the next model call's start counts when that call's
  input shows its result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from auditor.evidence._conversation import Conversation, Located, conversation_key
from auditor.evidence._hops import ToolHop, assign_paths
from auditor.evidence._model import Answer, AnswerSelection, Evidence, EvidenceKind
from auditor.evidence._questions import RUN_KINDS, answer_spans, question_of, question_type
from auditor.evidence._shapes import (
    call_text,
    error_payload,
    is_final_tool,
    task_question,
    with_call,
)
from auditor.text import normalise, short_digest
from auditor.trace import Message, Span, SpanKind, SpanStatus, Trace

_URL_KEYS = ("url", "source_url", "source", "uri", "link")


def _url(metadata: dict[str, Any]) -> str | None:
    for key in _URL_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.startswith(("http://", "https://")):
            return value
    return None


class _Collector:
    """Builds the evidence list of one answer, each item once, in arrival order."""

    def __init__(self, conv: Conversation, answer: Located) -> None:
        self.conv = conv
        self.answer = answer
        # A model call's answer exists from its start; an agent or workflow span's only at its end
        # (its output, given after the tool calls inside it).
        self.cutoff = answer.span.start if answer.span.kind is SpanKind.LLM else answer.span.end
        self.items: list[Evidence] = []
        self._seen: dict[tuple[str, str], int] = {}
        self._tool_call_ids: set[str] = set()
        self.question, self.question_span = question_of(answer, conv)

    def add(self, key: tuple[str, str], evidence: Evidence) -> None:
        """Keep each item once, where it first appeared (a message repeated in later inputs, or
        on an agent step that started after the model call that first showed it)."""
        if key not in self._seen:
            self._seen[key] = len(self.items)
            self.items.append(evidence)
            return
        index = self._seen[key]
        earlier = self.items[index].available_at
        if evidence.available_at is not None and earlier is not None and evidence.available_at < earlier:
            self.items[index] = evidence

    def ended_before(self, span: Span) -> bool:
        return span.end <= self.cutoff and span is not self.answer.span

    def started_by(self, span: Span) -> bool:
        return span.start <= self.cutoff

    def tool_available(self, span: Span, seen: _Seen) -> datetime | None:
        """When a tool span's result became available to this answer, or None if it did not.

        It ended before the answer's generation began; or (clocks that write milliseconds put a
        tool's end just after the next model call's start) it started before, and a model call
        that started by then had its result in its input (by call id, else by the same text).
        """
        if self.ended_before(span):
            return span.end
        if span.tool is None or span.start > self.cutoff:
            return None
        shown = seen.at(span.tool.call_id, span.tool.result)
        return shown if shown is not None and span.start <= shown <= self.cutoff else None


class _Seen:
    """When each tool result first appeared in a model call's input: by call id and by text."""

    def __init__(self, conv: Conversation) -> None:
        self.by_id: dict[str, datetime] = {}
        self.by_text: dict[str, datetime] = {}
        for item in conv.spans:
            if item.span.kind is not SpanKind.LLM:
                continue
            for message in item.span.input_messages:
                if message.role != "tool":
                    continue
                when = item.span.start
                if message.tool_call_id:
                    self.by_id[message.tool_call_id] = min(when, self.by_id.get(message.tool_call_id, when))
                key = normalise(message.content)
                if key:
                    self.by_text[key] = min(when, self.by_text.get(key, when))

    def at(self, call_id: str | None, result: str | None) -> datetime | None:
        if call_id and call_id in self.by_id:
            return self.by_id[call_id]
        return self.by_text.get(normalise(result or "")) if result else None


def _hops(conv: Conversation) -> tuple[list[ToolHop], dict[str, ToolHop]]:
    """Tool calls seen as spans, plus tool calls seen only in chat messages (no tool span)."""
    hops: list[ToolHop] = []
    for item in conv.spans:
        span = item.span
        if span.kind is not SpanKind.TOOL or span.tool is None or is_final_tool(span.tool.name):
            continue
        enclosing = tuple(
            f"{item.trace.trace_id}:{a.span_id}"
            for a in reversed(conv.ancestors(item))
            if a.kind is SpanKind.TOOL
        )
        hops.append(
            ToolHop(
                key=f"{item.trace.trace_id}:{span.span_id}",
                name=span.tool.name,
                arguments=span.tool.arguments,
                result=span.tool.result or "",
                started=span.start,
                ended=span.end,
                enclosing=enclosing,
            )
        )
    spanned_ids = {i.span.tool.call_id for i in conv.spans if i.span.tool and i.span.tool.call_id}
    # Some conventions drop the call id from tool spans; the same result text means the same call.
    spanned_texts = {normalise(i.span.tool.result) for i in conv.spans if i.span.tool and i.span.tool.result}
    calls: dict[str, tuple[str, Any, datetime]] = {}
    by_call: dict[str, ToolHop] = {}
    for item in sorted(conv.spans, key=lambda x: x.span.start):
        for message in item.span.output_messages:
            for call in message.tool_calls:
                if call.id:
                    calls.setdefault(call.id, (call.name, call.arguments, item.span.end))
        for message in item.span.input_messages:
            for call in message.tool_calls:
                if call.id:
                    calls.setdefault(call.id, (call.name, call.arguments, item.span.start))
            if message.role == "tool" and message.tool_call_id and message.tool_call_id not in spanned_ids:
                if message.tool_call_id in by_call or normalise(message.content) in spanned_texts:
                    continue
                name, args, requested = calls.get(
                    message.tool_call_id, (message.name or "tool", None, item.span.start)
                )
                if is_final_tool(message.name or name):
                    continue  # the answer's delivery ("Final result processed."), not a source
                hop = ToolHop(
                    key=f"call:{message.tool_call_id}",
                    name=message.name or name,
                    arguments=args,
                    result=message.content,
                    started=min(requested, item.span.start),
                    ended=item.span.start,
                )
                hops.append(hop)
                by_call[message.tool_call_id] = hop
    return hops, by_call


def _collect_spans(c: _Collector, paths: dict[str, tuple[str, ...]], seen: _Seen) -> None:
    for item in c.conv.spans:
        span, trace = item.span, item.trace
        if span.kind is SpanKind.TOOL and span.tool is not None:
            available = c.tool_available(span, seen)
            if available is None or is_final_tool(span.tool.name):
                continue
            below = c.conv.descendants(item)
            if any(d.kind is SpanKind.RETRIEVER and d.documents for d in below):
                continue  # represented by the retriever's documents
            sub_agent = any(d.kind is SpanKind.LLM for d in below)
            text = span.tool.result or ""
            if not text.strip():
                continue
            if span.tool.call_id:
                c._tool_call_ids.add(span.tool.call_id)
            call = call_text(span.tool.name, span.tool.arguments)
            metadata: dict[str, Any] = {"arguments": span.tool.arguments, "tool_call_id": span.tool.call_id}
            if call:
                metadata["call"] = call
            if sub_agent:
                metadata["sub_agent"] = True
            c.add(
                ("tool", span.tool.call_id or f"{trace.trace_id}:{span.span_id}"),
                Evidence(
                    evidence_id="ev_" + short_digest(trace.trace_id, span.span_id, "tool"),
                    kind=EvidenceKind.MODEL_OUTPUT if sub_agent else EvidenceKind.TOOL_RESULT,
                    name=span.tool.name,
                    text=with_call(call, text),
                    metadata=metadata,
                    trace_id=trace.trace_id,
                    span_id=span.span_id,
                    available_at=available,
                    hop_path=paths.get(f"{trace.trace_id}:{span.span_id}", (span.tool.name,)),
                    error=span.status is SpanStatus.ERROR or error_payload(text),
                ),
            )
        elif span.kind is SpanKind.RETRIEVER and c.ended_before(span):
            tools = [a for a in c.conv.ancestors(item) if a.kind is SpanKind.TOOL]
            base = paths.get(f"{trace.trace_id}:{tools[0].span_id}", ()) if tools else ()
            retriever = span.entity_name or span.name
            for index, doc in enumerate(span.documents):
                if not doc.text.strip():
                    continue
                c.add(
                    ("doc", f"{trace.trace_id}:{span.span_id}:{index}"),
                    Evidence(
                        evidence_id="ev_" + short_digest(trace.trace_id, span.span_id, "doc", str(index)),
                        kind=EvidenceKind.RETRIEVED_DOCUMENT,
                        name=retriever,
                        text=doc.text,
                        metadata=dict(doc.metadata),
                        document_id=doc.id,
                        url=_url(doc.metadata),
                        trace_id=trace.trace_id,
                        span_id=span.span_id,
                        available_at=span.end,
                        hop_path=(*base, retriever),
                        error=span.status is SpanStatus.ERROR,
                    ),
                )


def _message_item(
    c: _Collector,
    kind: EvidenceKind,
    message: Message,
    span: Span,
    trace: Trace,
    when: datetime,
    name: str | None = None,
    **extra: Any,
) -> None:
    text = message.content.strip()
    if not text:
        return
    key = normalise(text)
    c.add(
        (kind.value, key),
        Evidence(
            evidence_id="ev_" + short_digest(conversation_key(trace), kind.value, key),
            kind=kind,
            name=name,
            text=message.content,
            trace_id=trace.trace_id,
            span_id=span.span_id,
            available_at=when,
            **extra,
        ),
    )


def _collect_messages(
    c: _Collector, message_hops: dict[str, ToolHop], paths: dict[str, tuple[str, ...]]
) -> None:
    question = c.question
    _collect_run_context(c, question)
    llm_spans = sorted((x for x in c.conv.spans if x.span.kind is SpanKind.LLM), key=lambda x: x.span.start)
    for item in llm_spans:
        span, trace = item.span, item.trace
        nested = any(a.kind is SpanKind.TOOL for a in c.conv.ancestors(item))
        if c.started_by(span):
            for message in span.input_messages:
                if message.role == "system":
                    _message_item(
                        c,
                        EvidenceKind.SYSTEM_PROMPT,
                        message,
                        span,
                        trace,
                        span.start,
                        metadata={"sub_agent": True} if nested else {},
                    )
                elif message.role == "user" and not nested:
                    _message_item(
                        c,
                        EvidenceKind.USER_MESSAGE,
                        message,
                        span,
                        trace,
                        span.start,
                        current_question=task_question(message.content) == question,
                    )
                elif message.role == "tool" and message.tool_call_id not in c._tool_call_ids:
                    hop = message_hops.get(message.tool_call_id or "")
                    if hop is None:
                        continue  # answered by a tool span, collected there
                    call = call_text(hop.name, hop.arguments)
                    metadata = {"arguments": hop.arguments, "tool_call_id": message.tool_call_id}
                    _message_item(
                        c,
                        EvidenceKind.TOOL_RESULT,
                        message.model_copy(update={"content": with_call(call, message.content)}),
                        span,
                        trace,
                        span.start,
                        name=hop.name,
                        metadata={**metadata, "call": call} if call else metadata,
                        hop_path=paths.get(hop.key, (hop.name,)),
                        error=error_payload(message.content),
                    )
                elif message.role == "assistant" and not message.tool_calls:
                    _message_item(c, EvidenceKind.MODEL_OUTPUT, message, span, trace, span.start)
        if c.ended_before(span):
            for message in span.output_messages:
                if not message.tool_calls:
                    _message_item(
                        c,
                        EvidenceKind.MODEL_OUTPUT,
                        message,
                        span,
                        trace,
                        span.end,
                        metadata={"sub_agent": True} if nested else {},
                    )


def _collect_run_context(c: _Collector, question: str | None) -> None:
    """The system prompts and user turns on the agent or chain spans the answer runs in (Microsoft
    Agent Framework's ``invoke_agent``), and the question when it came from such a span's input."""
    nested = any(a.kind is SpanKind.TOOL for a in c.conv.ancestors(c.answer))
    if nested:
        return  # a sub-agent's instructions and task are its caller's words, collected from its calls
    for ancestor in [c.answer.span, *c.conv.ancestors(c.answer)]:
        if ancestor.kind not in RUN_KINDS or not c.started_by(ancestor):
            continue
        trace = c.answer.trace
        for message in ancestor.input_messages:
            if message.role == "system":
                _message_item(c, EvidenceKind.SYSTEM_PROMPT, message, ancestor, trace, ancestor.start)
            elif message.role == "user":
                current = task_question(message.content) == question
                _message_item(
                    c,
                    EvidenceKind.USER_MESSAGE,
                    message,
                    ancestor,
                    trace,
                    ancestor.start,
                    current_question=current,
                )
        if ancestor is c.question_span and question is not None:
            asked = Message(role="user", content=question)
            _message_item(
                c, EvidenceKind.USER_MESSAGE, asked, ancestor, trace, ancestor.start, current_question=True
            )
    if c.answer.span.kind is not SpanKind.LLM:
        # A workflow's answer: the system prompts its inner steps were given (an OpenLLMetry
        # ``@task`` around an uninstrumented model call holds the messages it was called with).
        for inner in c.conv.descendants(c.answer):
            if inner.kind in RUN_KINDS and c.started_by(inner):
                for message in inner.input_messages:
                    if message.role == "system":
                        _message_item(
                            c, EvidenceKind.SYSTEM_PROMPT, message, inner, c.answer.trace, inner.start
                        )


def _answers_of(conv: Conversation, selection: AnswerSelection) -> Iterable[Answer]:
    hops, message_hops = _hops(conv)
    paths = assign_paths(hops)
    seen = _Seen(conv)
    for item, text in answer_spans(conv, selection):
        collector = _Collector(conv, item)
        _collect_spans(collector, paths, seen)
        _collect_messages(collector, message_hops, paths)
        ordered = sorted(
            collector.items,
            key=lambda e: e.available_at or item.span.start,
        )
        yield Answer(
            answer_id="ans_" + short_digest(item.trace.trace_id, item.span.span_id),
            trace_id=item.trace.trace_id,
            span_id=item.span.span_id,
            conversation_id=item.trace.conversation_id,
            question=collector.question,
            text=text,
            generated_at=collector.cutoff,
            question_type=question_type(item, conv, selection.question_type_attribute),
            evidence=tuple(ordered),
        )


def reconstruct(traces: Sequence[Trace], selection: AnswerSelection | None = None) -> list[Answer]:
    """Every answer in ``traces`` with the evidence it could have drawn on.

    Args:
        traces: normalised traces, from any adapter; traces sharing a conversation id are
            treated as one conversation.
        selection: how to recognise answers when the default rule does not fit.

    Returns:
        Answers in order of generation within each conversation; conversations in input order.
    """
    selection = selection or AnswerSelection()
    groups: dict[str, list[Trace]] = defaultdict(list)
    for trace in traces:
        groups[conversation_key(trace)].append(trace)
    answers: list[Answer] = []
    for group in groups.values():
        answers.extend(_answers_of(Conversation(group), selection))
    return answers
