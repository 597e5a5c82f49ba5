"""``assert_grounded``: one answer audited inside a test, failing with what is unsupported and why.

The answer goes through the same stages as ``auditor audit``: given evidence texts, it becomes a
``records`` trace (the evidence as retrieved documents, the answer as the model's output); given a
trace (a :class:`~auditor.trace.Trace` or a trace file), its answers are reconstructed as in any
audit and the one with the answer's text is checked. The verdicts are the judge's, under the
policy's thresholds, so a test passes exactly when the answer would count as grounded in a run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from auditor.errors import UsageError
from auditor.evidence import reconstruct
from auditor.judges import build_judge, describe_unjudged
from auditor.llm import run_sync
from auditor.pipeline import audit_all, audit_out
from auditor.policy import Policy, load_policy
from auditor.results import AnswerOut, ClaimOut
from auditor.settings import SETTINGS
from auditor.text import clip, normalise
from auditor.trace import Document, Trace, read_traces, record_trace, repair_trace

#: What ``assert_grounded`` takes as evidence: texts, documents (``Document`` or a mapping with
#: ``text``, optional ``id`` and ``metadata``), a :class:`Trace`, or a path to a trace file.
Evidence: TypeAlias = str | Document | Mapping[str, Any] | Sequence[str | Document | Mapping[str, Any]]
EvidenceOrTrace: TypeAlias = Evidence | Trace | os.PathLike[str]
PolicyLike: TypeAlias = Policy | str | Path | None


class NotGroundedError(AssertionError):
    """An answer the judge does not find grounded; the message lists its unsupported claims."""

    def __init__(self, message: str, answers: Sequence[AnswerOut]) -> None:
        super().__init__(message)
        self.answers = list(answers)


NotGroundedError.__module__ = "auditor.testing"  # as pytest names it in a failure


@dataclass(frozen=True)
class CheckConfig:
    """Which judge and policy a check uses when the call does not say."""

    judge: str | None = None
    policy: str | Path | None = None
    base_url: str | None = None

    def judge_spec(self, given: str | None = None) -> str:
        """``given`` > this config (``--auditor-judge``, then ``AUDITOR_JUDGE``, then the ini) > offline."""
        variable = SETTINGS["judge"][0]
        return given or self.judge or os.environ.get(variable) or "offline"

    def load(self, given: PolicyLike = None) -> Policy:
        if isinstance(given, Policy):
            return given
        return load_policy(given or self.policy or os.environ.get(SETTINGS["policy"][0]) or None)


def _documents(evidence: Evidence) -> list[dict[str, Any]]:
    items: Sequence[Any] = [evidence] if isinstance(evidence, str | Document | Mapping) else evidence
    sources: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Document):
            sources.append({"id": item.id, "text": item.text, "metadata": item.metadata})
        elif isinstance(item, Mapping):
            sources.append(dict(item))
        elif isinstance(item, str):
            sources.append({"text": item})
        else:
            raise UsageError(
                f"assert_grounded: evidence item {item!r} is {type(item).__name__}; pass texts, "
                "Documents, mappings with 'text', a Trace or a trace file path."
            )
    return sources


def _traces(answer: str, evidence: EvidenceOrTrace, question: str | None) -> list[Trace]:
    if isinstance(evidence, Trace):
        return [evidence]
    if isinstance(evidence, os.PathLike):
        return read_traces([Path(evidence)]).traces
    record = {"question": question, "sources": _documents(evidence), "answer": answer}
    trace, _ = record_trace(record, "assert-grounded", "assert_grounded", 1)
    return [repair_trace(trace, "assert_grounded")[0]]


async def _audit(traces: list[Trace], policy: Policy, judge: str, base_url: str | None) -> list[AnswerOut]:
    setup = build_judge(judge, base_url=base_url)
    await setup.check()
    try:
        answers = reconstruct(traces, policy.answer_selection())
        audits = await audit_all(answers, policy, setup.extractor, setup.judge, fused=setup.fused)
    finally:
        await setup.aclose()
    return [audit_out(a) for a in audits]


def audit_text(
    answer: str | None,
    evidence: EvidenceOrTrace,
    policy: Policy,
    *,
    question: str | None = None,
    judge: str = "offline",
    base_url: str | None = None,
) -> list[AnswerOut]:
    """The audited answers: the one given with its evidence, or those of a trace whose text is
    ``answer`` (every answer of the trace when ``answer`` is None).

    Raises:
        UsageError: no answer of the trace has this text, or the evidence is of an unknown kind.
    """
    is_trace = isinstance(evidence, Trace | os.PathLike)
    if answer is None and not is_trace:
        raise UsageError("assert_grounded: answer is None; pass the answer's text (None only with a trace).")
    audited = run_sync(lambda: _audit(_traces(answer or "", evidence, question), policy, judge, base_url))
    if not is_trace or answer is None:
        return audited
    wanted = normalise(answer)
    found = [a for a in audited if normalise(a.text) == wanted]
    if not found:
        shown = "; ".join(repr(clip(a.text, 60)) for a in audited[:3]) or "none"
        raise UsageError(
            f"assert_grounded: no answer in the trace has this text ({clip(answer, 60)!r}); "
            f"its answers: {shown}. Pass one of them, or None for all."
        )
    return found


def _claim_lines(claim: ClaimOut, answer: AnswerOut) -> list[str]:
    # Items by the names a test author gave them (document id, tool name), not internal ids.
    named = {e.evidence_id: e.document_id or e.name or e.evidence_id for e in answer.evidence}
    excluded = {e.evidence_id: e for e in answer.evidence if e.admitted is False}
    lines = [f"  - {claim.verdict}: {clip(claim.text, 300)!r}"]
    for cite in claim.citations:
        lines.append(f"      {named.get(cite.evidence_id, cite.evidence_id)} says: {clip(cite.quote, 200)!r}")
    if claim.inadmissible_support:
        why = ", ".join(
            f"{named.get(i, i)} ({excluded[i].reason})"
            if i in excluded and excluded[i].reason
            else named.get(i, i)
            for i in claim.inadmissible_support
        )
        lines.append(f"      rests only on excluded evidence: {why}")
    if claim.unjudged_reason:
        lines.append(
            f"      not decided ({claim.unjudged_reason}): {describe_unjudged(claim.unjudged_reason)}"
        )
    if claim.rationale:
        lines.append(f"      why: {clip(claim.rationale, 300)}")
    for conflict in claim.conflicts:
        lines.append(
            f"      conflict: {named.get(conflict.evidence_id, conflict.evidence_id)} {conflict.stance} it: {clip(conflict.quote, 200)!r}"
        )
    return lines


def explain(answer: AnswerOut, policy: Policy, judge: str) -> str:
    """Why ``answer`` is not grounded: the figures against the policy's thresholds, then each
    claim that is not supported with its verdict, quotes and reason."""
    claims = answer.claims or []
    judged = [c for c in claims if not c.screened and c.verdict in ("supported", "contradicted", "absent")]
    supported = sum(c.verdict == "supported" for c in judged)
    limits = policy.thresholds
    where = f"[policy {policy.name} {policy.sha256[:12]}, judge {judge}{' (approximate)' if judge == 'offline' else ''}]"
    if not judged and not answer.unjudged:
        head = (
            "answer is not grounded: it makes no claim to judge (a refusal, or only screened sentences); "
            f"grounded needs at least one judged claim {where}"
        )
    elif answer.undecided:
        head = (
            f"answer is undecided: {supported} of {len(judged)} judged claims supported and none "
            f"unsupported, but {answer.unjudged or 0} claim(s) could not be decided, and an answer the "
            f"judge cannot decide does not pass {where}"
        )
    else:
        head = (
            f"answer is not grounded: {supported} of {len(judged)} judged claims supported "
            f"({answer.groundedness if answer.groundedness is not None else 0:.2f}; the policy asks "
            f">= {limits.claim_support:.2f}), {answer.contradicted or 0} contradicted (allowed "
            f"{limits.contradictions_allowed}), {answer.unjudged or 0} unjudged {where}"
        )
    lines = [head, f"  answer: {clip(answer.text, 300)!r}"]
    unsupported = [c for c in claims if not c.screened and c.verdict != "supported"]
    if unsupported:
        lines.append("undecided claims:" if answer.undecided else "unsupported claims:")
        for claim in unsupported:
            lines.extend(_claim_lines(claim, answer))
    screened = sum(c.screened for c in claims)
    if screened:
        lines.append(f"({screened} sentence(s) screened out as non-claims)")
    return "\n".join(lines)


def check_answers(answers: Sequence[AnswerOut], policy: Policy, judge: str) -> None:
    """Raise :class:`NotGroundedError` unless every answer is grounded."""
    __tracebackhide__ = True  # pytest shows the test's line, not this one
    failed = [a for a in answers if a.grounded is not True]
    if failed:
        raise NotGroundedError("\n\n".join(explain(a, policy, judge) for a in failed), failed)


def assert_grounded(
    answer: str | None,
    evidence_or_trace: EvidenceOrTrace,
    policy: PolicyLike = None,
    *,
    question: str | None = None,
    judge: str | None = None,
    base_url: str | None = None,
    config: CheckConfig | None = None,
) -> list[AnswerOut]:
    """Fail unless ``answer`` is grounded in ``evidence_or_trace`` under ``policy``.

    Args:
        answer: the answer's text; with a trace, the text of one of its answers (None: all of them).
        evidence_or_trace: evidence texts or documents, a :class:`~auditor.trace.Trace`, or a trace
            file (a :class:`~pathlib.Path`; any format ``auditor audit`` reads).
        policy: a :class:`~auditor.policy.Policy`, a policy file or a shipped policy's name; default
            ``AUDITOR_POLICY``, else the shipped default.
        question: the question the answer replies to (with evidence texts only).
        judge: ``offline`` (the default: approximate, no network) or ``openai:MODEL``; default
            ``AUDITOR_JUDGE``, else offline. In pytest, ``--auditor-judge`` / ``auditor_judge`` too.
        base_url: an OpenAI-compatible endpoint for an ``openai:`` judge.
        config: defaults for judge and policy (the pytest plugin passes its options).

    Returns:
        The audited answers (each grounded), for further checks.

    Raises:
        NotGroundedError: (an ``AssertionError``) listing each unsupported claim with its verdict,
            quotes and reason.
        UsageError: bad arguments (an unknown policy or judge, no such answer in the trace).
    """
    __tracebackhide__ = True
    config = config or CheckConfig()
    loaded = config.load(policy)
    spec = config.judge_spec(judge)
    answers = audit_text(
        answer,
        evidence_or_trace,
        loaded,
        question=question,
        judge=spec,
        base_url=base_url or config.base_url or os.environ.get(SETTINGS["base_url"][0]) or None,
    )
    check_answers(answers, loaded, spec)
    return answers
