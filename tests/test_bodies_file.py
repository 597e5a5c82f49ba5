"""Where ``auditor serve``'s acknowledged bodies wait, and the store's checkpoints off the commits.

A SQLite store keeps the bodies in a database file of its own beside it (``<file>-bodies``), so the
receiver's commits never queue behind the store's writers; PostgreSQL keeps them in the store. A
body moves to the store as spans in two commits (spans first), so reading one again must add
nothing; bodies an earlier release left in the store's own table are moved over, never lost.
"""

from __future__ import annotations

import json
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from auditor.store import BodyQueue, Store, new_owner, received_traces, upgrade
from auditor.store._bodies import AS_RECEIVED, PACK_FROM, PACKED
from auditor.store._bodies_file import bodies_path
from auditor.store._checkpoint import SAFETY_PAGES
from auditor.store._intake import store_spans
from auditor.store._received import ReceivedBodyRecord
from auditor.store._runs import now
from auditor.store.migrations import alembic_config
from auditor.trace import ReceivedSpan
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (SQLite and PostgreSQL stores)


def _span(trace: str, span: str, parent: str | None = None) -> ReceivedSpan:
    record = json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": trace, "spanId": span}]}]}]}
    )
    return ReceivedSpan(trace, span, parent, 1, record)


def _count(url: str, table: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.scalar(text(f"select count(*) from {table}")) or 0)
    finally:
        engine.dispose()


def test_a_sqlite_store_keeps_bodies_in_a_file_beside_it(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    with Store(db) as store:
        BodyQueue(store).put("otlp-proto", b"\x0a\x00", 1)
    assert bodies_path(tmp_path / "store.db") == tmp_path / "store.db-bodies"
    assert _count(f"sqlite:///{tmp_path / 'store.db-bodies'}", "received_bodies") == 1
    assert _count(db, "received_bodies") == 0
    with Store(db) as store:
        assert BodyQueue(store).backlog() == (1, 1)


def test_postgresql_keeps_bodies_in_the_store(fresh_pg_url: str) -> None:  # noqa: F811
    upgrade(fresh_pg_url)
    with Store(fresh_pg_url) as store:
        assert store.bodies_engine is store.engine
        BodyQueue(store).put("otlp-proto", b"\x0a\x00", 1)
    assert _count(fresh_pg_url, "received_bodies") == 1


def _pg_compression(url: str) -> dict[str, tuple[str, str]]:
    """The compression and storage of the columns migrations 0018, 0020 and 0024 set, by column."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "select a.attrelid::regclass::text || '.' || a.attname, a.attcompression, a.attstorage"
                    " from pg_attribute a where (a.attrelid, a.attname) in"
                    " (('received_spans'::regclass, 'record'), ('received_spans'::regclass, 'proto'),"
                    " ('received_bodies'::regclass, 'body'))"
                )
            ).all()
            return {str(column): (str(compression), str(storage)) for column, compression, storage in rows}
    finally:
        engine.dispose()


def test_postgresql_compresses_received_records_and_bodies_with_lz4(fresh_pg_url: str) -> None:  # noqa: F811
    """pglz cost an acknowledgement 24 ms a megabyte of body (migration 0020) and a body's spans
    30 ms (0018), and its protobuf spans too (0024); lz4, or no compression on a server without it."""
    upgrade(fresh_pg_url)
    columns = _pg_compression(fresh_pg_url)
    assert set(columns) == {"received_spans.record", "received_spans.proto", "received_bodies.body"}
    assert all(pair in (("l", "x"), ("", "e")) for pair in columns.values()), columns
    with Store(fresh_pg_url) as store, store.engine.begin() as conn:
        config = alembic_config(store.url)
        config.attributes["connection"] = conn
        command.downgrade(config, "0017")
    assert set(_pg_compression(fresh_pg_url).values()) == {("", "x")}  # PostgreSQL's default again


def test_a_body_read_twice_stores_its_spans_once(db_url: str) -> None:  # noqa: F811
    """A kill between the spans' commit and the body's delete leaves the body: read again (here by
    a second owner once the first one's lease ran out), it adds nothing and the body goes."""
    upgrade(db_url)
    spans = [_span("a1" * 16, "b1" * 8), _span("a1" * 16, "b2" * 8, "b1" * 8)]
    with Store(db_url) as store:
        queue = BodyQueue(store)
        queue.put("otlp-proto", b"\x0a\x00", len(spans))
        first, second = new_owner(), new_owner()
        body = queue.claim(first, lease=0.05)
        assert body is not None
        apart = store.bodies_engine is not store.engine
        if apart:  # the spans' commit alone, as a kill before the body's delete leaves it
            with Session(store.engine) as session, session.begin():
                assert store_spans(session, spans, now()) == 2
        time.sleep(0.1)  # the lease runs out (a claim judges others' leases by its own)
        again = queue.claim(second, lease=0.05)
        assert again is not None and again.id == body.id
        added = queue.ingest(again, second, spans)
        assert added == (0 if apart else 2)
        assert queue.ingest(body, first, spans) is None  # the first owner lost it: nothing written
        assert queue.backlog() == (0, 0)
        assert {t.trace_id: t.spans for t in received_traces(store, 10)} == {"a1" * 16: 2}


def test_bodies_an_earlier_release_left_in_the_store_are_moved_and_read(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(db)
    engine = create_engine(db)
    try:
        with Session(engine) as session, session.begin():
            for n in range(3):
                session.add(
                    ReceivedBodyRecord(
                        adapter="otlp-proto",
                        spans=n + 1,
                        received_at=datetime(2026, 12, 1, tzinfo=UTC),
                        owner="old-owner",
                        body=zlib.compress(b"\x0a\x00"),
                    )
                )
    finally:
        engine.dispose()
    with Store(db) as store:
        assert BodyQueue(store).backlog() == (3, 6)
        body = BodyQueue(store).claim(new_owner(), lease=30)  # moved without their old holder
        assert body is not None and body.body == b"\x0a\x00" and body.spans == 1
    assert _count(db, "received_bodies") == 0
    with Store(db) as store:  # opened again: nothing more to move, nothing doubled
        assert BodyQueue(store).backlog() == (3, 6)


def test_background_checkpoints_keep_the_log_copied_and_commits_free_of_it(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    with Store(db, background_checkpoints=True) as store:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("pragma wal_autocheckpoint").scalar() == SAFETY_PAGES
        with store.bodies_engine.connect() as conn:
            assert conn.exec_driver_sql("pragma wal_autocheckpoint").scalar() == SAFETY_PAGES
        for n in range(20):
            BodyQueue(store).put("otlp-proto", bytes(range(256)) * 400, n)
        deadline = time.monotonic() + 10
        while True:  # a pass copies the whole log back: what it read equals what it copied
            with store.bodies_engine.connect() as conn:
                _, logged, copied = conn.exec_driver_sql("pragma wal_checkpoint(PASSIVE)").one()
            checker = store._checkpointer
            assert checker is not None
            if checker.checkpoints >= 2 and logged == copied:
                break
            assert time.monotonic() < deadline, "no background checkpoint ran"
            time.sleep(0.05)
    with Store(db) as store, store.engine.connect() as conn:  # an ordinary store keeps SQLite's default
        assert conn.exec_driver_sql("pragma wal_autocheckpoint").scalar() == 1000


def test_a_body_is_kept_as_received_until_pack_from_wait_then_compressed(db_url: str) -> None:  # noqa: F811
    """Compressing costs the acknowledgement and the read: only a long backlog is compressed."""
    upgrade(db_url)
    body = b"\x0a\x00" * 5000
    with Store(db_url) as store:
        queue = BodyQueue(store)
        for _ in range(PACK_FROM):
            queue.put("otlp-proto", body, 1)
        queue.backlog()  # what the receiver asks before each request
        queue.put("otlp-proto", body, 1)
        engine = store.bodies_engine
        with engine.connect() as conn:
            marks = [
                bytes(row[0])[:1]
                for row in conn.execute(text("SELECT body FROM received_bodies ORDER BY id"))
            ]
        assert marks == [AS_RECEIVED] * PACK_FROM + [PACKED]
        held = queue.claim_many(new_owner(), 30.0, PACK_FROM + 1)
        assert [h.body for h in held] == [body] * (PACK_FROM + 1)
