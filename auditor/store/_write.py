"""The store's bulk writes: an answer with its evidence, claims and verdicts in a few statements.

The ORM's unit of work costs a flush and several statements per object; an answer carries tens of
rows, so a run would spend more time in the ORM than in the database. Here the rows are the column
values :mod:`._convert` builds (:class:`._convert.AnswerRows`, plain dicts: no mapped objects; a test
checks they name every column of their table) and go to the
database as one ``INSERT`` per table, executed with all the rows (a multi-row ``VALUES`` measured
slower: it is compiled again for every number of rows). ``INSERT .. ON CONFLICT`` (SQLite and
PostgreSQL) makes the shared rows (traces, cache entries) safe against a concurrent writer without a retry;
other databases get a read-then-write fallback.

Nothing here commits: callers run these inside one transaction (:meth:`Store.save_answer`, or a
batch of the run's writer, :mod:`._writer`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Dialect, Table, bindparam, delete, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from auditor.store._convert import AnswerRows
from auditor.store._runs import now
from auditor.store._schema import (
    AnswerRecord,
    Base,
    ClaimRecord,
    EvidenceRecord,
    RunTraceRecord,
    TraceRecord,
    VerdictRecord,
)

#: Rows per statement, and keys per ``IN (...)`` lookup: far below SQLite's bound on parameters.
CHUNK = 500

Processor = Callable[[Any], Any]


def _table(model: type[Base]) -> Table:
    table = model.__table__
    if not isinstance(table, Table):  # pragma: no cover - every model maps one table
        raise TypeError(f"{model.__name__} maps no table")
    return table


def _pages(values: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(values), CHUNK):
        yield list(values[start : start + CHUNK])


@dataclass(frozen=True)
class _DriverInsert:
    """The ``INSERT`` of every column of a table in the driver's SQL, and how a row becomes its
    parameters: the values by column key, then each column type's own bind processor (as
    SQLAlchemy applies them) on the columns that have one."""

    sql: str
    values: Callable[[Mapping[str, Any]], tuple[Any, ...]]
    processors: tuple[tuple[int, Processor], ...]

    def parameters(self, rows: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
        out = []
        # Rows often share a value (one time for a batch's rows): processed once, then reused.
        last: dict[int, tuple[Any, Any]] = {}
        for row in rows:
            values = list(self.values(row))
            for index, process in self.processors:
                raw = values[index]
                seen = last.get(index)
                if seen is not None and seen[0] is raw:
                    values[index] = seen[1]
                else:
                    values[index] = process(raw)
                    last[index] = (raw, values[index])
            out.append(tuple(values))
        return out


@functools.lru_cache(maxsize=64)
def _driver_insert(
    table: Table, dialect: Dialect, upsert: bool = False, missing: bool = False
) -> _DriverInsert | None:
    """The driver-level insert of ``table`` on ``dialect`` (``upsert``: a row whose ``key`` is
    there already is overwritten, :func:`_upsert_statement`; ``missing``: a row whose primary key
    is there is left as it is); None when the compiled statement's parameters are not its columns
    one for one (then SQLAlchemy executes it)."""
    keys = [c.key for c in table.columns]
    statement: Any = table.insert()
    if upsert:
        statement = _upsert_statement(table, dialect.name)
    elif missing:
        statement = sqlite.insert(table).on_conflict_do_nothing()
    compiled = statement.compile(dialect=dialect, column_keys=keys)
    names = compiled.positiontup
    if names is None or len(names) < 2 or sorted(names) != sorted(keys):  # pragma: no cover
        return None
    processors = [compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names]
    return _DriverInsert(
        compiled.string,
        operator.itemgetter(*names),
        tuple((i, p) for i, p in enumerate(processors) if p is not None),
    )


#: Rows per statement of :func:`_values_insert`: a multi-row ``VALUES`` of this many rows is
#: prepared by the server once and reused (psycopg prepares a statement seen five times).
VALUES_ROWS = 100


@functools.lru_cache(maxsize=64)
def _values_insert(table: Table, dialect: Dialect, rows: int) -> _DriverInsert:
    """``INSERT .. VALUES (..), .. ON CONFLICT DO NOTHING`` of ``rows`` rows of every column of
    ``table``, in the driver's positional parameters, and how a row becomes them (PostgreSQL: one
    statement for many rows cost the server and the driver less than one per row)."""
    quote = dialect.identifier_preparer
    columns = list(table.columns)
    width = len(columns)
    values = ", ".join(
        "(" + ", ".join(f"${r * width + c + 1}" for c in range(width)) + ")" for r in range(rows)
    )
    sql = (
        f"INSERT INTO {quote.format_table(table)} ({', '.join(quote.quote(c.name) for c in columns)}) "
        f"VALUES {values} ON CONFLICT DO NOTHING"
    )
    processors = [c.type.dialect_impl(dialect).bind_processor(dialect) for c in columns]
    getter = operator.itemgetter(*[c.key for c in columns])
    return _DriverInsert(sql, getter, tuple((i, p) for i, p in enumerate(processors) if p is not None))


def _insert_values_missing(session: Session, table: Table, values: Sequence[dict[str, Any]]) -> bool:
    """:func:`insert_missing` at the driver on PostgreSQL, :data:`VALUES_ROWS` rows a statement;
    False (nothing written) with a driver other than psycopg."""
    connection = session.connection()
    if connection.dialect.driver != "psycopg":
        return False
    import psycopg  # the driver of this connection

    driver = connection.connection.driver_connection
    if not isinstance(driver, psycopg.Connection):  # pragma: no cover - the async driver
        return False
    # A raw cursor takes the server's own $n parameters: psycopg's conversion of %s placeholders
    # is not cached past 50 parameters, and parsing the statement cost more than the insert.
    with psycopg.RawCursor(driver) as cursor:
        for start in range(0, len(values), VALUES_ROWS):
            page = values[start : start + VALUES_ROWS]
            plan = _values_insert(table, connection.dialect, len(page))
            cursor.execute(plan.sql, [v for row in plan.parameters(page) for v in row])
    return True


def _insert_chunks(
    session: Session, model: type[Base], values: Sequence[dict[str, Any]], *, upsert: bool = False
) -> None:
    # executemany of one compiled statement: a multi-row VALUES is compiled afresh for each
    # number of rows, which costs more than it saves. On SQLite the rows go to the driver's
    # executemany directly, through the same bind processors: SQLAlchemy's handling of each
    # parameter of each row cost more than SQLite's insert of it (the rows name every column).
    # ``upsert``: rows whose ``key`` is there already are overwritten (SQLite and PostgreSQL).
    table = _table(model)
    connection = session.connection()
    dialect = connection.dialect
    plan = _driver_insert(table, dialect, upsert) if dialect.name == "sqlite" else None
    statement = _upsert_statement(table, dialect.name) if upsert else table.insert()
    for page in _pages(values):
        if plan is None:
            session.execute(statement, page)
        else:
            connection.exec_driver_sql(plan.sql, plan.parameters(page))


def insert_missing(session: Session, model: type[Base], values: Sequence[dict[str, Any]]) -> None:
    """Insert the rows whose primary key is not there yet; leave the others as they are."""
    if not values:
        return
    table = _table(model)
    connection = session.connection()
    dialect = connection.dialect
    every_column = len(values[0]) == len(table.columns)
    if (
        dialect.name == "sqlite"
        and every_column
        and (plan := _driver_insert(table, dialect, missing=True)) is not None
    ):
        # At the driver, as _insert_chunks does, when the rows name every column: SQLAlchemy's
        # handling of each row's parameters cost more than the insert (a body's 510 spans).
        for page in _pages(values):
            connection.exec_driver_sql(plan.sql, plan.parameters(page))
        return
    if dialect.name == "postgresql" and every_column and _insert_values_missing(session, table, values):
        return
    if dialect.name in ("sqlite", "postgresql"):
        insert = (sqlite.insert if dialect.name == "sqlite" else postgresql.insert)(table)
        for page in _pages(values):
            session.execute(insert.on_conflict_do_nothing(), page)
        return
    key = [c.key for c in table.primary_key.columns]
    wanted = {tuple(v[k] for k in key): v for v in values}
    have = {
        tuple(row)
        for row in session.execute(
            select(*table.primary_key.columns).where(tuple_(*table.primary_key.columns).in_(list(wanted)))
        )
    }
    missing = [v for k, v in wanted.items() if k not in have]
    _insert_chunks(session, model, missing)


def upsert(session: Session, model: type[Base], values: Mapping[str, dict[str, Any]]) -> None:
    """Insert each row of ``values`` (by its ``key`` column) or overwrite the one there."""
    if not values:
        return
    table = _table(model)
    dialect = session.get_bind().dialect.name
    batch = [{"key": key, **row} for key, row in values.items()]
    if dialect in ("sqlite", "postgresql"):  # at the driver on SQLite, as the answers' rows
        _insert_chunks(session, model, batch, upsert=True)
        return
    column = table.c["key"]
    have = set(session.scalars(select(column).where(column.in_(list(values)))))
    for row in batch:
        if row["key"] in have:
            session.execute(table.update().where(column == row["key"]).values(row))
        else:
            session.execute(table.insert().values(row))


def _upsert_statement(table: Table, dialect: str) -> Any:
    """``INSERT .. ON CONFLICT (key) DO UPDATE`` of every other column, on SQLite or PostgreSQL."""
    insert = (sqlite.insert if dialect == "sqlite" else postgresql.insert)(table)
    updated = {c.key: insert.excluded[c.key] for c in table.columns if c.key != "key"}
    return insert.on_conflict_do_update(index_elements=["key"], set_=updated)


def link_traces(
    session: Session,
    run_id: str,
    traces: Iterable[tuple[str, str, str, int | None]],
    *,
    ordered: bool = False,
    positions: Sequence[int] | None = None,
) -> None:
    """Store each trace (key, trace id, digest, spans) once, and record that ``run_id`` read it
    (``ordered``: in this order, kept as ``run_traces.position``; ``positions``: at these, one per
    trace, when the run's traces are recorded in parts: a distributed run's shards)."""
    at = now()
    unique: dict[str, tuple[str, str, str, int | None]] = {}
    placed: dict[str, int] = {}
    for index, (key, trace_id, digest, spans) in enumerate(traces):
        unique.setdefault(key, (key, trace_id, digest, spans))
        if positions is not None:
            placed.setdefault(key, positions[index])
    insert_missing(
        session,
        TraceRecord,
        [
            {"key": key, "trace_id": trace_id, "digest": digest, "spans": spans, "first_seen_at": at}
            for key, trace_id, digest, spans in unique.values()
        ],
    )
    insert_missing(
        session,
        RunTraceRecord,
        [
            {
                "run_id": run_id,
                "trace_key": key,
                "position": placed[key] if positions is not None else index if ordered else None,
            }
            for index, key in enumerate(unique)
        ],
    )


def saved_answers(session: Session, run_id: str, answer_ids: Sequence[str]) -> set[str]:
    """Which of these answers the run holds already."""
    found: set[str] = set()
    for start in range(0, len(answer_ids), CHUNK):
        chunk = answer_ids[start : start + CHUNK]
        found.update(
            session.scalars(
                select(AnswerRecord.answer_id).where(
                    AnswerRecord.run_id == run_id, AnswerRecord.answer_id.in_(chunk)
                )
            )
        )
    return found


def number_answers(session: Session, run_id: str, answer_ids: Sequence[str]) -> None:
    """Set each answer's position to its index in ``answer_ids`` (one executemany UPDATE)."""
    table = _table(AnswerRecord)
    statement = (
        table.update()
        .where(table.c.run_id == run_id, table.c.answer_id == bindparam("wanted"))
        .values(position=bindparam("place"))
    )
    values = [{"wanted": answer_id, "place": place} for place, answer_id in enumerate(answer_ids)]
    for page in _pages(values):
        session.execute(statement, page)


def remove_answers(session: Session, run_id: str, answer_ids: Sequence[str]) -> dict[str, int]:
    """Delete the answers of the run already saved under these ids (to be replaced); their positions."""
    found: dict[str, int] = {}
    for start in range(0, len(answer_ids), CHUNK):
        chunk = answer_ids[start : start + CHUNK]
        for answer_id, position in session.execute(
            select(AnswerRecord.answer_id, AnswerRecord.position).where(
                AnswerRecord.run_id == run_id, AnswerRecord.answer_id.in_(chunk)
            )
        ):
            found[answer_id] = position
    if found:
        # Their evidence, claims and verdicts go with them (ON DELETE CASCADE).
        session.execute(
            delete(AnswerRecord).where(AnswerRecord.run_id == run_id, AnswerRecord.answer_id.in_(list(found)))
        )
    return found


def insert_answers(session: Session, records: Sequence[AnswerRows]) -> None:
    """Insert answers built by :func:`._convert.answer_record`, children included, one statement per table."""
    answers = [r.answer for r in records]
    evidence = [row for r in records for row in r.evidence]
    claims = [row for r in records for row in r.claims]
    verdicts = [row for r in records for row in r.verdicts]
    # Parents before children: the foreign keys are checked at each statement.
    for model, values in (
        (AnswerRecord, answers),
        (EvidenceRecord, evidence),
        (ClaimRecord, claims),
        (VerdictRecord, verdicts),
    ):
        if values:
            _insert_chunks(session, model, values)
