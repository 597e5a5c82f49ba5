"""Request bodies acknowledged before they are split into spans (``received_bodies``).

``auditor serve`` commits each OTLP request body in one short transaction and answers; an ingest
worker splits it into ``received_spans`` later and deletes it in the same transaction.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "received_bodies",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("adapter", sa.Text(), nullable=False),
        sa.Column("spans", sa.Integer(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner", sa.Text(), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        # last: reading the columns above never walks a large body's overflow pages (SQLite)
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_received_bodies")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("received_bodies")
