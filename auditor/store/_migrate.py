"""Engines and schema migrations: the one place that calls Alembic.

The migrations ship in :mod:`auditor.store.migrations` and run from code, on the store's own
connection, so ``pip install trace-auditor`` is all a user needs (no ``alembic.ini``).
"""

from __future__ import annotations

from typing import Any

from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.pool import StaticPool

from auditor.store.migrations import alembic_config


def make_engine(url: str | URL) -> Engine:
    """An engine for ``url``: SQLite gets foreign keys on, its parent directory and in-memory sharing."""
    parsed = make_url(url)
    options: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if not database or database == ":memory:":
            # One connection, shared: otherwise each connection sees its own empty database.
            options = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    engine = create_engine(parsed, **options)
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_foreign_keys)
    return engine


def _sqlite_foreign_keys(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def head_revision() -> str:
    """The newest revision the installed package ships."""
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    if head is None:  # pragma: no cover - the package always ships a revision
        raise RuntimeError("auditor.store.migrations holds no revision")
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database never migrated."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade_engine(engine: Engine) -> str:
    """Migrate the database behind ``engine`` to head and return the revision it is now at."""
    with engine.begin() as conn:
        config = alembic_config(engine.url.render_as_string(hide_password=False))
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
    revision = current_revision(engine)
    if revision is None:  # pragma: no cover - upgrade either worked or raised
        raise RuntimeError("migration left no revision")
    return revision
