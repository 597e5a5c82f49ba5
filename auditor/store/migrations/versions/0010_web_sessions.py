"""Web sign-ins of ``auditor serve``, revocable: one row per browser session (``web_sessions``).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "web_sessions",
        sa.Column("id_sha256", sa.Text(), nullable=False),
        sa.Column("token_mac", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id_sha256", name=op.f("pk_web_sessions")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("web_sessions")
