"""Reading the rollups (:mod:`._rollups`): the summed counts of the buckets a filter selects, and rebuilding them.

Above :class:`~auditor.store.Store` in the module graph (it takes one), where :mod:`._rollups`,
which the store's writes call, is below it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from auditor.metrics import Counts, add_counts
from auditor.store._filters import AnswerFilter, check_text
from auditor.store._rollups import ALL, Bucket, recompute, table
from auditor.store._schema import RollupRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors


def rebuild(store: Store, on_day: Callable[[int, int], None] | None = None) -> int:
    """Recompute every rollup row from the stored answers; the number of rows written.
    ``on_day(done, days)`` is called after each day of answers is summed and written.

    One transaction: readers see the old rows until it commits; on PostgreSQL answer writers wait
    for it (a table lock), so none of their answers is counted twice or missed. On PostgreSQL the
    table is vacuumed and analysed afterwards: every row was replaced, so half the table's rows are
    dead until autovacuum comes by, and the planner's figures describe the old rows.
    """
    with store_errors(store.url):
        with Session(store.engine) as session, session.begin():
            written = recompute(session, on_day=on_day)
        if store.engine.dialect.name == "postgresql":
            with store.engine.connect() as conn:
                conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                    "VACUUM (ANALYZE) answer_rollups"
                )
    return written


def _slice(query: Any, wanted: AnswerFilter, bucket: Bucket) -> Any:
    check_text(wanted)  # refused here as on the answers' path, whichever path a filter takes
    c = table().c
    query = query.where(
        c.bucket == bucket,
        c.service == (wanted.service or ALL),
        c.source_class == (wanted.source_class or ALL),
        c.outcome == (wanted.outcome or ALL),
        c.verdict == (wanted.verdict or ALL),
    )
    if wanted.question_type:
        query = query.where(c.question_type == wanted.question_type)
    if wanted.policy:
        query = query.where(
            or_(
                c.policy_name == wanted.policy,
                c.policy_sha256.startswith(wanted.policy.lower(), autoescape=True),
            )
        )
    if wanted.since is not None:
        query = query.where(c.start >= wanted.since)
    if wanted.until is not None:
        query = query.where(c.start < wanted.until)
    return query


def slices(store: Store, wanted: AnswerFilter, bucket: Bucket) -> list[tuple[datetime, Counts]]:
    """The summed counts of each ``bucket`` that has answers matching ``wanted``, newest first.

    ``wanted`` must be :func:`expressible` with its time bounds on ``bucket`` edges (:func:`grain`).
    """
    c = table().c
    query = _slice(select(RollupRecord.start, c.counts), wanted, bucket).order_by(c.start.desc())
    out: list[tuple[datetime, Counts]] = []
    with store_errors(store.url), Session(store.engine) as session:
        for start, counts in session.execute(query):
            if out and out[-1][0] == start:
                add_counts(out[-1][1], counts)  # type: ignore[arg-type]
            else:
                out.append((start, Counter(counts)))
    return [(start, dict(counts)) for start, counts in out if counts.get("answers")]


def newest(store: Store, wanted: AnswerFilter, bucket: Bucket) -> datetime | None:
    """The start of the newest ``bucket`` with an answer matching ``wanted`` (an expressible filter)."""
    c = table().c
    query = _slice(select(func.max(RollupRecord.start)), wanted, bucket).where(c.answer_count > 0)
    with store_errors(store.url), Session(store.engine) as session:
        value: datetime | str | None = session.scalar(query)
    if value is None:
        return None
    if isinstance(value, str):  # an aggregate bypasses the column type: SQLite's stored text, naive UTC
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def samples(store: Store, wanted: AnswerFilter, bucket: Bucket) -> list[tuple[str, str, int]]:
    """``(sample key, cap key, answers)`` over the buckets ``wanted`` selects (as :func:`slices`):
    the summary's ``sample`` block, from the same rows as its figures."""
    c = table().c
    query = _slice(select(c.sample, c.cap, func.sum(c.answer_count)), wanted, bucket)
    query = query.group_by(c.sample, c.cap).order_by(c.sample, c.cap)
    with store_errors(store.url), Session(store.engine) as session:
        return [(sample, cap, int(n or 0)) for sample, cap, n in session.execute(query) if n]
