"""The judge usage each answer cost, kept with it (``answers.usage``, JSON, None when not kept).

A run on Ray records on every answer the LLM calls, tokens and cache counts its worker spent
since its previous answer was saved, in the answer's own transaction, so the run's usage is the
sum over its stored answers: a worker killed after saving some answers loses none of theirs.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("usage", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_column("usage")
