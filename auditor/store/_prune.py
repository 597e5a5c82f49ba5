"""Retention: how long received spans, kept traces and answers stay in the store.

:func:`prune` deletes, in one transaction, what is older than each age of a :class:`Retention`:

- ``spans``: received traces (``received_spans``, ``received_traces`` and their ``trace_audits``
  passes) whose last span arrived before the cutoff. A trace still waiting for an audit, or held
  by a worker, is skipped; so is an acknowledged body not yet read into spans.
- ``answers``: runs (with their answers, claims, verdicts and evidence) that ended (or, never
  ended, started) before the cutoff; a run is pruned whole, never some of its answers. Skipped,
  with the reason: a run still running (or interrupted and resumable), a run re-audited by a run
  that stays (the re-audit's comparison reads it), the latest audit of a received trace that stays.
- ``traces``: kept trace content (``traces`` / ``trace_contents``, what ``auditor reaudit`` reads)
  first seen before the cutoff and referenced by no stored run or answer. Content a stored run
  still references is skipped and counted: it goes once those runs are pruned. Without its own
  age it follows ``answers``, so kept traces go with the runs that kept them.

Nothing else is touched: the verdict and decomposition caches, calibrations, sign-ins, and any
rollup table (figures per hour and day are meant to outlive the raw rows). A dry run counts the
same rows and deletes nothing. Every skip is reported with its count and its reason: nothing a
stored run references is pruned silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.orm import Session

from auditor.errors import UsageError
from auditor.store._bodies import BodyQueue
from auditor.store._received import (
    ReceivedSpanRecord,
    ReceivedTraceRecord,
    TraceAuditRecord,
)
from auditor.store._runs import now
from auditor.store._schema import AnswerRecord, RunRecord, RunTraceRecord, TraceContentRecord, TraceRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors

#: Ids per DELETE (well under SQLite's bound on parameters).
PAGE = 500
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_age(text: str) -> timedelta:
    """``"7d"`` -> 7 days; units ``s``, ``m``, ``h``, ``d``, ``w``.

    Raises:
        UsageError: ``text`` is not a positive number followed by a unit.
    """
    match = _AGE.match(text or "")
    if match is None or float(match.group(1)) <= 0:
        raise UsageError(f"{text!r} is not an age: write a number and a unit, e.g. 7d, 12h, 90d or 2w.")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


@dataclass(frozen=True)
class Retention:
    """How long each kind of row is kept; None keeps it for ever."""

    spans: timedelta | None = None
    answers: timedelta | None = None
    traces: timedelta | None = None  # None: follow ``answers``

    @property
    def empty(self) -> bool:
        return self.spans is None and self.answers is None and self.traces is None


@dataclass(frozen=True)
class Skipped:
    """Rows an age reached but that stay, and why."""

    what: str
    count: int
    why: str


@dataclass(frozen=True)
class PruneReport:
    """What :func:`prune` deleted (or, on a dry run, would delete), and what it kept on purpose."""

    dry_run: bool
    pruned: dict[str, int] = field(default_factory=dict)
    skipped: tuple[Skipped, ...] = ()


def prune(
    store: Store, retention: Retention, *, dry_run: bool = False, at: datetime | None = None
) -> PruneReport:
    """Delete what ``retention`` no longer keeps (see the module's rules), in one transaction.

    Raises:
        StoreError: the store cannot be read or written.
    """
    at = at or now()
    pruned: dict[str, int] = {}
    skipped: list[Skipped] = []
    with store_errors(store.url), Session(store.engine) as session, session.begin():
        gone_traces: set[str] = set()
        if retention.spans is not None:
            gone_traces = _spans(session, at - retention.spans, pruned, skipped, dry_run)
            unread = BodyQueue(store).older_than(at - retention.spans)
            skipped.append(Skipped("received bodies", unread, "acknowledged, not yet read into spans"))
        gone_runs: set[str] = set()
        if retention.answers is not None:
            gone_runs = _runs(session, at - retention.answers, gone_traces, pruned, skipped, dry_run)
        traces_age = retention.traces if retention.traces is not None else retention.answers
        if traces_age is not None:
            # Deleted runs took their references with them; a dry run must discount them instead.
            _kept(session, at - traces_age, gone_runs if dry_run else set(), pruned, skipped, dry_run)
        if dry_run:
            session.rollback()
    return PruneReport(dry_run, pruned, tuple(s for s in skipped if s.count))


def _delete(session: Session, column: Any, ids: Sequence[Any]) -> None:
    for first in range(0, len(ids), PAGE):
        session.execute(delete(column.table).where(column.in_(ids[first : first + PAGE])))


def _spans(
    session: Session, cutoff: datetime, pruned: dict[str, int], skipped: list[Skipped], dry_run: bool
) -> set[str]:
    old = ReceivedTraceRecord.last_span_at < cutoff
    done = and_(
        ReceivedTraceRecord.generation == ReceivedTraceRecord.audited_generation,
        ReceivedTraceRecord.owner.is_(None),
    )
    traces = sorted(session.scalars(select(ReceivedTraceRecord.trace_id).where(old, done)))
    waiting = session.scalar(select(func.count()).where(old, ~done)) or 0
    skipped.append(Skipped("received traces", int(waiting), "waiting for an audit (or held by a worker)"))
    spans = 0
    for first in range(0, len(traces), PAGE):
        page = traces[first : first + PAGE]
        spans += session.scalar(select(func.count()).where(ReceivedSpanRecord.trace_id.in_(page))) or 0
    pruned["received traces"], pruned["received spans"] = len(traces), int(spans)
    if not dry_run:
        _delete(session, ReceivedSpanRecord.trace_id, traces)
        _delete(session, TraceAuditRecord.trace_id, traces)
        _delete(session, ReceivedTraceRecord.trace_id, traces)
    return set(traces)


def _runs(
    session: Session,
    cutoff: datetime,
    gone_traces: set[str],
    pruned: dict[str, int],
    skipped: list[Skipped],
    dry_run: bool,
) -> set[str]:
    ended = func.coalesce(RunRecord.finished_at, RunRecord.started_at)
    rows = session.execute(select(RunRecord.id, RunRecord.status).where(ended < cutoff)).all()
    running = {run_id for run_id, status in rows if status == "running"}
    candidates = {run_id for run_id, _ in rows} - running
    # The latest audit of a received trace that stays: its page links to the run.
    latest = {
        run_id
        for trace_id, run_id in session.execute(
            select(ReceivedTraceRecord.trace_id, ReceivedTraceRecord.run_id).where(
                ReceivedTraceRecord.run_id.is_not(None)
            )
        )
        if trace_id not in gone_traces
    }
    received = candidates & latest
    candidates -= received
    # A re-audit that stays needs the run it re-audited; repeat, as a kept run may itself be a re-audit.
    pairs = session.execute(
        select(RunRecord.id, RunRecord.reaudit_of).where(RunRecord.reaudit_of.is_not(None))
    ).all()
    reaudited: set[str] = set()
    while True:
        needed = {of for run_id, of in pairs if run_id not in candidates and of in candidates}
        if not needed:
            break
        reaudited |= needed
        candidates -= needed
    skipped.append(Skipped("runs", len(running), "still running, or interrupted and resumable"))
    skipped.append(
        Skipped("runs", len(received), "the latest audit of a received trace that is kept (--spans)")
    )
    skipped.append(
        Skipped("runs", len(reaudited), "re-audited by a run that is kept (its comparison reads it)")
    )
    ids = sorted(candidates)
    answers = 0
    for first in range(0, len(ids), PAGE):
        page = ids[first : first + PAGE]
        answers += session.scalar(select(func.count()).where(AnswerRecord.run_id.in_(page))) or 0
    pruned["runs"], pruned["answers"] = len(ids), int(answers)
    if not dry_run:
        _delete(session, TraceAuditRecord.run_id, ids)
        _delete(session, RunRecord.id, ids)  # answers, claims, verdicts, evidence, run_traces cascade
    return candidates


def _kept(
    session: Session,
    cutoff: datetime,
    gone_runs: set[str],
    pruned: dict[str, int],
    skipped: list[Skipped],
    dry_run: bool,
) -> None:
    referenced = or_(
        select(RunTraceRecord.run_id)
        .where(RunTraceRecord.trace_key == TraceRecord.key, RunTraceRecord.run_id.not_in(gone_runs))
        .exists(),
        select(AnswerRecord.run_id)
        .where(AnswerRecord.trace_key == TraceRecord.key, AnswerRecord.run_id.not_in(gone_runs))
        .exists(),
    )
    old = TraceRecord.first_seen_at < cutoff
    keys = sorted(session.scalars(select(TraceRecord.key).where(old, ~referenced)))
    kept = session.scalar(select(func.count()).where(old, referenced)) or 0
    skipped.append(
        Skipped("kept traces", int(kept), "read by a stored run (they go once its answers are pruned)")
    )
    pruned["kept traces"] = len(keys)
    if not dry_run:
        _delete(session, TraceContentRecord.trace_key, keys)
        _delete(session, TraceRecord.key, keys)


def retention(spans: str | None = None, answers: str | None = None, traces: str | None = None) -> Retention:
    """The retention from ages like ``7d`` (arguments > ``AUDITOR_RETAIN_*`` variables > keep for ever).

    Raises:
        UsageError: an age is not a number and a unit.
    """
    from auditor.settings import setting

    def age(name: str, given: str | None) -> timedelta | None:
        text = setting(name, given)
        return parse_age(text) if text else None

    return Retention(
        spans=age("retain_spans", spans),
        answers=age("retain_answers", answers),
        traces=age("retain_traces", traces),
    )
