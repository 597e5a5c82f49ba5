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

from auditor.store.migrations._compression import compress_by_default, compress_with_lz4

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        compress_with_lz4(bind, "received_spans", "record")


def downgrade() -> None:
    """Downgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        compress_by_default(bind, "received_spans", "record")
