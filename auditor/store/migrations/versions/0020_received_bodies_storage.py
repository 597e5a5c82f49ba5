"""PostgreSQL: received request bodies compressed with lz4, not pglz (or not at all).

The receiver's acknowledgement waits for the commit of the request body. A body of a few hundred
spans is about a megabyte, far past PostgreSQL's TOAST threshold, so each INSERT compressed it with
pglz inside the acknowledgement: measured on 1.2 MB OTLP bodies, the INSERT took 24 ms (median)
with pglz, 8 ms with lz4 and 12.5 ms uncompressed, and lz4 kept an eighth of pglz's bytes. A server
without lz4 stores them uncompressed (``STORAGE EXTERNAL``); the store compresses bodies itself
once a backlog builds (:meth:`auditor.store.BodyQueue.put`). SQLite keeps its bodies in a file of
their own and does not compress rows: nothing changes there.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
from sqlalchemy.exc import DBAPIError

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    try:
        with bind.begin_nested():  # a savepoint: a server without lz4 refuses, and the migration goes on
            bind.exec_driver_sql("ALTER TABLE received_bodies ALTER COLUMN body SET COMPRESSION lz4")
    except DBAPIError:
        bind.exec_driver_sql("ALTER TABLE received_bodies ALTER COLUMN body SET STORAGE EXTERNAL")


def downgrade() -> None:
    """Downgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    bind.exec_driver_sql("ALTER TABLE received_bodies ALTER COLUMN body SET STORAGE EXTENDED")
    try:
        with bind.begin_nested():
            bind.exec_driver_sql("ALTER TABLE received_bodies ALTER COLUMN body SET COMPRESSION DEFAULT")
    except DBAPIError:
        pass  # before PostgreSQL 14 there is no per-column compression to reset
