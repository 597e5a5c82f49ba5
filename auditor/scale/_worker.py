"""One shard of a distributed audit, as a Ray task runs it: read, reconstruct, audit, save.

The task reads the shard's files keeping only its traces (:func:`read_shard`, a trace's spans
merged across files; for a re-audit, the shard's traces kept in the store), reconstructs the answers exactly as one process would (whole
conversations are on one shard, so evidence stays causal), and audits them with
:func:`auditor.run.audit_into_run`, the function a single-process run calls: same stages, same
judge set-up with the verdict cache in the shared store, each answer saved as it finishes.

Guarantees:

- **Idempotent.** Answers the run already holds are skipped before any work, and every save is
  ``if_absent``: a task Ray retries after its worker died re-audits only what was not committed,
  and saves nothing twice.
- **Under the driver's lease.** Saves carry the driver's owner token, so a worker of a driver
  that lost its run (killed, and the run taken over by a rerun) is refused instead of writing
  beside the new one.
- **Usage kept per answer.** Each saved answer carries the judge usage its worker spent since its
  previous save (:class:`UsageMeter`), in the answer's own transaction; the outcome's ``usage`` is
  only what no answer carried. The run's usage is the sum of both, so a worker killed after
  saving answers loses none of their usage, and an answer lost with it counts nothing (its retry
  spends its usage again).
- Progress goes to the driver's progress board at most every :data:`REPORT_SECONDS` (and at the
  end), counted only once committed.

Nothing here imports Ray: the engine wraps :func:`audit_shard` with ``ray.remote``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from auditor.llm import LLMBudget, run_sync
from auditor.pipeline import AnswerAudit, problem_out, trace_answers
from auditor.policy import Policy
from auditor.results import ProblemOut
from auditor.run import AuditOptions, RunTarget, UsageMeter, audit_into_run, store_judge
from auditor.scale._plan import Shard, read_shard
from auditor.store import Store, StoreWriter, trace_digest
from auditor.trace import Problem

#: Seconds between a worker's progress reports (it reports at the end too).
REPORT_SECONDS = 0.5


@dataclass(frozen=True)
class ShardJob:
    """What a shard task needs: the shard, how to audit it, and where the run is.

    ``options`` are the run's, whole, as the driver was given them, with ``db_url`` the store the
    driver resolved (every worker writes the same one) and ``judge`` the one it checked;
    ``policy`` is the one the driver resolved (``options.policy`` or the default, or a
    re-audited run's stored one). ``options.labels`` change only the summary, which the driver
    computes.
    """

    index: int
    shard: Shard
    policy: Policy
    options: AuditOptions
    run_id: str
    owner: str
    budget: LLMBudget | None = None
    board: Any = None  # the driver's progress actor (a Ray actor handle), or None
    order: Mapping[str, int] = field(default_factory=dict)  # trace id: its place in the run's input
    source_run: str | None = None  # a re-audit: the stored run whose kept traces the shard reads


@dataclass(frozen=True)
class ShardOutcome:
    """What a shard task hands back: small (ids and counts, never the answers, which are in the store).

    Attributes:
        order: ``(answer_id, trace_id)`` of every answer of the shard, in reconstruction order
            (how the driver orders the run's answers as one process would).
        usage: the shard's judge usage that no saved answer carries (LLM calls, tokens, cascade
            and cache counts spent after the last save; None offline).
        audited: answers audited now (the others were already in the run).
        unanswered: the shard's traces with model calls that yielded no answer (``no_answer``
            problems, which one process records after the files' own).

    A worker's problems are its errors: a shard that fails for good has its traces named in the
    run's problems by the driver (the files' own problems come from the scans, once).
    """

    order: list[tuple[str, str]]
    usage: dict[str, Any] | None
    audited: int
    unanswered: list[ProblemOut] = field(default_factory=list)


class _Reporter:
    """Counts committed answers and sends them to the board now and then."""

    def __init__(self, job: ShardJob, total: int, resumed: int) -> None:
        self.job, self.last = job, 0.0
        self.counts = {"total": total, "resumed": resumed, "done": 0, "claims": 0, "unjudged": 0}
        self.usage: Any = None

    def saved(self, audit: AnswerAudit) -> None:
        self.counts["done"] += 1
        self.counts["claims"] += audit.figures.judged
        self.counts["unjudged"] += audit.figures.unjudged
        if time.monotonic() - self.last >= REPORT_SECONDS:
            self.send()

    def send(self, wait: bool = False) -> None:
        """Report the counts; ``wait``: until the board holds them (the shard's last report, so the
        driver's snapshot after the task returns shows the finished shard)."""
        if self.job.board is None:
            return
        self.last = time.monotonic()
        usage = self.usage
        figures = dict(self.counts)
        figures.update(
            calls=usage.calls if usage else 0,
            failed=usage.failed if usage else 0,
            tokens=usage.total_tokens if usage else 0,
        )
        sent = self.job.board.report.remote(self.job.index, figures)  # fire-and-forget, unless waited
        if wait:
            sent.future().result(timeout=60)  # an ObjectRef's future: no Ray import here


def audit_shard(job: ShardJob) -> ShardOutcome:
    """Audit one shard into the run (the body of the engine's Ray task); see the module docstring.

    Raises:
        StoreError, LeaseLostError: the store failed, or the driver no longer holds the run.
    """
    return run_sync(lambda: _audit_shard(job))


async def _audit_shard(job: ShardJob) -> ShardOutcome:
    db = Store(job.options.db_url)
    writer = StoreWriter(db).start()
    try:
        if job.source_run is not None:
            traces = db.load_traces(job.source_run, job.shard.trace_ids)
        else:
            traces = read_shard(job.shard, job.options.format).traces
        unanswered: list[Problem] = []
        answers = trace_answers(traces, job.policy, problems=unanswered)
        done = db.finished_answer_ids(job.run_id)
        todo = [a for a in answers if a.answer_id not in done]
        reporter = _Reporter(job, len(answers), len(answers) - len(todo))
        reporter.send()
        digests = [trace_digest(t) for t in traces]
        # At their places in the whole run's input order, so a re-audit reads them as one process would.
        places = [job.order.get(t.trace_id, len(job.order)) for t in traces]
        db.record_traces(job.run_id, traces, digests, positions=places)
        setup = store_judge(job.options, db, writer, job.budget)
        reporter.usage = setup.client.usage if setup.client is not None else None
        meter = UsageMeter(setup.usage)
        target = RunTarget(
            job.run_id,
            job.owner,
            writer,
            {t.trace_id: d for t, d in zip(traces, digests, strict=True)},
            if_absent=True,
            usage_since=meter.take,
        )
        try:
            _, audits = await audit_into_run(
                todo, job.policy, setup, job.options.concurrency, target, reporter.saved
            )
        finally:
            await setup.aclose()
        writer.close()  # the cache entries still queued; raises a write that failed
        reporter.send(wait=True)
        return ShardOutcome(
            order=[(a.answer_id, a.trace_id) for a in answers],
            usage=meter.take(),  # what no saved answer carries
            audited=len(audits),
            unanswered=[problem_out(p) for p in unanswered],
        )
    finally:
        writer.close(raise_error=False)  # what was handed over is committed, even on an error
        db.close()
