"""Verdicts as OpenTelemetry GenAI evaluation events (``gen_ai.evaluation.result``).

The GenAI semantic conventions define ``gen_ai.evaluation.result`` as a log-based event "parented
to the GenAI operation span being evaluated": attributes ``gen_ai.evaluation.name`` (required),
``gen_ai.evaluation.score.value`` and ``gen_ai.evaluation.score.label`` (when applicable),
``gen_ai.evaluation.explanation`` (recommended) and ``error.type`` when the evaluation failed. The
events are emitted with the answer's LLM span as their context, so a tracing backend shows them on
that span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from auditor.results import AnswerOut

EVENT_NAME = "gen_ai.evaluation.result"
ANSWER_EVALUATION = "groundedness"
CLAIM_EVALUATION = "groundedness.claim"
_EXPLANATION_LIMIT = 1000


def _context(answer: AnswerOut) -> Any:
    try:
        span = SpanContext(
            trace_id=int(answer.trace_id, 16),
            span_id=int(answer.span_id, 16),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
    except ValueError:  # ids not in OTLP hex form: the event is emitted without a parent
        return None
    return set_span_in_context(NonRecordingSpan(span))


def _clip(text: str) -> str:
    return text if len(text) <= _EXPLANATION_LIMIT else text[: _EXPLANATION_LIMIT - 1] + "…"


def answer_attributes(answer: AnswerOut) -> dict[str, Any]:
    """The attributes of the answer-level event."""
    if answer.refusal:
        label, explanation = "refusal", "The answer makes no claim (a refusal)."
    elif answer.grounded is None:
        label, explanation = "not_judged", "No claim of the answer could be judged."
    else:
        label = "grounded" if answer.grounded else "ungrounded"
        bad = [c for c in answer.claims or [] if not c.screened and c.verdict != "supported"]
        explanation = (
            "Every judged claim is supported by admitted evidence."
            if not bad
            else "; ".join(f"{c.verdict}: {c.text}" for c in bad)
        )
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": ANSWER_EVALUATION,
        "gen_ai.evaluation.score.label": label,
        "gen_ai.evaluation.explanation": _clip(explanation),
    }
    if answer.groundedness is not None:
        attributes["gen_ai.evaluation.score.value"] = float(answer.groundedness)
    return attributes


def claim_attributes(answer: AnswerOut) -> list[dict[str, Any]]:
    """One attribute set per judgeable claim (screened-out sentences carry no verdict)."""
    out = []
    for claim in answer.claims or []:
        if claim.screened or claim.verdict is None:
            continue
        explanation = claim.text
        if claim.unjudged_reason:
            explanation += f" (unjudged: {claim.unjudged_reason})"
        elif claim.rationale:
            explanation += f" ({claim.rationale})"
        attributes: dict[str, Any] = {
            "gen_ai.evaluation.name": CLAIM_EVALUATION,
            "gen_ai.evaluation.score.label": claim.verdict,
            "gen_ai.evaluation.explanation": _clip(explanation),
        }
        if claim.verdict == "unjudged":
            attributes["error.type"] = claim.unjudged_reason or "unjudged"
        else:
            attributes["gen_ai.evaluation.score.value"] = 1.0 if claim.verdict == "supported" else 0.0
        out.append(attributes)
    return out


def emit_evaluation_events(event_logger: Any, answers: Sequence[AnswerOut]) -> int:
    """Emit the events of ``answers`` through an OpenTelemetry ``Logger``; returns how many."""
    count = 0
    for answer in answers:
        context = _context(answer)
        for attributes in [answer_attributes(answer), *claim_attributes(answer)]:
            event_logger.emit(event_name=EVENT_NAME, attributes=attributes, context=context)
            count += 1
    return count
