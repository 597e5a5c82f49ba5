"""Alembic environment: runs migrations on the connection the store hands over.

:func:`auditor.store.upgrade` puts an open connection in ``config.attributes["connection"]``;
without one (Alembic's own command line) an engine is made from ``sqlalchemy.url``. SQLite runs
in batch mode, since it cannot alter most things in place.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from auditor.store._schema import Base

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("No database: set sqlalchemy.url or pass a connection.")
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("Offline (SQL script) migrations are not supported; run them against a database.")
run_migrations_online()
