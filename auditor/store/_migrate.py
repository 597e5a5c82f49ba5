"""Engines and schema migrations: the one place that calls Alembic.

The migrations ship in :mod:`auditor.store.migrations` and run from code, on the store's own
connection, so ``pip install trace-auditor`` is all a user needs (no ``alembic.ini``).

Guarantees:

- Migrations run under a lock (SQLite: ``BEGIN EXCLUSIVE`` on the migration connection;
  PostgreSQL: ``pg_advisory_xact_lock`` for the schema), and the revision is read again once the
  lock is held: processes that open a new store at once migrate it once, the others wait and find
  it at head.
- A database at a revision this package does not ship (a newer auditor's), or with tables but no
  version record (not an auditor store), is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import NoSuchModuleError
from sqlalchemy.pool import StaticPool

from auditor.errors import StoreError
from auditor.store._translate import driver_error, shown
from auditor.store.migrations import alembic_config

#: Seconds a SQLite connection waits for another process's lock before giving up.
SQLITE_BUSY_SECONDS = 30.0


def sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite URL; None for other databases, in-memory ones and ``file:`` URIs."""
    if url.get_backend_name() != "sqlite" or url.query.get("uri"):
        return None
    database = url.database
    return None if not database or database == ":memory:" else Path(database)


def is_in_memory(url: URL) -> bool:
    """A SQLite database in this process's memory: no other process can see it."""
    return url.get_backend_name() == "sqlite" and not url.query.get("uri") and sqlite_file(url) is None


def check_sqlite_path(url: URL, *, create: bool) -> None:
    """Refuse a folder as a database; with ``create``, make the file's folder, else require the file."""
    path = sqlite_file(url)
    if path is None:
        return
    if path.is_dir():
        raise StoreError(
            f"{shown(url)} names a folder, not a database file: use a file in it, "
            f"e.g. sqlite:///{path / 'auditor.db'}."
        )
    if not create:
        if not path.exists():
            raise StoreError(
                f"No store at {shown(url)} (no such file): check --db (or AUDITOR_DB_URL), "
                "or run `auditor audit` to create it."
            )
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StoreError(
            f"Cannot create the folder {path.parent} for {shown(url)}: {err.strerror or err}; "
            "check --db (or AUDITOR_DB_URL)."
        ) from err


def json_text(value: Any) -> str:
    """``json.dumps(value)``, the text every JSON column holds; an empty list or object, most of
    the JSON values an answer's rows carry (no markers, no judge errors, no conflicts), spelled
    without a call to the encoder."""
    kind = type(value)
    if (kind is list or kind is tuple) and not value:
        return "[]"
    if kind is dict and not value:
        return "{}"
    return json.dumps(value)


def make_engine(url: URL, *, wal_autocheckpoint: int | None = None) -> Engine:
    """An engine for ``url``. SQLite gets foreign keys on, a patient lock wait (``busy_timeout``),
    write-ahead logging with ``synchronous=NORMAL`` for files, and in-memory sharing.

    WAL lets readers (a second ``auditor runs``, the cache lookups of a run) read while a writer
    commits, and a commit appends to the log instead of rewriting pages and syncing twice. With
    ``synchronous=NORMAL`` a committed transaction survives a killed process (the log is in the OS's
    hands); only a power loss or an OS crash can roll back the last commits before a checkpoint,
    never corrupt the database. ``wal_autocheckpoint`` sets the log pages past which a commit
    checkpoints (SQLite's default, 1,000, when None; :mod:`._checkpoint` raises it).

    Raises:
        StoreError: the URL's database kind or driver is not installed (saying what to install).
    """
    options: dict[str, Any] = {"json_serializer": json_text}
    busy = SQLITE_BUSY_SECONDS
    if url.get_backend_name() == "sqlite":
        if is_in_memory(url):
            # One connection, shared: otherwise each connection sees its own empty database.
            options |= {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        elif "timeout" not in url.query:
            options |= {"connect_args": {"timeout": SQLITE_BUSY_SECONDS}}
        else:
            busy = _seconds(url.query["timeout"], SQLITE_BUSY_SECONDS)
    try:
        engine = create_engine(url, **options)
    except (ImportError, NoSuchModuleError) as err:
        raise driver_error(url, err) from err
    if url.get_backend_name() == "sqlite":
        wal = not is_in_memory(url)

        def configure(dbapi_connection: Any, _record: Any) -> None:
            _sqlite_pragmas(dbapi_connection, busy, wal=wal, autocheckpoint=wal_autocheckpoint)

        event.listen(engine, "connect", configure)
    return engine


def _seconds(value: str | tuple[str, ...], default: float) -> float:
    try:
        return float(value if isinstance(value, str) else value[-1])
    except (ValueError, IndexError):
        return default  # the driver reports a bad timeout itself


def _sqlite_pragmas(
    dbapi_connection: Any, busy_seconds: float, *, wal: bool, autocheckpoint: int | None = None
) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_seconds * 1000)}")
        if wal:
            # Persistent in the file: set once, kept by every later connection and process. A
            # read-only or locked file keeps its journal mode; a file that is not a database, or a
            # damaged one, fails at the first query, in the store's own words (._translate).
            with contextlib.suppress(sqlite3.DatabaseError):
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            if autocheckpoint is not None:
                cursor.execute(f"PRAGMA wal_autocheckpoint={int(autocheckpoint)}")
    finally:
        cursor.close()


@functools.cache
def _script() -> ScriptDirectory:
    # The package's migrations do not change while it runs; reading them costs every store opened.
    return ScriptDirectory.from_config(alembic_config("sqlite://"))


def head_revision() -> str:
    """The newest revision the installed package ships."""
    head = _script().get_current_head()
    if head is None:  # pragma: no cover - the package always ships a revision
        raise RuntimeError("auditor.store.migrations holds no revision")
    return head


def known_revisions() -> set[str]:
    """Every revision the installed package ships."""
    return {script.revision for script in _script().walk_revisions()}


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database never migrated."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def check_schema(conn: Connection, found: str | None) -> None:
    """Refuse a revision this package does not know, or tables without a version record."""
    url = conn.engine.url
    if found is not None and found not in known_revisions():
        raise StoreError(
            f"The database {shown(url)} is at schema revision {found}, newer than this auditor knows "
            f"(its newest is {head_revision()}): upgrade trace-auditor (pip install -U trace-auditor), "
            "or use another --db."
        )
    if found is None and set(inspect(conn).get_table_names()) - {"alembic_version"}:
        raise StoreError(
            f"The database {shown(url)} holds tables but no schema revision (no alembic_version "
            "record): it is not an auditor store, or its version record was lost; point --db at "
            "another database, or restore this one from a backup."
        )


def checked_revision(engine: Engine) -> str | None:
    """The database's revision, once :func:`check_schema` has found it one this package can use."""
    with engine.connect() as conn:
        found = MigrationContext.configure(conn).get_current_revision()
        check_schema(conn, found)
    return found


def check_at_head(engine: Engine) -> None:
    """Refuse a database that is not at head, saying how to migrate it."""
    found, head = checked_revision(engine), head_revision()
    if found != head:
        where = shown(engine.url)
        raise StoreError(
            f"The database {where} is at schema revision {found or 'none'}, this auditor needs {head}: "
            f"run `auditor db upgrade --db {where}`."
        )


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that holds the migration lock until it commits."""
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            # pysqlite leaves DDL outside any transaction: take the write lock ourselves, so the
            # tables and the version record appear together, and one process migrates.
            conn.exec_driver_sql("BEGIN EXCLUSIVE")
        elif engine.dialect.name == "postgresql":
            conn.execute(
                text("SELECT pg_advisory_xact_lock(hashtext(:key || coalesce(current_schema(), '')))"),
                {"key": "auditor.store.migrate:"},  # the lock's name: keep it stable across versions
            )
        yield conn


def upgrade_engine(engine: Engine) -> str:
    """Migrate the database behind ``engine`` to head and return the revision it is now at."""
    head = head_revision()
    with engine.connect() as conn:
        found = MigrationContext.configure(conn).get_current_revision()
    if found == head:
        return head
    with _migration_lock(engine) as conn:
        found = MigrationContext.configure(conn).get_current_revision()  # again, under the lock
        if found != head:
            check_schema(conn, found)
            config = alembic_config(engine.url.render_as_string(hide_password=False))
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    revision = current_revision(engine)
    if revision is None:  # pragma: no cover - upgrade either worked or raised
        raise RuntimeError("migration left no revision")
    return revision
