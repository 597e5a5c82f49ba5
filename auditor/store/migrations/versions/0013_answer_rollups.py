"""Rollups: each hour's and day's answer counts per policy, judge, service, source class and question type;
indexes on ``answers.answer_id`` (one answer's page) and ``answers.conversation_id`` (sessions).

``answer_rollups`` (``auditor.store._rollups``) lets the server's summary and trend read a few rows
per bucket instead of every answer. Created here empty: migration 0023, which adds the policy
outcome to its key, fills it from the answers already stored (as ``auditor db rollups --rebuild``).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "answer_rollups",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("bucket", sa.Text(), nullable=False),
        sa.Column("start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("policy_name", sa.Text(), nullable=False),
        sa.Column("policy_sha256", sa.Text(), nullable=False),
        sa.Column("judge_kind", sa.Text(), nullable=False),
        sa.Column("judge_model", sa.Text(), nullable=False),
        sa.Column("service", sa.Text(), nullable=False),
        sa.Column("source_class", sa.Text(), nullable=False),
        sa.Column("question_type", sa.Text(), nullable=False),
        sa.Column("answer_count", sa.Integer(), nullable=False),
        sa.Column("counts", sa.JSON(none_as_null=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_answer_rollups")),
    )
    with op.batch_alter_table("answer_rollups", schema=None) as batch_op:
        batch_op.create_index(
            "ix_answer_rollups_slice", ["bucket", "service", "source_class", "start"], unique=False
        )
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.create_index("ix_answers_answer_id", ["answer_id"], unique=False)
        batch_op.create_index("ix_answers_conversation_id", ["conversation_id"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_index("ix_answers_conversation_id")
        batch_op.drop_index("ix_answers_answer_id")
    with op.batch_alter_table("answer_rollups", schema=None) as batch_op:
        batch_op.drop_index("ix_answer_rollups_slice")
    op.drop_table("answer_rollups")
