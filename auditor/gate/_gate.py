"""The release gate: does a golden run's audit clear the policy's thresholds?

:func:`decide` is pure: it takes the figures (:class:`~auditor.metrics.Summary`), the audited
answers and the policy's thresholds and returns a typed :class:`GateDecision`. :func:`run_gate` is the
library call behind ``auditor gate``: audit the traces, decide, optionally store the run.

The rules (DESIGN, "Semantics that must hold"; the seeds' ``release_gate``):

- **pass rate**: grounded answers / non-refusal answers must reach ``release_pass_rate``; with no
  non-refusal answer there is nothing to gate and the check fails;
- **contradictions**: any contradicted claim fails the gate, whatever the ratio (and whatever the
  policy's per-answer ``contradictions_allowed``);
- **fail closed**: an answer with an unjudged claim is never grounded, so it cannot pass; and
  "cannot tell" fails the gate itself (``undecided``): any unjudged claim (``offline_undecided``,
  ``timeout``, ...) fails the check at any ratio, as a contradiction does, since it may be one; so a
  judge that declines cannot pass a release inside the pass-rate tolerance;
- **conflicts**: an answer with a claim whose admitted sources disagree and whose verdict the
  policy's ``on_conflict = "flag"`` left standing is not grounded, so it cannot pass, unless the
  policy sets ``conflicts_allowed = true``;
- **refusals**, with a labels file: ``refusal_accuracy`` (refused / unanswerable) must reach its
  threshold and ``over_refusal`` (refused / answerable) must not exceed its threshold, each when the
  policy sets it. A configured threshold with no labelled question to measure it on fails;
- **citation support**, when the policy sets ``min_citation_support``: markers whose cited item
  supports the claim / markers on judged claims must reach it; with no marker to measure it on,
  the check fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from auditor.errors import UsageError
from auditor.evidence import NO_ANSWER
from auditor.metrics import Labels, Rate, Summary, match_labels
from auditor.metrics import rate as make_rate
from auditor.policy import Policy, Thresholds
from auditor.results import AnswerOut, AuditResult


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GateCheck(_Model):
    """One threshold the gate applied."""

    name: Literal[
        "answer_pass_rate",
        "contradictions",
        "undecided",
        "refusal_accuracy",
        "over_refusal",
        "citation_support",
    ]
    passed: bool
    observed: Rate | None  # None when the figure could not be computed (no labels)
    comparison: Literal[">=", "<=", "=="]
    threshold: float
    detail: str  # one line for the verdict: figure, denominator, interval and what was required


class AnswerCase(_Model):
    """One answer as a gate test case."""

    answer_id: str
    trace_id: str
    question: str | None
    status: Literal["passed", "failed", "refusal"]
    contradicted: tuple[str, ...] = ()  # claim texts
    unsupported: tuple[str, ...] = ()  # absent claim texts
    unjudged: tuple[str, ...] = ()
    conflicted: tuple[str, ...] = ()  # claim texts resting on admitted sources that disagree (flagged)
    reasons: tuple[str, ...] = ()  # why it failed, in words (empty when it passed)


class GateDecision(_Model):
    """What the gate decided, and on which figures."""

    passed: bool
    checks: tuple[GateCheck, ...]
    answers: tuple[AnswerCase, ...]
    summary: Summary

    @property
    def failed_checks(self) -> list[GateCheck]:
        return [c for c in self.checks if not c.passed]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def describe_rate(rate: Rate, unit: str) -> str:
    """``90.0% (9/10 answers; Wilson 95% 59.6-98.2%, Clopper-Pearson 95% 55.5-99.7%)``."""
    text = f"{_pct(rate.value)} ({rate.numerator}/{rate.denominator} {unit}"
    for name, interval in (("Wilson", rate.wilson), ("Clopper-Pearson", rate.clopper_pearson)):
        if interval is not None:
            text += f"; {name} {interval.confidence:.0%} {_pct(interval.low)}-{_pct(interval.high)}"
    return text + ")"


def answer_case(answer: AnswerOut, answerable: bool | None = None) -> AnswerCase:
    """The gate's view of one audited answer."""
    claims = [c for c in answer.claims or [] if not c.screened]
    contradicted = tuple(c.text for c in claims if c.verdict == "contradicted")
    unsupported = tuple(c.text for c in claims if c.verdict == "absent")
    unjudged = tuple(c.text for c in claims if c.verdict == "unjudged" or c.verdict is None)
    conflicted = tuple(c.text for c in claims if c.conflicts and c.conflict_resolution in ("flag", None))
    if answer.refusal:
        reasons = ("refused a question labelled answerable",) if answerable is True else ()
        return AnswerCase(
            answer_id=answer.answer_id,
            trace_id=answer.trace_id,
            question=answer.question,
            status="failed" if reasons else "refusal",
            reasons=reasons,
        )
    reasons_list: list[str] = []
    if contradicted:
        reasons_list.append(f"{len(contradicted)} contradicted claim(s)")
    if unjudged:
        reasons_list.append(
            f"{len(unjudged)} unjudged claim(s): an answer with an unjudged claim cannot pass"
        )
    if conflicted and answer.grounded is not True:
        reasons_list.append(
            f"{len(conflicted)} claim(s) on admitted sources that disagree (on_conflict = flag): "
            "it cannot pass unless the policy sets conflicts_allowed"
        )
    if unsupported and answer.grounded is not True:
        reasons_list.append(
            f"{len(unsupported)} unsupported claim(s); groundedness {_pct(answer.groundedness)}"
        )
    if answer.grounded is not True and not reasons_list:
        reasons_list.append(
            "no judged claim"
            if answer.groundedness is None
            else f"groundedness {_pct(answer.groundedness)} below the policy's claim_support"
        )
    if answerable is False:
        reasons_list.append("answered a question labelled unanswerable")
    return AnswerCase(
        answer_id=answer.answer_id,
        trace_id=answer.trace_id,
        question=answer.question,
        status="passed" if answer.grounded is True and answerable is not False else "failed",
        contradicted=contradicted,
        unsupported=unsupported,
        unjudged=unjudged,
        conflicted=conflicted,
        reasons=tuple(reasons_list) if answer.grounded is not True or answerable is False else (),
    )


def decide(
    summary: Summary, answers: Sequence[AnswerOut], thresholds: Thresholds, labels: Labels | None = None
) -> GateDecision:
    """Apply the gate's rules (module docstring) to an audited run.

    Args:
        summary: the run's figures (``summarise`` over ``answers``, with the same labels).
        answers: the audited answers (claims and verdicts set).
        thresholds: the policy's thresholds.
        labels: the labels file the summary was computed with, if any (marks answers that refused an
            answerable question or answered an unanswerable one).
    """
    checks: list[GateCheck] = []
    rate = summary.answer_pass_rate
    checks.append(
        GateCheck(
            name="answer_pass_rate",
            comparison=">=",
            threshold=thresholds.release_pass_rate,
            observed=rate,
            passed=rate.value is not None and rate.value >= thresholds.release_pass_rate,
            detail=f"grounded answers {describe_rate(rate, 'non-refusal answers')}, "
            f"required >= {thresholds.release_pass_rate:.1%}"
            + ("" if rate.denominator else "; no non-refusal answer to gate"),
        )
    )
    contradicted_answers = sum(1 for a in answers if (a.contradicted or 0) > 0)
    checks.append(
        GateCheck(
            name="contradictions",
            comparison="==",
            threshold=0,
            observed=summary.contradiction_rate,
            passed=summary.contradicted == 0,
            detail=f"contradicted claims {summary.contradicted} (of {summary.judged_claims} judged claims, "
            f"in {contradicted_answers} answer(s)), required 0 at any ratio",
        )
    )
    checks.append(undecided_check(summary, answers))
    refusal = summary.refusal
    refusal_checks: tuple[
        tuple[Literal["refusal_accuracy", "over_refusal"], Literal[">=", "<="], float | None], ...
    ] = (
        ("refusal_accuracy", ">=", thresholds.refusal_accuracy),
        ("over_refusal", "<=", thresholds.over_refusal),
    )
    for name, comparison, limit in refusal_checks:
        if limit is None or refusal is None:
            continue
        observed = refusal.refusal_accuracy if name == "refusal_accuracy" else refusal.over_refusal
        unit = "unanswerable questions" if name == "refusal_accuracy" else "answerable questions"
        ok = observed.value is not None and (
            observed.value >= limit if comparison == ">=" else observed.value <= limit
        )
        detail = (
            f"{name.replace('_', ' ')} {describe_rate(observed, unit)}, required {comparison} {limit:.1%}"
        )
        if observed.denominator == 0:
            detail += f"; no labelled {unit} to measure it on"
        checks.append(
            GateCheck(
                name=name,
                comparison=comparison,
                threshold=limit,
                observed=observed,
                passed=ok,
                detail=detail,
            )
        )
    if thresholds.min_citation_support is not None:
        checks.append(citation_check(summary, thresholds.min_citation_support))
    answerable: dict[int, bool] = {}
    if labels is not None:
        answerable = {i: label.answerable for i, label in match_labels(answers, labels).by_answer.items()}
    cases = tuple(answer_case(a, answerable.get(i)) for i, a in enumerate(answers))
    return GateDecision(
        passed=all(c.passed for c in checks), checks=tuple(checks), answers=cases, summary=summary
    )


def undecided_check(summary: Summary, answers: Sequence[AnswerOut]) -> GateCheck:
    """Fail closed on "cannot tell": no claim may be unjudged, at any ratio (it may hide a contradiction)."""
    with_claim = [a for a in answers if not a.refusal and any(not c.screened for c in a.claims or [])]
    unjudged = sum(
        any(not c.screened and c.verdict in (None, "unjudged") for c in a.claims or []) for a in with_claim
    )
    observed = make_rate(unjudged, len(with_claim), intervals=True)
    reasons = ", ".join(f"{k} {v}" for k, v in summary.unjudged_by_reason.items()) or "none"
    detail = (
        f"answers the judge could not decide {summary.undecided_answers}, with an unjudged claim {unjudged} "
        f"(of {len(with_claim)} answers with a claim; unjudged claims by reason: {reasons}), "
        "required 0 at any ratio"
    )
    if unjudged and "offline_undecided" in summary.unjudged_by_reason:
        detail += "; re-run with --judge openai:MODEL (the cascade sends the LLM only the undecided claims)"
    return GateCheck(
        name="undecided",
        comparison="==",
        threshold=0,
        observed=observed,
        passed=unjudged == 0 and summary.unjudged == 0,
        detail=detail,
    )


def citation_check(summary: Summary, limit: float) -> GateCheck:
    """Citation support against the policy's ``min_citation_support``; no marker to measure fails."""
    figures = summary.citations
    if figures is None:
        observed = None
        detail = f"citation support n/a, required >= {limit:.1%}; no judged claim carries a citation marker"
    else:
        observed = figures.support
        wrong = figures.misattribution
        detail = (
            f"citation support {describe_rate(observed, 'markers')}, required >= {limit:.1%}; "
            f"misattributed {wrong.numerator} of {wrong.denominator} claims with a marker, "
            f"{figures.unresolved} marker(s) naming nothing admitted"
        )
    return GateCheck(
        name="citation_support",
        comparison=">=",
        threshold=limit,
        observed=observed,
        passed=observed is not None and observed.value is not None and observed.value >= limit,
        detail=detail,
    )


@dataclass(frozen=True)
class GateRun:
    """An audited golden run and the gate's decision on it."""

    result: AuditResult
    decision: GateDecision
    run_id: str | None = None  # the stored run, when a store was given


def run_gate(
    paths: Sequence[Path],
    policy: Policy,
    *,
    judge: str = "offline",
    base_url: str | None = None,
    labels: Labels | None = None,
    db_url: str | None = None,
    format: str | None = None,
    concurrency: int = 8,
    calibration: str | None = None,
    rate_limit: float | None = None,
) -> GateRun:
    """Audit ``paths`` and decide the gate.

    ``calibration`` chooses the calibration that corrects the figures, as for
    :func:`auditor.run.audit` (None: the judge's newest; ``"none"``; or a stored id).
    ``rate_limit`` caps an LLM judge's requests per second, as for :func:`auditor.run.audit`.

    The inputs are read once before the audit, so a partial golden set or a labels file that
    labels none of its answers fails before any judging (or LLM cost) and before a run is stored.

    Raises:
        UsageError: an input file yielded no trace (the gate would judge a partial golden set), a
            labels file matches no answer, or an error from reading the inputs or building the judge.
        NothingReadError: no trace at all could be read.
    """
    from auditor.run import audit  # the audit edge pulls in the judges; import only when gating

    check_golden_set(paths, policy, labels, format)
    result = audit(
        list(paths),
        policy=policy,
        judge=judge,
        base_url=base_url,
        labels=labels,
        format=format,
        concurrency=concurrency,
        db_url=db_url,
        calibration=calibration,
        rate_limit=rate_limit,
    )
    summary = Summary.model_validate(result.summary)
    decision = decide(summary, result.answers, policy.thresholds, labels)
    return GateRun(result=result, decision=decision, run_id=result.run.id)


def check_golden_set(
    paths: Sequence[Path], policy: Policy, labels: Labels | None = None, format: str | None = None
) -> None:
    """Refuse a golden set the gate cannot judge whole: a file with no trace, or labels for none of it.

    Raises:
        UsageError: naming the empty files (with the first reasons), the traces with model calls
            that yielded no answer, or the labels file and the trace ids the set does hold.
        NothingReadError: no trace at all could be read.
    """
    from auditor.pipeline import find_answers  # pulls in the judges, as the audit does

    ingested, answers = find_answers(paths, format, policy)
    empty = [i.path for i in ingested.inputs if i.traces == 0]
    if empty:
        reasons = [p.reason for p in ingested.problems if p.file in empty][:3]
        raise UsageError(
            f"{', '.join(empty)}: no trace could be read ({'; '.join(reasons) or 'no spans'}); "
            "the gate will not judge a partial golden set."
        )
    unanswered = [p for p in ingested.problems if p.code == NO_ANSWER]
    if unanswered:
        raise UsageError(
            f"{len(unanswered)} trace(s) of the golden set hold model calls but yielded no answer "
            f"(the first: {unanswered[0].reason}); the gate will not judge a partial golden set "
            "(`auditor inspect FILE` shows what was read)."
        )
    if labels is not None and answers and not match_labels(answers, labels).by_answer:
        ids = sorted({a.trace_id for a in answers})
        shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        raise UsageError(
            f"{labels.source}: none of its {len(labels.labels)} label(s) matches an answer of the golden "
            f"set (labels match by answer_id, trace_id or exact question; its traces are {shown}); "
            "fix the labels file or leave --labels out."
        )
