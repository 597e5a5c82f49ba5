"""Audit answers into an open stored run, saving each as it finishes: the part every engine shares.

A run in one process (:func:`auditor.run.audit_answers_async`) and each shard of a run on a Ray
cluster (:mod:`auditor.scale`) call :func:`audit_into_run` with the judge :func:`store_judge`
builds, so no stage has a second implementation and the verdict cache in the store is the same
for every process. What differs stays with the caller: who opens and finishes the run, who holds
its lease, how progress is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.evidence import Answer
from auditor.judges import JudgeSetup, build_judge
from auditor.llm import LLMBudget, LocalBudget
from auditor.pipeline import AnswerAudit, audit_all, audit_out
from auditor.policy import Policy
from auditor.results import AnswerOut
from auditor.run._options import AuditOptions
from auditor.store import SqlDecompositionCache, SqlFusedCache, SqlVerdictCache, Store, StoreWriter


@dataclass(frozen=True)
class RunTarget:
    """Where audited answers go: the open run, its lease holder and the run's writer.

    Args:
        run_id: the stored run (or the unsaved run's id when ``writer`` is None).
        owner: the lease holder the saves renew (a save is refused once another process holds it).
        writer: the run's writer; None keeps nothing (``store=False``).
        digests: each trace's content digest, by trace id (the trace an answer is saved under).
        if_absent: leave an answer the run already holds as it is (a retried shard re-saves
            nothing) instead of replacing it.
        usage_since: called as each answer is handed to the writer: the judge usage spent since
            the previous call, kept with the answer in its transaction (None: none kept).
    """

    run_id: str
    owner: str | None
    writer: StoreWriter | None
    digests: Mapping[str, str] = field(default_factory=dict)
    if_absent: bool = False
    usage_since: Callable[[], dict[str, Any] | None] | None = None


def local_budget(rate_limit: float | None) -> LocalBudget | None:
    """The one-process budget for ``rate_limit`` requests per second (None: no budget)."""
    return LocalBudget(rate_limit) if rate_limit is not None else None


def store_judge(
    options: AuditOptions, db: Store | None, writer: StoreWriter | None, budget: LLMBudget | None = None
) -> JudgeSetup:
    """The run's judge (``options.judge``, ``offline`` when None), its caches in the store ``db``
    written through ``writer``.

    Raises:
        UsageError: as :func:`auditor.judges.build_judge` (an unknown spec, no key).
    """
    return build_judge(
        options.judge if options.judge is not None else "offline",
        base_url=options.base_url,
        cascade=options.cascade,
        use_cache=options.cache,
        decomposer=options.decomposer,
        concurrency=options.concurrency,
        cache_backend=SqlVerdictCache(db, writer=writer) if db is not None else None,
        decomposition_backend=SqlDecompositionCache(db, writer) if db is not None else None,
        fused_backend=SqlFusedCache(db, writer) if db is not None else None,
        budget=budget,
    )


async def audit_into_run(
    answers: Sequence[Answer],
    policy: Policy,
    setup: JudgeSetup,
    concurrency: int,
    target: RunTarget,
    on_saved: Callable[[AnswerAudit], None] | None = None,
) -> tuple[dict[str, AnswerOut], list[AnswerAudit]]:
    """Decompose and judge ``answers`` (at most ``concurrency`` at once) and save each into the run.

    ``on_saved`` is called once an answer is committed (counted only then: a kill loses nothing
    reported as done). Errors propagate; what was handed to the writer before is still committed
    when the caller closes it.

    Returns:
        The public form of each answer audited, by answer id, and the audits in input order.
    """
    fresh: dict[str, AnswerOut] = {}
    finished = 0

    async def on_done(audit: AnswerAudit) -> None:
        nonlocal finished
        finished += 1
        out = fresh[audit.answer.answer_id] = audit_out(audit)
        if target.writer is not None:
            await target.writer.save_answer(
                target.run_id,
                out,
                target.digests.get(audit.answer.trace_id),
                owner=target.owner,
                if_absent=target.if_absent,
                last=finished == len(answers),  # nothing else will come: no need to wait for more
                usage=target.usage_since() if target.usage_since is not None else None,
            )
        if on_saved is not None:
            on_saved(audit)

    audits = await audit_all(answers, policy, setup.extractor, setup.judge, concurrency, on_done, setup.fused)
    return fresh, audits
