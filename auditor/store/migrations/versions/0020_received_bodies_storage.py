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

from auditor.store.migrations._compression import compress_by_default, compress_with_lz4

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        compress_with_lz4(bind, "received_bodies", "body")


def downgrade() -> None:
    """Downgrade schema."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        compress_by_default(bind, "received_bodies", "body")
