"""Key lookups at the driver level on SQLite: what a run asks its cache once per answer.

SQLAlchemy's execution of a small ``SELECT .. WHERE key IN (..)`` costs about 90 µs of CPU (a
pooled connection checked out, its statement cache key, the expanding ``IN`` parameter, the
result's processing); the driver's own ``execute`` of the same SQL about 7 µs, 16 µs with the
pool's checkout and reset. A run looks its verdict cache up once per answer, on the event loop
that sends its LLM requests, so on SQLite the lookup is compiled once per number of keys
(:func:`driver_select`) and executed on a pooled connection's driver cursor, each row passed
through its columns' own result processors, as SQLAlchemy applies them (a test compares the rows
both ways). Other databases, and statements whose parameters are not the keys and literals, are
executed by SQLAlchemy as before.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Dialect, Engine, Select
from sqlalchemy.exc import DBAPIError

Processor = Callable[[Any], Any]


@dataclass(frozen=True)
class DriverSelect:
    """A select for a fixed number of keys in the driver's SQL, and how its rows are read."""

    sql: str
    slots: tuple[int | None, ...]  # each positional parameter: the key it takes, or None (a literal)
    literals: tuple[Any, ...]  # the literal parameters' values, processed, in slot order
    key_processor: Processor | None
    row: Callable[..., Any]  # a named tuple of the selected columns
    processors: tuple[Processor | None, ...]

    def parameters(self, keys: Sequence[str]) -> tuple[Any, ...]:
        process = self.key_processor
        literals = iter(self.literals)
        return tuple(
            next(literals) if slot is None else (process(keys[slot]) if process else keys[slot])
            for slot in self.slots
        )

    def rows(self, raw: Sequence[Sequence[Any]]) -> list[Any]:
        out = []
        for values in raw:
            out.append(
                self.row(
                    *(p(v) if p is not None else v for p, v in zip(self.processors, values, strict=True))
                )
            )
        return out


@functools.lru_cache(maxsize=256)
def driver_select(statement: Select[Any], dialect: Dialect, count: int) -> DriverSelect | None:
    """``statement`` (whose one expanding parameter ``keys`` takes the keys) for ``count`` keys,
    compiled for ``dialect``; None unless the dialect is SQLite and its parameters are positional."""
    if dialect.name != "sqlite" or count < 1:
        return None
    compiled = statement.compile(dialect=dialect)
    expanded = compiled.construct_expanded_state({"keys": [f"key-{i}" for i in range(count)]})
    names = expanded.positiontup
    keys = expanded.parameter_expansion.get("keys", [])
    if names is None or len(keys) != count:  # pragma: no cover - SQLite's parameters are positional
        return None
    slot_of = {name: i for i, name in enumerate(keys)}
    slots: list[int | None] = []
    literals: list[Any] = []
    for name in names:
        process = expanded.processors.get(name)
        if name in slot_of:
            slots.append(slot_of[name])
        else:
            value = expanded.parameters[name]
            slots.append(None)
            literals.append(process(value) if process is not None else value)
    key_processor = expanded.processors.get(keys[0])
    columns = list(statement.selected_columns)
    processors = tuple(c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns)
    row = namedtuple("Row", [c.key for c in columns])  # type: ignore[misc]
    return DriverSelect(expanded.statement, tuple(slots), tuple(literals), key_processor, row, processors)


def driver_rows(engine: Engine, plan: DriverSelect, keys: Sequence[str]) -> list[Any]:
    """The rows of ``plan`` for ``keys``, through a pooled connection's driver cursor.

    Raises:
        DBAPIError: as SQLAlchemy raises it for the same statement (the caller translates it).
    """
    parameters = plan.parameters(keys)
    connection = engine.raw_connection()
    try:
        cursor = connection.cursor()
        try:
            cursor.execute(plan.sql, parameters)
            fetched = cursor.fetchall()
        finally:
            cursor.close()
    except engine.dialect.loaded_dbapi.Error as err:
        raise DBAPIError.instance(plan.sql, parameters, err, engine.dialect.loaded_dbapi.Error) from err
    finally:
        connection.close()
    return plan.rows(fetched)
