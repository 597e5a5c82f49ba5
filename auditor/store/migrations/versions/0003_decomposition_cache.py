"""The decomposition cache: LLM decompositions and fused results, by key.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "decomposition_cache",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("extractor", sa.Text(), nullable=False),
        sa.Column("decomposition", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("verdicts", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("errors", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_decomposition_cache")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("decomposition_cache")
