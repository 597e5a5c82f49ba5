"""PostgreSQL: received span records compressed with lz4, not pglz (or not at all).

A record (one span as OTLP JSON, about 2 KB and more) is past PostgreSQL's TOAST threshold, so
each INSERT compressed it with pglz: measured on 510-span bodies, storing a body's spans took
85 ms with pglz, 53 ms with lz4 and 51 ms uncompressed. lz4 keeps most of the space saved; a server
built without lz4 (before PostgreSQL 14, or compiled without it) stores them uncompressed
(``STORAGE EXTERNAL``). Records already stored stay as they are. SQLite does not compress rows:
nothing changes there.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
from sqlalchemy.exc import DBAPIError

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    try:
        with bind.begin_nested():  # a savepoint: a server without lz4 refuses, and the migration goes on
            bind.exec_driver_sql("ALTER TABLE received_spans ALTER COLUMN record SET COMPRESSION lz4")
    except DBAPIError:
        bind.exec_driver_sql("ALTER TABLE received_spans ALTER COLUMN record SET STORAGE EXTERNAL")


def downgrade() -> None:
    """Downgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    bind.exec_driver_sql("ALTER TABLE received_spans ALTER COLUMN record SET STORAGE EXTENDED")
    try:
        with bind.begin_nested():
            bind.exec_driver_sql("ALTER TABLE received_spans ALTER COLUMN record SET COMPRESSION DEFAULT")
    except DBAPIError:
        pass  # before PostgreSQL 14 there is no per-column compression to reset
