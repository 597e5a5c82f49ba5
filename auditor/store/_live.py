"""What a live deployment records beside its runs: the sample, the spending cap, what was spent.

A live server audits a share of its traces (:class:`auditor.trace.TraceSampling`) and may judge
some offline because its LLM spending cap was reached; both are stored on the run
(``runs.sampling``, ``runs.cap``, migration 0012) in the transaction that begins it, and read
back beside every figure over its answers (:func:`samples_of`: from the rollups, which are keyed
by them, when the filter allows), so a rate is never quoted without the sample it was measured
on, nor an offline verdict mistaken for the LLM judge's.

What the judge spent is read from the runs themselves (:func:`judge_spend`: the ``usage`` of the
LLM-judged runs started in a window), so every replica over one database sees one budget.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, case, func, select, update
from sqlalchemy.orm import Session

from auditor.store._filters import AnswerFilter, where
from auditor.store._rollup_reads import samples as rollup_samples
from auditor.store._rollups import grain, rekey, run_dimensions, sample_key, sample_of
from auditor.store._runs import FinishHook
from auditor.store._schema import AnswerRecord, RunRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors

OFFLINE = "offline"
#: How the pass of a trace a live server chose not to audit begins (its reason follows).
NOT_AUDITED = "not audited: "


def live_record(sampling: dict[str, Any], cap: dict[str, Any] | None = None) -> FinishHook:
    """A hook storing the run's sample and, when it was judged offline by the cap, the cap: given
    to the transaction that begins the run, so its answers are counted under them in the rollups
    as they are written; given later (the one that finishes it), the rollups follow (:func:`rekey`)."""

    def record(session: Session, run_id: str) -> None:
        before = run_dimensions(session, run_id)
        session.execute(update(RunRecord).where(RunRecord.id == run_id).values(sampling=sampling, cap=cap))
        rekey(session, run_id, before)

    return record


def note_live(store: Store, run_id: str, sampling: dict[str, Any], cap: dict[str, Any] | None = None) -> None:
    """Store the sample (and cap) of a run that is not finished through a hook (the span processor's)."""
    with store_errors(store.url), Session(store.engine) as session, session.begin():
        live_record(sampling, cap)(session, run_id)


@dataclass(frozen=True)
class Spend:
    """What LLM-judged runs started since a time spent: tokens, estimated USD (None: unknown).

    ``steps`` is the running total after each run, in the order the runs finished: ``(finished
    at, tokens so far, USD so far or None)``, so a cap can tell when it was reached.
    """

    tokens: int
    cost_usd: float | None
    runs: int
    steps: tuple[tuple[datetime, int, float | None], ...] = ()


def _llm(key: str) -> Any:
    return RunRecord.usage[("llm", key)]


def judge_spend(store: Store, since: datetime, *, steps: bool = False) -> Spend:
    """The LLM usage recorded on runs started at or after ``since`` (every replica's, one database).

    A run records its usage when it finishes; the cost is the estimate of the price table the run
    used (``AUDITOR_LLM_PRICES`` over the built-in one), None when a model had no price. The sums
    are taken in SQL; ``steps`` (the running total run by run) only when asked for.
    """
    window = (
        RunRecord.started_at >= since,
        RunRecord.judge_kind.is_not(None),
        RunRecord.judge_kind != OFFLINE,
    )
    prompt, completion = _llm("prompt_tokens").as_integer(), _llm("completion_tokens").as_integer()
    cost = _llm("cost_usd").as_float()
    unknown = case((and_(_llm("calls").as_integer() > 0, cost.is_(None)), 1), else_=0)
    totals = select(
        func.count(),
        func.coalesce(func.sum(func.coalesce(prompt, 0) + func.coalesce(completion, 0)), 0),
        func.coalesce(func.sum(func.coalesce(cost, 0.0)), 0.0),
        func.coalesce(func.sum(unknown), 0),
    ).where(*window)
    with store_errors(store.url), Session(store.engine) as session:
        runs, tokens, spent, unpriced = session.execute(totals).one()
        running: list[tuple[datetime, int, float | None]] = []
        if steps:
            so_far, cost_so_far, gone = 0, 0.0, False
            ordered = (
                select(RunRecord.usage, func.coalesce(RunRecord.finished_at, RunRecord.started_at))
                .where(*window)
                .order_by(func.coalesce(RunRecord.finished_at, RunRecord.started_at))
            )
            for usage, at in session.execute(ordered):
                llm = (usage or {}).get("llm") or {}
                so_far += int(llm.get("prompt_tokens") or 0) + int(llm.get("completion_tokens") or 0)
                gone = gone or (llm.get("cost_usd") is None and bool(llm.get("calls")))
                cost_so_far += float(llm.get("cost_usd") or 0.0)
                running.append((_aware(at), so_far, None if gone else cost_so_far))
    return Spend(int(tokens), None if unpriced else float(spent), int(runs), tuple(running))


def _aware(at: datetime) -> datetime:
    """A time read through ``coalesce`` (not the column's type): UTC, aware."""
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


@dataclass(frozen=True)
class SampleShare:
    """The answers a filter selects that were audited under one sample (None: every trace)."""

    sampling: dict[str, Any] | None
    answers: int


@dataclass(frozen=True)
class CapShare:
    """The answers a filter selects that were judged offline because the spending cap was reached."""

    answers: int
    first_hit_at: str | None
    last_hit_at: str | None
    caps: tuple[str, ...]


def samples_of(
    store: Store, wanted: AnswerFilter, answers: int | None = None
) -> tuple[list[SampleShare], CapShare]:
    """The samples behind the answers ``wanted`` selects, and how many of them the cap sent offline.

    A filter the rollups can answer (:func:`auditor.store.rollup_grain`) is answered from them: they
    are keyed by each run's sample and cap. Otherwise ``answers``, when the caller has it (the
    summary's count of the same selection), lets a store whose answers all share one sample and none
    was capped (its rollups say so) answer without reading the answers; else the matching answers are counted per sample and cap
    in SQL (a live server stores one run per trace: runs are not read one by one).
    """
    bucket = grain(wanted)
    if bucket is not None:
        return _shares(
            (sample_of(sample), cap or None, json.loads(cap) if cap else {}, n)
            for sample, cap, n in rollup_samples(store, wanted, bucket)
        )
    if answers is not None:
        # Every stored answer's sample and cap, from the daily rollups of every answer (a row per
        # day and dimension, however many runs: reading the runs cost 90 ms at 50,000 of them).
        found = rollup_samples(store, AnswerFilter(), "day")
        if len(found) <= 1 and not (found and found[0][1]):
            return _shares(
                [(sample_of(found[0][0]) if found else None, None, {}, answers)] if answers else []
            )
    return counted(store, wanted)


def counted(store: Store, wanted: AnswerFilter) -> tuple[list[SampleShare], CapShare]:
    """:func:`samples_of` from the answers themselves: each matching answer joined to its run."""
    share = RunRecord.sampling[("share",)].as_float()
    chosen = RunRecord.sampling[("filter",)].as_string()
    live = case((RunRecord.sampling.is_(None), 0), else_=1)
    base = where(select(AnswerRecord.run_id), wanted).subquery()
    limit, hit = RunRecord.cap[("limit",)].as_string(), RunRecord.cap[("hit_at",)].as_string()
    is_capped = case((RunRecord.cap.is_(None), 0), else_=1)
    # One pass over the matching answers: their count per sample and cap.
    kinds = (
        select(live, share, chosen, is_capped, limit, func.count(), func.min(hit), func.max(hit))
        .select_from(base)
        .join(RunRecord, RunRecord.id == base.c.run_id)
        .group_by(live, share, chosen, is_capped, limit)
    )
    with store_errors(store.url), Session(store.engine) as session:
        rows: list[Any] = list(session.execute(kinds))
    return _shares(
        (
            {"share": s, "filter": f} if on else None,
            "capped" if capped_run else None,
            {"limit": cap_limit, "first": first, "last": last},
            int(n),
        )
        for on, s, f, capped_run, cap_limit, n, first, last in rows
    )


def _shares(
    rows: Iterable[tuple[dict[str, Any] | None, str | None, dict[str, Any], int]],
) -> tuple[list[SampleShare], CapShare]:
    """The samples and the cap's share from ``(sampling, capped or None, cap, answers)`` rows, where
    ``cap`` holds ``limit`` and ``hit_at`` (a rollup's) or ``first`` and ``last`` (a group of runs')."""
    per_sample: dict[str, int] = {}
    capped: list[tuple[Any, int, Any, Any]] = []
    for sampling, is_capped, cap, n in rows:
        key = sample_key(sampling)
        per_sample[key] = per_sample.get(key, 0) + n
        if is_capped:
            capped.append(
                (cap.get("limit"), n, cap.get("first", cap.get("hit_at")), cap.get("last", cap.get("hit_at")))
            )
    shares = [
        SampleShare(sample_of(key), n)
        for key, n in sorted(per_sample.items(), key=lambda item: (-item[1], item[0]))
    ]
    firsts = [first for _, _, first, _ in capped if first]
    lasts = [last for _, _, _, last in capped if last]
    return shares, CapShare(
        sum(n for _, n, _, _ in capped),
        min(firsts, default=None),
        max(lasts, default=None),
        tuple(sorted({str(c) for c, _, _, _ in capped if c})),
    )


def sample_json(shares: Sequence[SampleShare], capped: CapShare) -> dict[str, Any]:
    """The ``sample`` block of a summary: each sample with its answers, and the cap's offline answers."""
    return {
        "samples": [
            {
                "share": (s.sampling or {}).get("share", 1.0),
                "filter": (s.sampling or {}).get("filter"),
                "live": s.sampling is not None,
                "answers": s.answers,
            }
            for s in shares
        ],
        "judged_offline_by_cap": {
            "answers": capped.answers,
            "first_hit_at": capped.first_hit_at,
            "last_hit_at": capped.last_hit_at,
            "caps": list(capped.caps),
        },
    }
