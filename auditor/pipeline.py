"""The one place that knows the order of the stages.

``trace -> evidence -> policy -> claims -> verdicts -> citations -> (figures) -> results``. Stages
know nothing about each other's scheduling; this module calls them in order, runs answers
concurrently with a bound, and assembles the public result.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Protocol

from auditor.claims import ClaimExtractor, Decomposition, attach_markers, resolve_markers
from auditor.errors import UsageError
from auditor.evidence import (
    Answer,
    Evidence,
    Inspection,
    count_unanswered,
    inspect_traces,
    reconstruct,
    unanswered_traces,
)
from auditor.judges import (
    Attribution,
    ClaimVerdict,
    FusedResult,
    Judge,
    JudgeIdentity,
    check_citations,
    check_complete,
    settle_conflict,
    verify_conflicts,
    verify_quotes,
    with_state_conflict,
)
from auditor.policy import Decision, Policy, document_date, evaluate, load_policy
from auditor.results import (
    AnswerFigures,
    AnswerOut,
    AuditResult,
    InputRef,
    PolicyRef,
    ProblemOut,
    RunInfo,
    answer_figures,
    answer_out,
    claim_out,
    judge_ref,
)
from auditor.trace import IngestResult, Problem, Trace, read_traces


def policy_ref(policy: Policy) -> PolicyRef:
    return PolicyRef(name=policy.name, version=policy.version, sha256=policy.sha256)


def problem_out(problem: Problem) -> ProblemOut:
    """One input problem in the public result's shape."""
    return ProblemOut(
        file=problem.file,
        line=problem.line,
        severity=problem.severity.value,
        reason=problem.reason,
        trace_id=problem.trace_id,
        span_id=problem.span_id,
        code=problem.code,
    )


def run_info(ingested: IngestResult, started: datetime, policy: Policy | None) -> RunInfo:
    return RunInfo(
        id=uuid.uuid4().hex,
        started_at=started,
        policy=policy_ref(policy) if policy else None,
        judge=None,
        inputs=[
            InputRef(path=i.path, sha256=i.sha256, format=i.format, traces=i.traces) for i in ingested.inputs
        ],
        problems=[problem_out(p) for p in ingested.problems],
        unanswered_traces=count_unanswered(ingested.problems),
    )


def _comparable(trace_id: str) -> str:
    return trace_id.lower().replace("-", "")


def _listed(ids: Sequence[str], limit: int = 5) -> str:
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return ", ".join(ids[:limit]) + more


def select_trace(answers: list[Answer], trace_id: str | None, trace_ids: Sequence[str]) -> list[Answer]:
    """Answers of the one trace whose id is, or starts with, ``trace_id`` (dashes and case ignored).

    Args:
        answers: every answer found.
        trace_id: the id or a unique prefix; None or empty keeps every answer.
        trace_ids: the ids of every trace read (named in the error when none matches).

    Raises:
        UsageError: no trace matches (the first few ids are named), the prefix matches several
            traces, or the trace holds no answer.
    """
    if not trace_id:
        return answers
    wanted = _comparable(trace_id)
    matching = sorted({t for t in trace_ids if _comparable(t).startswith(wanted)})
    exact = [t for t in matching if _comparable(t) == wanted]
    if exact:
        matching = exact
    if not matching:
        known = sorted(set(trace_ids))
        raise UsageError(
            f"--trace-id {trace_id}: no trace has this id or prefix; the input holds {len(known)} "
            f"trace(s): {_listed(known) or 'none'}. Pass one of these (a unique prefix is enough)."
        )
    if len(matching) > 1:
        raise UsageError(
            f"--trace-id {trace_id}: the prefix matches {len(matching)} traces ({_listed(matching)}); "
            "give more of the id."
        )
    selected = [a for a in answers if a.trace_id == matching[0]]
    if not selected:
        raise UsageError(
            f"--trace-id {trace_id}: trace {matching[0]} holds no answer the policy's [answers] section "
            "selects; run without --trace-id to see which traces have answers."
        )
    return selected


def find_answers(
    paths: Sequence[Path], format: str | None, policy: Policy, trace_id: str | None = None
) -> tuple[IngestResult, list[Answer]]:
    """Read the traces and reconstruct the answers the policy's ``[answers]`` section selects.

    Each trace that holds model calls but yields no answer is added to ``ingested.problems``
    (never a silent zero: :func:`~auditor.evidence.unanswered_traces`).

    Raises:
        UsageError: ``trace_id`` selects no answer (see :func:`select_trace`).
    """
    ingested = read_traces(paths, format)
    return ingested, trace_answers(ingested.traces, policy, trace_id, ingested.problems)


def trace_answers(
    traces: Sequence[Trace],
    policy: Policy,
    trace_id: str | None = None,
    problems: list[Problem] | None = None,
) -> list[Answer]:
    """The answers the policy's ``[answers]`` section selects in traces already read (a stored
    run's kept traces, for a re-audit): :func:`find_answers` without the files.

    When ``problems`` is given, a problem for each trace with model calls and no answer is appended.

    Raises:
        UsageError: ``trace_id`` selects no answer (see :func:`select_trace`).
    """
    selection = policy.answer_selection()
    answers = reconstruct(traces, selection)
    if problems is not None:
        problems.extend(unanswered_traces(traces, answers, selection))
    return select_trace(answers, trace_id, [t.trace_id for t in traces])


def inspect_paths(
    paths: Sequence[Path], format: str | None = None, policy: Policy | None = None
) -> Inspection:
    """Read ``paths`` and lay out, span by span, what was read from each trace (``auditor inspect``).

    Args:
        paths: trace files (any installed format).
        format: force an adapter by name instead of sniffing.
        policy: its ``[answers]`` section decides which spans are answers; the shipped default when None.
    """
    policy = policy or load_policy()
    ingested, answers = find_answers(paths, format, policy)
    return inspect_traces(ingested.traces, answers, ingested.problems)


def collect_evidence(
    paths: Sequence[Path],
    format: str | None = None,
    trace_id: str | None = None,
    policy: Policy | None = None,
) -> AuditResult:
    """Read ``paths`` and return every answer with the evidence it could draw on, decided by ``policy``.

    Args:
        paths: trace files (any installed format; gzip is fine).
        format: force an adapter by name instead of sniffing.
        trace_id: keep only answers from this trace (a unique prefix is enough).
        policy: the admissible-source policy; the shipped default when None.
    """
    started = datetime.now(UTC)
    policy = policy or load_policy()
    ingested, answers = find_answers(paths, format, policy, trace_id)
    return AuditResult(
        run=run_info(ingested, started, policy),
        answers=[answer_out(a, evaluate(policy, a)) for a in answers],
    )


@dataclass(frozen=True)
class AnswerAudit:
    """Everything the audit decided about one answer."""

    answer: Answer
    decisions: list[Decision]
    decomposition: Decomposition
    verdicts: list[ClaimVerdict]
    figures: AnswerFigures
    citations: dict[str, Attribution] = field(default_factory=dict)  # by claim id: markers checked


class FusedAuditor(Protocol):
    """Decomposes and judges an answer in one step (one LLM call): see :mod:`auditor.judges.llm._fused`."""

    identity: JudgeIdentity

    async def audit(
        self,
        answer: Answer,
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> FusedResult: ...


@dataclass(frozen=True)
class _Judged:
    """An answer's admission and the judge's raw verdicts, before they are concluded."""

    decisions: list[Decision]
    admitted: list[Evidence]
    excluded: list[Evidence]
    raw: list[ClaimVerdict]


def _admission(answer: Answer, policy: Policy) -> tuple[list[Decision], list[Evidence], list[Evidence]]:
    decisions = evaluate(policy, answer)
    admitted = [e for e, d in zip(answer.evidence, decisions, strict=True) if d.admitted]
    excluded = [e for e, d in zip(answer.evidence, decisions, strict=True) if not d.admitted]
    return decisions, admitted, excluded


def _conclude(
    answer: Answer,
    decisions: list[Decision],
    decomposition: Decomposition,
    raw: Sequence[ClaimVerdict],
    policy: Policy,
    identity: JudgeIdentity,
    admitted: Sequence[Evidence],
    excluded: Sequence[Evidence],
) -> AnswerAudit:
    # Never trust a judge's quotes or ids: verification applies to every judge alike, to both
    # sides of a conflict too; then the policy's on_conflict decides what a conflicted verdict becomes.
    by_id = {e.evidence_id: e for e in admitted}
    texts = {e.evidence_id: e.text for e in admitted}
    excluded_ids = {e.evidence_id for e in excluded}
    dates = {
        e.evidence_id: document_date(policy, e, d) for e, d in zip(answer.evidence, decisions, strict=True)
    }
    verdicts = []
    claims = decomposition.judgeable
    for claim, verdict in zip(claims, check_complete(claims, raw, settled_by=identity.kind), strict=True):
        checked = verify_quotes(verdict, by_id, claim_text=claim.text)
        checked = with_state_conflict(checked, claim.text, texts)
        checked = verify_conflicts(checked, partial(verify_quotes, evidence=by_id, claim_text=claim.text))
        checked = settle_conflict(checked, policy.evidence.on_conflict, dates)
        support = tuple(i for i in checked.inadmissible_support if i in excluded_ids)
        verdicts.append(checked.model_copy(update={"inadmissible_support": support}))
    figures = answer_figures(
        decomposition,
        verdicts,
        policy.thresholds.claim_support,
        policy.thresholds.contradictions_allowed,
        policy.thresholds.conflicts_allowed,
    )
    return AnswerAudit(answer, decisions, decomposition, verdicts, figures)


async def _judge_citations(
    audit: AnswerAudit, policy: Policy, judge: Judge | None, admitted: Sequence[Evidence]
) -> AnswerAudit:
    """Resolve each claim's citation markers and check them against the items they cite."""
    decomposition = attach_markers(audit.decomposition, audit.answer.text, audit.answer)
    claims = decomposition.judgeable
    resolutions = resolve_markers(audit.answer, claims)
    if not resolutions:
        return replace(audit, decomposition=decomposition)
    allow_common = policy.evidence.common_knowledge == "allow"
    citations = await check_citations(
        audit.answer, claims, audit.verdicts, resolutions, admitted, judge, allow_common
    )
    return replace(audit, decomposition=decomposition, citations=citations)


async def audit_answer(
    answer: Answer, decomposition: Decomposition, policy: Policy, judge: Judge
) -> AnswerAudit:
    """Judge one decomposed answer against the evidence its policy admits, then its citations."""
    judged = await _judged(answer, decomposition, policy, judge)
    return await _concluded(answer, decomposition, policy, judge, judged)


async def _judged(answer: Answer, decomposition: Decomposition, policy: Policy, judge: Judge) -> _Judged:
    decisions, admitted, excluded = _admission(answer, policy)
    claims = decomposition.judgeable
    allow_common = policy.evidence.common_knowledge == "allow"
    raw = await judge.judge(answer, claims, admitted, excluded, allow_common) if claims else []
    return _Judged(decisions, admitted, excluded, raw)


async def _concluded(
    answer: Answer, decomposition: Decomposition, policy: Policy, judge: Judge, judged: _Judged
) -> AnswerAudit:
    audit = _conclude(
        answer,
        judged.decisions,
        decomposition,
        judged.raw,
        policy,
        judge.identity,
        judged.admitted,
        judged.excluded,
    )
    return await _judge_citations(audit, policy, judge, judged.admitted)


async def audit_answer_fused(
    answer: Answer, policy: Policy, fused: FusedAuditor, judge: Judge | None = None
) -> AnswerAudit:
    """Decompose and judge one answer in a single call, then verify as for any judge.

    ``judge`` (the same model, as a plain judge) re-checks claims against the items their markers
    cite; without it such markers stay undecided.
    """
    decisions, admitted, excluded = _admission(answer, policy)
    outcome = await fused.audit(answer, admitted, excluded, policy.evidence.common_knowledge == "allow")
    audit = _conclude(
        answer, decisions, outcome.decomposition, outcome.verdicts, policy, fused.identity, admitted, excluded
    )
    return await _judge_citations(audit, policy, judge, admitted)


def audit_out(audit: AnswerAudit) -> AnswerOut:
    """One audited answer in the public result's shape."""
    verdicts = {v.claim_id: v for v in audit.verdicts}
    claims = [
        claim_out(c, verdicts.get(c.claim_id), audit.citations.get(c.claim_id))
        for c in audit.decomposition.claims
    ]
    return answer_out(audit.answer, audit.decisions, claims, audit.figures)


async def audit_all(
    answers: Sequence[Answer],
    policy: Policy,
    extractor: ClaimExtractor,
    judge: Judge,
    concurrency: int = 8,
    on_done: Callable[[AnswerAudit], Awaitable[None] | None] | None = None,
    fused: FusedAuditor | None = None,
) -> list[AnswerAudit]:
    """Decompose and judge ``answers``, at most ``concurrency`` waiting on the judge at a time;
    results in input order.

    An answer hands its slot on as soon as its judge has answered, and concludes (quotes checked,
    citations, figures) after the next answer has sent its request: the slot's cycle is the judge's
    latency plus the next request's preparation, not plus this answer's conclusion too (at C = 32
    in the LLM benchmark, store on: 0.86 -> 0.89 of C / latency, `docs/benchmarks.md`). A citation
    re-check the conclusion asks of the judge is bounded by the LLM client's own limiter.

    ``on_done`` is called as each answer finishes (in completion order), so a caller can store it
    at once and an interrupted run keeps what it finished; an awaitable it returns (a save) is
    awaited outside the concurrency bound, so the next answers' calls go on meanwhile. With ``fused``, each answer is decomposed
    and judged in one call instead (``extractor`` is not used; ``judge`` only re-checks claims
    against the items their citation markers name).
    """
    limiter = asyncio.Semaphore(concurrency)

    async def limited(job: Callable[[], Awaitable[AnswerAudit]]) -> AnswerAudit:
        audit = await job()  # the job holds the limiter for as long as it waits on the judge
        if on_done is not None:
            saved = on_done(audit)
            if saved is not None:
                await saved
        return audit

    jobs: list[Callable[[], Awaitable[AnswerAudit]]]
    if fused is not None:
        jobs = [partial(_fused_within, limiter, a, policy, fused, judge) for a in answers]
    else:
        # A local extractor (the rule-based one) splits a batch just ahead of the judging; one
        # that makes calls (an LLM decomposer) is given every answer at once, so its requests
        # fill the concurrency from the start instead of waiting batch by batch.
        local = getattr(extractor, "local", False)
        ahead = _DecomposedAhead(extractor, answers, max(1, concurrency) if local else max(1, len(answers)))
        jobs = [partial(ahead.audit, i, policy, judge, limiter) for i in range(len(answers))]
    return list(await asyncio.gather(*(limited(job) for job in jobs)))


class _DecomposedAhead:
    """Answers decomposed a batch at a time, one batch ahead of the judging (for a local extractor;
    one whose every answer is one batch behaves as before: all split, then all judged).

    Decomposing a whole run before judging any of it held back the first requests: about 0.15 s
    for 768 small answers with the rule-based decomposer, and for a large run the time to split
    every answer before the first verdict. A batch (``size`` answers, the concurrency) is still one
    :meth:`~auditor.claims.ClaimExtractor.decompose` call, so an LLM decomposer's cache is asked
    once per batch and equal answers in a batch share one call.
    """

    def __init__(self, extractor: ClaimExtractor, answers: Sequence[Answer], size: int) -> None:
        self.extractor = extractor
        self.answers = answers
        self.size = size
        self._batches: dict[int, asyncio.Future[list[Decomposition]]] = {}

    def _batch(self, k: int) -> asyncio.Future[list[Decomposition]]:
        if k not in self._batches:
            self._batches[k] = asyncio.ensure_future(
                self.extractor.decompose(self.answers[k * self.size : (k + 1) * self.size])
            )
        return self._batches[k]

    async def audit(
        self, index: int, policy: Policy, judge: Judge, limiter: asyncio.Semaphore
    ) -> AnswerAudit:
        k = index // self.size
        answer = self.answers[index]
        async with limiter:
            # Shielded: a job cancelled while it waits must not cancel the batch the others wait on.
            decompositions = await asyncio.shield(self._batch(k))
            if (k + 1) * self.size < len(self.answers):
                self._batch(k + 1)  # the next batch is split while this one waits on the judge
            decomposition = decompositions[index % self.size]
            judged = await _judged(answer, decomposition, policy, judge)
        # The slot is free: the next answer prepares and sends its request before this one concludes.
        await asyncio.sleep(0)
        return await _concluded(answer, decomposition, policy, judge, judged)


async def _fused_within(
    limiter: asyncio.Semaphore, answer: Answer, policy: Policy, fused: FusedAuditor, judge: Judge
) -> AnswerAudit:
    async with limiter:
        return await audit_answer_fused(answer, policy, fused, judge)


def audit_result(
    ingested: IngestResult, started: datetime, policy: Policy, judge: Judge, audits: Sequence[AnswerAudit]
) -> AuditResult:
    """The public JSON result of an audit (without the summary, which the metrics stage adds)."""
    info = run_info(ingested, started, policy).model_copy(update={"judge": judge_ref(judge.identity)})
    return AuditResult(run=info, answers=[audit_out(a) for a in audits])


async def audit_paths(
    paths: Sequence[Path],
    policy: Policy,
    extractor: ClaimExtractor,
    judge: Judge,
    format: str | None = None,
    trace_id: str | None = None,
    concurrency: int = 8,
) -> tuple[AuditResult, list[AnswerAudit]]:
    """Read, reconstruct, decide, decompose and judge: the whole audit of some trace files."""
    started = datetime.now(UTC)
    ingested, answers = find_answers(paths, format, policy, trace_id)
    audits = await audit_all(answers, policy, extractor, judge, concurrency)
    return audit_result(ingested, started, policy, judge, audits), audits
