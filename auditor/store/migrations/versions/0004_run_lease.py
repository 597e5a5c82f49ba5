"""The run lease: a running run's owner, its last heartbeat and the lease it holds.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("lease_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    # In place (SQLite >= 3.35 drops columns itself): a batch copy of ``runs`` would drop the old
    # table, and with foreign keys on that cascades to every stored answer.
    with op.batch_alter_table("runs", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("lease_seconds")
        batch_op.drop_column("heartbeat_at")
        batch_op.drop_column("owner")
