"""Which spans hold an answer, and the question each answers (rules in :mod:`auditor.evidence._reconstruct`)."""

from __future__ import annotations

from fnmatch import fnmatchcase

from auditor.evidence._conversation import Conversation, Located
from auditor.evidence._model import AnswerSelection
from auditor.evidence._shapes import (
    final_answer_text,
    last_user_message,
    question_from_input,
    questions_in_input,
    task_question,
)
from auditor.text import normalise
from auditor.trace import Span, SpanKind


def _final_text(span: Span) -> str | None:
    """The assistant text of a generation that asked for no tool calls, else None; or the answer it
    delivered through a final-answer tool (``final_result``, ``final_answer``, ...)."""
    messages = [m for m in span.output_messages if m.role in ("assistant", "ai", "model")] or list(
        span.output_messages
    )
    if not messages:
        return None
    if any(m.tool_calls for m in messages):
        return final_answer_text(tuple(c for m in messages for c in m.tool_calls))
    text = "\n".join(m.content for m in messages if m.content).strip()
    return text or None


def _matches(span: Span, selection: AnswerSelection) -> bool:
    if selection.span_names and not any(fnmatchcase(span.name, p) for p in selection.span_names):
        return False
    return all(str(span.attributes.get(k)) == v for k, v in selection.attributes.items())


def _workflow_text(span: Span) -> str | None:
    """A root agent or chain span's plain-text output (a workflow's returned text), else None:
    a structured output (JSON) is a value, not an answer."""
    if span.parent_id or span.kind not in RUN_KINDS or not span.output_text:
        return None
    text = span.output_text.strip()
    return text if text and not text.startswith(("{", "[")) else None


def answer_spans(conv: Conversation, selection: AnswerSelection) -> list[tuple[Located, str]]:
    llm = [x for x in conv.spans if x.span.kind is SpanKind.LLM]
    found = _answers_in(llm, conv, selection)
    if not found:
        # No model call holds a readable answer (none traced, or traced without content, as Semantic
        # Kernel's chat spans are): the agent spans' output messages are the answers.
        found = _answers_in([x for x in conv.spans if x.span.kind is SpanKind.AGENT], conv, selection)
    if not found and not llm:
        for item in conv.spans:  # a workflow around plain code: its returned text is the answer
            text = _workflow_text(item.span)
            if text is not None and _matches(item.span, selection):
                found.append((item, text))
    return sorted(found, key=lambda f: (f[0].span.start, f[0].span.end))


def _answers_in(
    pool: list[Located], conv: Conversation, selection: AnswerSelection
) -> list[tuple[Located, str]]:
    found: list[tuple[Located, str]] = []
    for item in pool:
        text = _final_text(item.span)
        if text is None or not _matches(item.span, selection):
            continue
        if any(a.kind is SpanKind.TOOL for a in conv.ancestors(item)):
            continue
        found.append((item, text))
    return found


RUN_KINDS = (SpanKind.AGENT, SpanKind.CHAIN)


def run_of(item: Located, conv: Conversation) -> Span | None:
    """The agent or chain span a model call runs in (its nearest such ancestor), if any."""
    return next((a for a in conv.ancestors(item) if a.kind in RUN_KINDS), None)


def question_of(item: Located, conv: Conversation) -> tuple[str | None, Span | None]:
    """The question, unwrapped from a framework's prompt around it (CrewAI's task)."""
    question, span = _asked(item, conv)
    return task_question(question), span


def _asked(item: Located, conv: Conversation) -> tuple[str | None, Span | None]:
    """The question an answer responds to, and the agent or chain span it came from (None when it
    is in a model call's input): the answer span's last user message, else that of the latest
    earlier chat span of the same run, else the run's own input (messages, or its plain input)."""
    own = last_user_message(item.span.input_messages)
    if own is not None:
        return _unwrapped(own, item, conv)
    if item.span.kind in RUN_KINDS:  # an agent or workflow span's answer: its own input first
        found = question_from_input(item.span.input_text)
        if found is not None:
            return found, item.span
    run = run_of(item, conv)
    earlier = [
        x
        for x in conv.spans
        if x.trace is item.trace
        and x.span.kind is SpanKind.LLM
        and x.span.start <= item.span.start
        and x.span is not item.span
        and run_of(x, conv) is run
    ]
    for other in sorted(earlier, key=lambda x: x.span.start, reverse=True):
        found = last_user_message(other.span.input_messages)
        if found is not None:
            return _unwrapped(found, item, conv)
    for ancestor in conv.ancestors(item):
        if ancestor.kind not in RUN_KINDS:
            continue
        found = last_user_message(ancestor.input_messages) or question_from_input(ancestor.input_text)
        if found is not None:
            return found, ancestor
    return None, None


def _unwrapped(user_turn: str, item: Located, conv: Conversation) -> tuple[str, Span | None]:
    """The user's own words when a framework wrapped them in its prompt template.

    smolagents sends ``New task:\n<task>``, BeeAI ``Your task: <input>``, a RAG template the
    retrieved context and the question: the agent or chain span that runs the call was given the
    words alone (``input.value``, or a question-keyed value inside it, as in a Haystack pipeline's
    ``{"data": {"prompt_builder": {"question": ...}}}``). The nearest such span whose input occurs inside the user turn
    gives the question (and is its source); otherwise the user turn is the question.
    """
    turn = normalise(user_turn)
    for ancestor in conv.ancestors(item):
        if ancestor.kind not in RUN_KINDS:
            continue
        own = last_user_message(ancestor.input_messages) or question_from_input(ancestor.input_text)
        for asked in [own] if own is not None else questions_in_input(ancestor.input_text):
            if normalise(asked) != turn and normalise(asked) in turn:
                return asked, ancestor
    return user_turn, None


def question_type(item: Located, conv: Conversation, attribute: str | None) -> str | None:
    if attribute is None:
        return None
    for span in [item.span, *conv.ancestors(item)]:
        if attribute in span.attributes:
            return str(span.attributes[attribute])
    return None
