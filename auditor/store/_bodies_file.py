"""Beside a SQLite store, a database of its own for the request bodies ``auditor serve`` acknowledges.

SQLite lets one connection write at a time, per database file. In the store's own file, the
receiver's commit of a body (what each client waits for) queued behind the ingest worker's commit
of a whole body's spans and behind the audits' answers: measured with 4 clients of 510-span
bodies, the receiver spent 24 ms a request on average waiting for that lock, and SQLite's busy
handler, which sleeps 1, 2, 5, 10 ... 100 ms between tries, made the slowest waits several hundred
milliseconds. In a file of their own (``<store file>-bodies``, with its own ``-wal`` and ``-shm``)
the bodies wait only for each other and for the ingest worker's claims and deletes, each a short
statement.

A body moves from this file to the store as spans in two commits, the spans first: a process
killed between them leaves the body, which is read again, and reading it again adds nothing
(:func:`~auditor.store._intake.store_spans` keeps a re-sent span once). PostgreSQL locks rows,
not files: its bodies stay in the store's own ``received_bodies`` table.

Bodies a store of an earlier release left in its own ``received_bodies`` table (acknowledged,
then the server stopped) are moved here when the file is opened, so none is lost by an upgrade.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, Table, delete, select, update
from sqlalchemy.engine import URL
from sqlalchemy.orm import Session

from auditor.store._migrate import make_engine, sqlite_file
from auditor.store._received import ReceivedBodyRecord

#: What the bodies' file adds to the store file's name.
SUFFIX = "-bodies"
#: Bodies moved from the store's own table per transaction.
MOVE_PAGE = 50


def bodies_path(store_file: Path) -> Path:
    """The bodies' file of a store file: ``auditor.db`` -> ``auditor.db-bodies``."""
    return store_file.with_name(store_file.name + SUFFIX)


def bodies_engine(main: Engine, wal_autocheckpoint: int | None = None) -> Engine:
    """The engine of the bodies' file beside ``main``'s SQLite file (created with its table if
    missing, earlier bodies moved in), or ``main`` itself for any other database."""
    store_file = sqlite_file(main.url)
    if store_file is None:
        return main
    url = URL.create("sqlite", database=str(bodies_path(store_file)), query=main.url.query)
    engine = make_engine(url, wal_autocheckpoint=wal_autocheckpoint)
    try:
        _table().create(engine, checkfirst=True)
        _move_earlier_bodies(main, engine)
    except BaseException:
        engine.dispose()
        raise
    return engine


def _table() -> Table:
    table = ReceivedBodyRecord.__table__
    if not isinstance(table, Table):  # pragma: no cover - the model maps one table
        raise TypeError("ReceivedBodyRecord maps no table")
    return table


def _move_earlier_bodies(main: Engine, bodies: Engine) -> None:
    """Move the store's own waiting bodies into the bodies' file, the store locked meanwhile (a
    second process opening it waits, then finds none): copied first, then deleted, so a kill
    between the two leaves a body twice, which is read twice and stored once."""
    record = ReceivedBodyRecord
    while True:
        with Session(main) as session, session.begin():
            # A write first: it takes the store's write lock before anything is read.
            if not session.connection().execute(update(record).values(owner=record.owner)).rowcount:
                return
            rows = session.scalars(select(record).order_by(record.id).limit(MOVE_PAGE)).all()
            moved = [
                {
                    "adapter": row.adapter,
                    "spans": row.spans,
                    "received_at": row.received_at,
                    "owner": None,
                    "heartbeat_at": None,
                    "body": row.body,
                }
                for row in rows
            ]
            with Session(bodies) as target, target.begin():
                target.execute(_table().insert(), moved)
            session.execute(delete(record).where(record.id.in_([row.id for row in rows])))
