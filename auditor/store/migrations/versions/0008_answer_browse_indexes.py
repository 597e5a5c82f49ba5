"""Indexes for browsing answers across runs: newest first and by time range, and by trace id.

The server's answers list and API (``auditor.store.list_answers``) order every store's answers by
``generated_at`` and filter by a ``trace_id`` prefix; without these, each page scans the table.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.create_index("ix_answers_generated_at", ["generated_at"], unique=False)
        batch_op.create_index("ix_answers_trace_id", ["trace_id"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_index("ix_answers_trace_id")
        batch_op.drop_index("ix_answers_generated_at")
