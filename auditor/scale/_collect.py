"""What the driver makes of its shards' outcomes: the run's answers in order, usage, progress, failures.

A shard's task hands back only ids and counts (:class:`~auditor.scale._worker.ShardOutcome`); the
answers themselves are read back from the store. Their order is the one a single process gives:
conversations in input order (by the first trace of each), answers within one in generation
order, which a shard's reconstruction already has since a conversation never spans shards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

from auditor.errors import AuditorError, LeaseLostError, ShardError
from auditor.results import AnswerOut, ProblemOut
from auditor.run import Progress
from auditor.scale._worker import ShardOutcome
from auditor.store import Store

#: Seconds between the driver's progress polls.
POLL_SECONDS = 0.5
#: Problems named per failed shard at most (one per trace), then one line for the rest.
NAMED_TRACES = 1000


def conversation_ranks(traces: Iterable[tuple[str, str | None]]) -> dict[str, int]:
    """For each trace id, the input position of its conversation (its first trace), as
    :func:`auditor.evidence.reconstruct` orders conversations.

    Args:
        traces: ``(trace_id, conversation_id)`` of every trace, in input order.
    """
    first: dict[str, int] = {}
    conversation_of: dict[str, str] = {}
    for position, (trace_id, conversation_id) in enumerate(traces):
        key = conversation_id or f"trace:{trace_id}"
        first.setdefault(key, position)
        conversation_of.setdefault(trace_id, key)
    return {trace_id: first[key] for trace_id, key in conversation_of.items()}


def order_answers(
    stored: Sequence[AnswerOut], orders: Sequence[Sequence[tuple[str, str]]], ranks: Mapping[str, int]
) -> list[AnswerOut]:
    """The run's stored answers in single-process order (see the module docstring).

    Args:
        stored: the answers as the store holds them (any order).
        orders: each shard's ``(answer_id, trace_id)`` in its reconstruction order.
        ranks: :func:`conversation_ranks`.
    """
    by_id = {a.answer_id: a for a in stored}
    keyed = []
    for shard, order in enumerate(orders):
        for position, (answer_id, trace_id) in enumerate(order):
            if answer_id in by_id:
                keyed.append(((ranks.get(trace_id, len(ranks)), shard, position), answer_id))
    keyed.sort()
    ordered = [by_id.pop(answer_id) for _, answer_id in keyed if answer_id in by_id]
    return ordered + list(by_id.values())  # none expected: a stored answer no shard named


def outcome(usage: dict[str, Any] | None) -> str:
    """``failed`` when LLM calls were made and every one failed, else ``finished`` (as one process)."""
    llm = (usage or {}).get("llm") or {}
    calls = llm.get("calls") or 0
    return "failed" if calls and llm.get("failed") == calls else "finished"


def progress(shards: Mapping[int, Mapping[str, int]], traces: int, run_id: str) -> Progress:
    """One :class:`~auditor.run.Progress` from every shard's latest report.

    A shard not yet started counts no answers: ``answers_total`` grows as shards start (a lower
    bound until every shard has reported once).
    """
    total = sum(s["total"] for s in shards.values())
    resumed = sum(s["resumed"] for s in shards.values())
    return Progress(
        traces,
        total,
        resumed + sum(s["done"] for s in shards.values()),
        resumed,
        sum(s["claims"] for s in shards.values()),
        sum(s["calls"] for s in shards.values()),
        sum(s["unjudged"] for s in shards.values()),
        sum(s["failed"] for s in shards.values()),
        sum(s["tokens"] for s in shards.values()),
        run_id,
    )


class ProgressBoard:
    """The progress actor's body: each shard's latest figures (a retried shard's replace its own)."""

    def __init__(self) -> None:
        self.shards: dict[int, dict[str, int]] = {}

    def report(self, index: int, figures: dict[str, int]) -> None:
        self.shards[index] = figures

    def snapshot(self) -> dict[int, dict[str, int]]:
        return dict(self.shards)


def gather(ray: ModuleType, refs: list[Any]) -> list[Any]:
    """``ray.get``, with an auditor error raised in a task raised here as itself (one line)."""
    try:
        return list(ray.get(refs))
    except ray.exceptions.RayTaskError as err:
        cause = err.cause
        if isinstance(cause, AuditorError):
            raise cause from None
        raise


def wait_for_shards(
    ray: ModuleType,
    pending: dict[Any, int],
    board: Any,
    on_progress: Callable[[Progress], None] | None,
    traces: int,
    run_id: str,
) -> tuple[dict[int, ShardOutcome], dict[int, BaseException]]:
    """Wait for every shard, reporting progress; each shard's outcome or its final error."""
    outcomes: dict[int, ShardOutcome] = {}
    failures: dict[int, BaseException] = {}
    last: Progress | None = None
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=POLL_SECONDS)
        for ref in ready:
            index = pending.pop(ref)
            try:
                outcomes[index] = ray.get(ref)
            except ray.exceptions.RayError as err:
                cause = getattr(err, "cause", None)
                if isinstance(cause, LeaseLostError):
                    raise cause from None  # another driver holds the run now: stop at once
                failures[index] = cause if isinstance(cause, AuditorError) else err
        if on_progress is not None:
            report = progress(ray.get(board.snapshot.remote(), timeout=60), traces, run_id)
            if report != last:
                on_progress(report)
                last = report
    return outcomes, failures


def fail(
    db: Store,
    run_id: str,
    owner: str,
    shards: Sequence[Any],
    failures: dict[int, BaseException],
    max_retries: int,
) -> None:
    """Name the failed shards' traces in the run's problems and raise :class:`ShardError`."""
    problems: list[ProblemOut] = []
    for index, error in sorted(failures.items()):
        why = reason(error)
        ids = sorted(shards[index].trace_ids)
        for trace_id in ids[:NAMED_TRACES]:
            problems.append(
                ProblemOut(
                    file=", ".join(shards[index].files),
                    line=None,
                    severity="error",
                    reason=f"not audited: its shard's task failed ({why}); rerun the command to resume",
                    trace_id=trace_id,
                    span_id=None,
                )
            )
        if len(ids) > NAMED_TRACES:
            problems.append(
                ProblemOut(
                    file=", ".join(shards[index].files),
                    line=None,
                    severity="error",
                    reason=f"and {len(ids) - NAMED_TRACES} more trace(s) of the same shard not audited",
                    trace_id=None,
                    span_id=None,
                )
            )
    db.add_problems(run_id, problems, owner=owner)  # the caller leaves the run interrupted
    traces = sum(len(shards[i].trace_ids) for i in failures)
    first = reason(failures[min(failures)])
    raise ShardError(
        f"{len(failures)} of {len(shards)} shard task(s) failed for good (the first: "
        f"{first}); their {traces} trace(s) are named in run {run_id[:12]}'s problems and the run is "
        "left interrupted: fix the cause and run the same command again to resume it."
    )


def reason(error: BaseException) -> str:
    if isinstance(error, AuditorError):
        return str(error)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[-1] if text else 'no message'}"[:300]
