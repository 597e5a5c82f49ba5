"""What the server's pages show beside the answers: filter choices, conversations, traces being received.

Read-only queries over the audit tables and the intake's (:mod:`._received`). A received trace's
state is derived, not stored: ``pending`` while it has spans not yet audited, ``auditing`` while
a worker's lease on it holds, ``audited`` or ``failed`` after its latest pass, ``skipped`` when a
live server's sample or filter left it out (:data:`auditor.store._live.NOT_AUDITED`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session as Session

from auditor.store._live import NOT_AUDITED
from auditor.store._received import ReceivedSpanRecord, ReceivedTraceRecord
from auditor.store._rollups import ALL
from auditor.store._runs import now
from auditor.store._schema import AnswerRecord, RollupRecord, RunRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors

TraceState = Literal["pending", "retrying", "auditing", "audited", "failed", "skipped"]


@dataclass(frozen=True)
class Facets:
    """The values the answers' filters can take in this store."""

    question_types: tuple[str, ...]
    source_classes: tuple[str, ...]
    policies: tuple[tuple[str, str], ...]  # (name, sha256), most recently used first


@dataclass(frozen=True)
class ReceivedTrace:
    """A trace received over OTLP, with where its audit stands."""

    trace_id: str
    spans: int
    generation: int
    audited_generation: int
    root_ended: bool
    first_span_at: datetime
    last_span_at: datetime
    state: TraceState
    run_id: str | None
    error: str | None


@dataclass(frozen=True)
class Conversation:
    """A conversation (OpenInference ``session.id`` and the like): its answers across runs."""

    conversation_id: str
    answers: int
    grounded: int
    not_grounded: int
    first_at: datetime
    last_at: datetime


def recent_conversations(store: Store, limit: int = 50) -> list[Conversation]:
    """The conversations with the most recent answers, newest first.

    The conversations are found by reading answers newest first (the ``generated_at`` index) until
    ``limit`` distinct ones are seen, then only their answers are counted (the ``conversation_id``
    index): the cost follows the page, not the store.
    """
    newest = (
        select(AnswerRecord.conversation_id)
        .where(AnswerRecord.conversation_id.is_not(None))
        .order_by(AnswerRecord.generated_at.desc())
    )
    with store_errors(store.url), Session(store.engine) as session:
        chosen: list[str] = []
        offset, batch = 0, max(limit * 8, 64)
        while len(chosen) < limit:
            ids = list(session.scalars(newest.offset(offset).limit(batch)))
            for cid in ids:
                if cid not in chosen and cid is not None:
                    chosen.append(cid)
                    if len(chosen) == limit:
                        break
            if len(ids) < batch:
                break
            offset += batch
        if not chosen:
            return []
        last = func.max(AnswerRecord.generated_at)
        query = (
            select(
                AnswerRecord.conversation_id,
                func.count(),
                func.sum(case((AnswerRecord.grounded.is_(True), 1), else_=0)),
                func.sum(case((AnswerRecord.grounded.is_(False), 1), else_=0)),
                func.min(AnswerRecord.generated_at),
                last,
            )
            .where(AnswerRecord.conversation_id.in_(chosen))
            .group_by(AnswerRecord.conversation_id)
            .order_by(last.desc())
        )
        return [
            Conversation(str(cid), int(n), int(ok or 0), int(bad or 0), _aware(first), _aware(latest))
            for cid, n, ok, bad, first, latest in session.execute(query)
        ]


def _aware(value: datetime | str) -> datetime:
    # Aggregates bypass the column type: SQLite hands back its stored text, naive UTC.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def answer_facets(store: Store) -> Facets:
    """The distinct question types, source classes and policies of the stored answers.

    Question types and source classes are read from the per-day rollups (:mod:`._rollups`), which
    hold every answer once per question type and once per source class of its evidence: a few
    rows per day, where a ``DISTINCT`` over the answers and their evidence reads every row.
    """
    day = (
        RollupRecord.bucket == "day",
        RollupRecord.service == ALL,
        RollupRecord.outcome == ALL,
        RollupRecord.verdict == ALL,
    )
    question_types = (
        select(RollupRecord.question_type)
        .distinct()
        .where(*day, RollupRecord.source_class == ALL, RollupRecord.question_type != "")
        .order_by(RollupRecord.question_type)
    )
    source_classes = (
        select(RollupRecord.source_class)
        .distinct()
        .where(*day, RollupRecord.source_class != ALL)
        .order_by(RollupRecord.source_class)
    )
    policies = (
        select(RunRecord.policy_name, RunRecord.policy_sha256)
        .where(RunRecord.policy_sha256.is_not(None))
        .group_by(RunRecord.policy_name, RunRecord.policy_sha256)
        .order_by(func.max(RunRecord.started_at).desc())
    )
    with store_errors(store.url), Session(store.engine) as session:
        return Facets(
            tuple(str(v) for v in session.scalars(question_types)),
            tuple(str(v) for v in session.scalars(source_classes)),
            tuple((str(name or ""), str(sha)) for name, sha in session.execute(policies)),
        )


def _state(row: ReceivedTraceRecord, at: datetime) -> TraceState:
    if row.error and row.audited_generation < row.generation:
        return "retrying"  # its last audit failed and is tried again (store._intake, MAX_ATTEMPTS)
    if (
        row.owner is not None
        and row.heartbeat_at is not None
        and row.lease_seconds is not None
        and row.heartbeat_at + timedelta(seconds=row.lease_seconds) > at
    ):
        return "auditing"
    if row.audited_generation < row.generation:
        return "pending"
    if row.error and row.error.startswith(NOT_AUDITED):
        return "skipped"  # outside the sample, or not matching the filter: not a failure
    return "failed" if row.error else "audited"


def received_traces(store: Store, limit: int = 100) -> list[ReceivedTrace]:
    """The traces received most recently (by their last span), newest first.

    The newest are read from the ``last_span_at`` index, then only their spans are counted.
    """
    query = select(ReceivedTraceRecord).order_by(ReceivedTraceRecord.last_span_at.desc()).limit(limit)
    at = now()
    with store_errors(store.url), Session(store.engine) as session:
        rows = session.scalars(query).all()
        ids = [row.trace_id for row in rows]
        counted: dict[str, int] = {}
        for start in range(0, len(ids), 500):  # the ids read, so a trace received since has no say
            spans = (
                select(ReceivedSpanRecord.trace_id, func.count())
                .where(ReceivedSpanRecord.trace_id.in_(ids[start : start + 500]))
                .group_by(ReceivedSpanRecord.trace_id)
            )
            counted.update((t, int(n)) for t, n in session.execute(spans))
        return [
            ReceivedTrace(
                trace_id=row.trace_id,
                spans=counted.get(row.trace_id, 0),
                generation=row.generation,
                audited_generation=row.audited_generation,
                root_ended=row.root_ended,
                first_span_at=row.first_span_at,
                last_span_at=row.last_span_at,
                state=_state(row, at),
                run_id=row.run_id,
                error=row.error,
            )
            for row in rows
        ]
