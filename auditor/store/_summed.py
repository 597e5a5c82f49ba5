"""Adding up the stored counts of the answers a filter selects, in SQL: for the filters rollups cannot express.

Each answer keeps its own :func:`auditor.metrics.answer_counts` (``answers.counts``, migration 0015,
a JSON object). A summary whose filter names a verdict, free text, a run or a bound inside an
hour is the key-by-key sum of those objects over the matching answers, and a trend the
same sum per hour or day. Decoding each object in Python costs about as much as the database's
own JSON functions (measured: 10 and 9 microseconds an answer on SQLite), so the query first
groups identical objects (answers of the same shape have the same counts, byte for byte: one
group, with how many answers it holds), then takes only the distinct ones apart
(``json_each`` on SQLite, ``json_each_text`` on PostgreSQL) and sums each key times its group's
answers. Answers whose objects all differ cost what they did; the common case costs a sort of the
matching rows' text.

An answer without counts (stored before migration 0015 filled them) makes the sum unknown: None,
and the caller reads the answers themselves.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import JSON, BigInteger, Text, cast, func, select, true, type_coerce
from sqlalchemy.orm import Session

from auditor.metrics import Counts
from auditor.store._filters import AnswerFilter, where
from auditor.store._schema import AnswerRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors

Bucket = Literal["hour", "day"]


def _bucket(dialect: str, bucket: Bucket) -> Any:
    """The start of an answer's hour or day (UTC): text ``YYYY-MM-DD[ HH]`` on SQLite, a timestamp on PostgreSQL."""
    if dialect == "postgresql":
        return func.date_trunc(bucket, func.timezone("UTC", AnswerRecord.generated_at))
    # SQLite keeps the UTC time as text, 'YYYY-MM-DD HH:MM:SS.ffffff': its prefix is the bucket.
    return func.substr(type_coerce(AnswerRecord.generated_at, Text), 1, 13 if bucket == "hour" else 10)


def _start(value: Any) -> datetime:
    if isinstance(value, str):
        return datetime.strptime(value, "%Y-%m-%d %H" if len(value) > 10 else "%Y-%m-%d").replace(tzinfo=UTC)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)  # type: ignore[no-any-return]


def _sums(store: Store, wanted: AnswerFilter, bucket: Bucket | None) -> list[tuple[Any, str | None, int]]:
    """``(bucket or None, key, sum)`` rows over the matching answers; a None key marks an answer without counts."""
    dialect = store.engine.dialect.name
    doc = (cast if dialect == "postgresql" else type_coerce)(AnswerRecord.counts, Text)
    groups = [doc.label("doc")]
    if bucket is not None:
        groups.append(_bucket(dialect, bucket).label("bucket"))
    query: Any = select(*groups, func.count().label("n"))
    distinct = where(query, wanted).group_by(*groups).subquery()
    if dialect == "postgresql":
        pairs = func.json_each_text(cast(distinct.c.doc, JSON)).table_valued("key", "value").lateral()
        value: Any = cast(pairs.c.value, BigInteger)
    else:
        pairs = func.json_each(distinct.c.doc).table_valued("key", "value")
        value = pairs.c.value
    keys = [distinct.c.bucket] if bucket is not None else []
    query = (
        select(*keys, pairs.c.key, func.sum(value * distinct.c.n))
        .select_from(distinct.outerjoin(pairs, true()))
        .group_by(*keys, pairs.c.key)
    )
    if bucket is not None:
        query = query.order_by(distinct.c.bucket.desc())
    with store_errors(store.url), Session(store.engine) as session:
        return [
            (row[0] if bucket is not None else None, row[-2], int(row[-1] or 0))
            for row in session.execute(query)
        ]


def summed(store: Store, wanted: AnswerFilter) -> Counts | None:
    """The sum of the stored counts (``answers.counts``) of every answer matching ``wanted``, any filter.

    None when one of them has no counts (stored before migration 0015 filled them): the caller then
    reads the answers themselves.
    """
    total: Counts = {}
    for _, key, value in _sums(store, wanted, None):
        if key is None:
            return None
        if value:
            total[key] = value
    return total


def summed_by(store: Store, wanted: AnswerFilter, bucket: Bucket) -> list[tuple[datetime, Counts]] | None:
    """The summed counts of the answers matching ``wanted`` per ``bucket`` that has any, newest first.

    None when one of them has no counts (as :func:`summed`).
    """
    out: list[tuple[datetime, Counts]] = []
    last: Any = None
    for at, key, value in _sums(store, wanted, bucket):
        if key is None:
            return None
        if not out or at != last:
            out.append((_start(at), {}))
            last = at
        if value:
            out[-1][1][key] = value
    return out
