"""The ``run_id`` prefix filter is an index range that selects exactly the ids starting with the prefix.

``auditor.store._filters.prefix`` turns a prefix into ``prefix <= id < _after(prefix)``: compared by
code point on both stores (SQLite's UTF-8 bytes, PostgreSQL's pattern operators), so the range must
hold the same ids as Python's ``str.startswith``, including ``%``, ``_``, the escape character,
upper and lower case and the last code points, and an index must answer it (migration 0022).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Column, MetaData, Table, select, text

from auditor.store import AnswerFilter, Store
from auditor.store._filters import _after, prefix, where
from auditor.store._schema import AnswerRecord, SafeText
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (SQLite and the session's PostgreSQL)

IDS = [
    "run-0001",
    "run-0001a",
    "run-0002",
    "RUN-0001",
    "run_0001",
    "run%0001",
    "run/0001",
    "run-000",
    "ru",
    "runé-1",
    "rune-1",
    "run\U0010ffff",
    "run\U0010ffffx",
    "rvn",
    "run\ud7ff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
    "run\ue000",
    "",
]
PREFIXES = [
    "run-0001",
    "run-000",
    "run",
    "RUN",
    "run_",
    "run%",
    "run/",
    "ru",
    "runé",
    "run\U0010ffff",
    "\U0010ffff",
    "r",
]


@pytest.fixture
def ids(db_url: str) -> Iterator[tuple[Store, Table]]:  # noqa: F811
    with Store(db_url, upgrade=True) as store:
        table = Table("prefix_probe", MetaData(), Column("id", SafeText, primary_key=True))
        table.create(store.engine)
        with store.engine.begin() as conn:
            conn.execute(table.insert(), [{"id": i} for i in IDS])
        yield store, table


def test_the_range_selects_exactly_the_ids_with_the_prefix(ids: tuple[Store, Table]) -> None:
    store, table = ids
    with store.engine.connect() as conn:
        for wanted in PREFIXES:
            got = set(conn.scalars(select(table.c.id).where(prefix(table.c.id, wanted))))
            assert got == {i for i in IDS if i.startswith(wanted)}, wanted
        assert sorted(conn.scalars(select(table.c.id).where(prefix(table.c.id, "run")))) == sorted(
            i for i in IDS if i.startswith("run")
        )


def test_the_next_string_after_a_prefix() -> None:
    assert _after("run-0001") == "run-0002"
    assert _after("a\U0010ffff") == "b"
    assert _after("\U0010ffff\U0010ffff") is None
    assert _after("\ud7ff") == "\ue000"  # past the surrogates, which are not text


def test_an_index_answers_the_run_id_prefix(db_url: str) -> None:  # noqa: F811
    with Store(db_url, upgrade=True) as store, store.engine.connect() as conn:
        query = where(select(AnswerRecord.answer_id), AnswerFilter(run_id="run-00"))
        compiled = query.compile(store.engine, compile_kwargs={"literal_binds": True})
        if store.engine.dialect.name == "postgresql":
            conn.execute(text("SET enable_seqscan = off"))
            plan = "\n".join(conn.scalars(text(f"EXPLAIN {compiled}")))
            assert "ix_answers_run_id_pattern" in plan, plan
        else:
            plan = "\n".join(str(row[-1]) for row in conn.execute(text(f"EXPLAIN QUERY PLAN {compiled}")))
            assert "SEARCH answers" in plan and "run_id>? AND run_id<?" in plan, plan
