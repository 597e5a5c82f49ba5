"""Calibrations: a judge measured against human labels, keyed by judge identity.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "calibrations",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("auditor_version", sa.Text(), nullable=False),
        sa.Column("judge_kind", sa.Text(), nullable=False),
        sa.Column("judge_model", sa.Text(), nullable=True),
        sa.Column("judge_prompt_version", sa.Text(), nullable=True),
        sa.Column("judge_approximate", sa.Boolean(), nullable=False),
        sa.Column("policy_name", sa.Text(), nullable=True),
        sa.Column("policy_sha256", sa.Text(), nullable=True),
        sa.Column("labelled_path", sa.Text(), nullable=False),
        sa.Column("labelled_sha256", sa.Text(), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("body", sa.JSON(none_as_null=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calibrations")),
    )
    op.create_index(
        "ix_calibrations_judge",
        "calibrations",
        ["judge_kind", "judge_model", "judge_prompt_version"],
        unique=False,
    )
    op.create_index(op.f("ix_calibrations_created_at"), "calibrations", ["created_at"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index(op.f("ix_calibrations_created_at"), table_name="calibrations")
    op.drop_index("ix_calibrations_judge", table_name="calibrations")
    op.drop_table("calibrations")
