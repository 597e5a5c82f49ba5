"""Indexes on ``received_traces``: by last span (the runs page's newest traces) and a partial index of
the traces waiting for an audit (``generation > audited_generation``), in place of the index on
``(audited_generation, generation)``.

Without them, the runs page sorted every received trace to show the newest hundred, and the
count of traces waiting (``/healthz``) and an audit worker's look for the next one read an index
entry per trace ever received; with them, each reads what it shows or what waits.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WAITING = "generation > audited_generation"


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("received_traces", schema=None) as batch_op:
        # An entry per trace ever received, which SQLite preferred to the partial index for a count.
        batch_op.drop_index("ix_received_traces_pending")
        batch_op.create_index("ix_received_traces_last_span_at", ["last_span_at"], unique=False)
        batch_op.create_index(
            "ix_received_traces_waiting",
            ["last_span_at"],
            unique=False,
            sqlite_where=sa.text(WAITING),
            postgresql_where=sa.text(WAITING),
        )


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("received_traces", schema=None) as batch_op:
        batch_op.drop_index("ix_received_traces_waiting")
        batch_op.drop_index("ix_received_traces_last_span_at")
        batch_op.create_index(
            "ix_received_traces_pending", ["audited_generation", "generation"], unique=False
        )
