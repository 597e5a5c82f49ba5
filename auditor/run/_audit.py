"""``audit()``: one run of the pipeline over trace files, stored as it goes (the sync edge too).

It adds to the pipeline what a run needs around it: the store (each answer is saved as it
finishes, so an interrupted run keeps its work and can be resumed; the run's lease, renewed while
it runs, lets the next audit resume a run whose process was killed), the verdict cache in the
store, the metrics summary, token usage, and progress reports for a caller to display.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Unpack

from auditor.evidence import Answer
from auditor.llm import run_sync
from auditor.metrics import Labels, summarise
from auditor.pipeline import AnswerAudit, find_answers, run_info
from auditor.policy import Policy, load_policy
from auditor.results import AnswerOut, AuditResult, RunInfo, judge_ref
from auditor.run._correction import choose_calibration, with_correction
from auditor.run._into import RunTarget, audit_into_run, local_budget, store_judge
from auditor.run._options import AuditArgs, AuditOptions, with_changes
from auditor.run._progress import Progress
from auditor.run._usage import UsageMeter, merge_usage
from auditor.settings import run_lease
from auditor.store import (
    FinishHook,
    RunLease,
    Store,
    StoreWriter,
    new_owner,
    trace_digest,
)
from auditor.trace import IngestResult, Trace, fewer_collections


def finish_result(
    result: AuditResult, policy: Policy, labels: Labels | None, usage: dict[str, Any] | None
) -> AuditResult:
    """Add the metrics summary and the usage tally to a result."""
    summary = summarise(result.answers, labels, thresholds=policy.thresholds)
    run = result.run.model_copy(update={"usage": usage})
    return result.model_copy(update={"summary": summary.model_dump(mode="json"), "run": run})


async def audit_async(
    paths: Sequence[Path],
    options: AuditOptions | None = None,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    finish_with: FinishHook | None = None,
    begin_with: FinishHook | None = None,
    **changes: Unpack[AuditArgs],
) -> tuple[AuditResult, list[AnswerAudit]]:
    """Audit every answer in ``paths``; see :func:`audit`. Returns the result and the audits made now.

    ``finish_with`` runs in the transaction that marks the stored run finished (``auditor serve``
    marks its trace audited there, so the two commit together); ``begin_with`` in the one that
    records a new run, before any of its answers is written (``auditor serve`` records its sample
    and cap there, which the rollups key its answers by).
    """
    options = with_changes(options, changes, "audit_async")
    policy = options.policy or load_policy()
    started = datetime.now(UTC)
    with fewer_collections():  # the answers' reconstruction too, not only the reading
        ingested, answers = find_answers(paths, options.format, policy, options.trace_id)
    return await audit_answers_async(
        ingested,
        answers,
        policy,
        options,
        started=started,
        on_progress=on_progress,
        finish_with=finish_with,
        begin_with=begin_with,
    )


async def audit_answers_async(
    ingested: IngestResult,
    answers: Sequence[Answer],
    policy: Policy,
    options: AuditOptions,
    *,
    started: datetime,
    on_progress: Callable[[Progress], None] | None = None,
    finish_with: FinishHook | None = None,
    begin_with: FinishHook | None = None,
) -> tuple[AuditResult, list[AnswerAudit]]:
    """Audit ``answers`` (reconstructed from ``ingested``) as one stored run; see :func:`audit_async`.

    The inputs may come from files or from elsewhere (the store's kept traces, for a re-audit).
    ``policy`` is the one the answers were reconstructed under (``options.policy`` as resolved by
    the caller: the shipped default, or the one stored with a re-audited run).
    """
    # Fewer collections while the run is on (shared with the readers: auditor/trace/_gc.py).
    with fewer_collections():
        return await _audit_answers(
            ingested, answers, policy, options, started, on_progress, finish_with, begin_with
        )


async def _audit_answers(
    ingested: IngestResult,
    answers: Sequence[Answer],
    policy: Policy,
    options: AuditOptions,
    started: datetime,
    on_progress: Callable[[Progress], None] | None,
    finish_with: FinishHook | None,
    begin_with: FinishHook | None = None,
) -> tuple[AuditResult, list[AnswerAudit]]:
    labels, calibration = options.labels, options.calibration
    owner, lease = new_owner(), run_lease()
    db = Store(options.db_url) if options.store else None
    keeper: RunLease | None = None
    # Database work happens on the writer's thread: the event loop only hands answers over.
    writer = StoreWriter(db).start() if db is not None else None
    try:
        setup = store_judge(options, db, writer, local_budget(options.rate_limit))
        await setup.check()  # an unreachable endpoint or a bad key fails here, before any run is opened
        info = run_info(ingested, started, policy).model_copy(
            update={"judge": judge_ref(setup.judge.identity)}
        )
        chosen = choose_calibration(db, calibration, info.judge)  # a bad id fails before any work
        traced = [trace_digest(t) for t in ingested.traces] if db is not None else []
        run_id, done = open_run(
            db, info, policy, options.resume, ingested.traces, traced, owner, lease, writer, begin_with
        )
        if db is not None:
            keeper = RunLease(db, run_id, owner, lease).start()
        todo = [a for a in answers if a.answer_id not in done]
        # What earlier attempts of a resumed run spent is kept with their saved answers.
        spent_before = db.answer_usages(run_id) if db is not None and done else []
        meter = UsageMeter(setup.usage)
        target = RunTarget(
            run_id,
            owner,
            writer,
            {t.trace_id: d for t, d in zip(ingested.traces, traced, strict=False)},
            usage_since=meter.take if db is not None else None,
        )
        counts = {"done": 0, "claims": 0, "unjudged": 0}

        def on_saved(audit: AnswerAudit) -> None:
            counts["done"] += 1
            counts["claims"] += audit.figures.judged
            counts["unjudged"] += audit.figures.unjudged
            if on_progress is not None:
                usage = setup.client.usage if setup.client is not None else None
                on_progress(
                    Progress(
                        len(ingested.traces),
                        len(answers),
                        len(done) + counts["done"],
                        len(done),
                        counts["claims"],
                        usage.calls if usage else 0,
                        counts["unjudged"],
                        usage.failed if usage else 0,
                        usage.total_tokens if usage else 0,
                        run_id if db is not None else None,
                    )
                )

        try:
            fresh, audits = await audit_into_run(todo, policy, setup, options.concurrency, target, on_saved)
        except BaseException:
            # Ctrl-C or SIGTERM (a cancelled task) or a crash: what finished is saved; the next run
            # resumes it (a kill -9 skips this: the run's lease runs out instead).
            if db is not None and writer is not None:
                writer.close(raise_error=False)  # what was handed over is committed first
                db.mark_interrupted(run_id, owner)
            raise
        finally:
            await setup.aclose()
        if writer is not None:
            writer.close()  # the cache entries still queued; raises a write that failed
        earlier = {a.answer_id: a for a in db.load_run(run_id).answers} if db is not None and done else {}
        ordered: list[AnswerOut] = [fresh.get(a.answer_id) or earlier[a.answer_id] for a in answers]
        result = finish_result(
            AuditResult(run=info.model_copy(update={"id": run_id}), answers=ordered),
            policy,
            labels,
            merge_usage([*spent_before, setup.usage()]) if spent_before else setup.usage(),
        )
        if db is not None:
            result = with_correction(result, chosen)
            status = setup.outcome()
            db.finish_run(
                run_id, result.summary, result.run.usage, status=status, owner=owner, also=finish_with
            )
            if status == "finished":  # a run a killed process left beside this one is done now
                digests = [i.sha256 for i in info.inputs]
                superseded = db.supersede_runs(run_id, digests, policy.sha256, info.judge, lease)
                if superseded:
                    result = result.model_copy(
                        update={"run": result.run.model_copy(update={"superseded": superseded})}
                    )
        return result, audits
    finally:
        if writer is not None:
            writer.close(raise_error=False)
        if keeper is not None:
            keeper.stop()
        if db is not None:
            db.close()


def open_run(
    db: Store | None,
    info: RunInfo,
    policy: Policy,
    resume: bool,
    traces: Sequence[Trace],
    digests: Sequence[str],
    owner: str,
    lease: float,
    writer: StoreWriter | None = None,
    begin_with: FinishHook | None = None,
) -> tuple[str, set[str]]:
    """The run to write into, held by ``owner``: an interrupted or abandoned one on the same
    inputs, policy and judge (claimed; a run another process still renews is never taken), or a new one.

    With ``writer``, the traces are recorded on its thread, ahead of the run's answers, while the
    first requests go out (about 0.07 s for 768 small traces); a resumed run records them again
    (nothing is written twice), in case its first process died before they were committed.
    ``begin_with`` runs in the transaction that records a new run (a resumed run's hook, if any,
    is its finishing one).
    """
    if db is None:
        return info.id, set()
    if resume:
        previous = db.find_resumable([i.sha256 for i in info.inputs], policy.sha256, info.judge, lease)
        if previous is not None and db.claim_run(previous, owner, lease):
            if writer is not None:
                writer.record_traces(previous, traces, digests)
            return previous, db.finished_answer_ids(previous)
    run_id = db.begin_run(info, policy.source_text, owner=owner, lease_seconds=lease, also=begin_with)
    if writer is not None:
        writer.record_traces(run_id, traces, digests)
    else:
        db.record_traces(run_id, traces, digests)
    return run_id, set()


def audit(
    paths: Sequence[Path],
    options: AuditOptions | None = None,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    **changes: Unpack[AuditArgs],
) -> AuditResult:
    """Audit every answer in ``paths``, store the run, and return the public JSON result.

    ``audit(paths, AuditOptions(judge="openai:gpt-4.1-mini", rate_limit=50))`` and
    ``audit(paths, judge="openai:gpt-4.1-mini", rate_limit=50)`` are the same call: the keywords
    are :class:`AuditOptions`' fields, and given beside ``options`` they change those fields of it.

    Args:
        paths: trace files, any installed format (directories and glob patterns are expanded).
        options: how to audit and store (:class:`AuditOptions`, every field documented there);
            None: the defaults (the shipped policy, the offline judge, the default store).
        on_progress: called after each answer with a :class:`Progress`.
        **changes: fields of :class:`AuditOptions` (``policy``, ``judge``, ``base_url``,
            ``decomposer``, ``cascade``, ``cache``, ``concurrency``, ``rate_limit``, ``format``,
            ``trace_id``, ``labels``, ``calibration``, ``db_url``, ``store``, ``resume``).

    Raises:
        UsageError: ``trace_id`` selects no answer, or another input error (before any work).
        LLMError: an ``openai:`` judge's endpoint is unreachable, rejects the key or lacks the
            model (checked once before a run is opened). Failures later in the run are
            ``unjudged`` claims instead; a run in which every LLM call failed is stored ``failed``.
        TypeError: a keyword that is no field of :class:`AuditOptions`.
    """
    options = with_changes(options, changes, "audit")
    result, _ = run_sync(lambda: audit_async(paths, options, on_progress=on_progress))
    return result
