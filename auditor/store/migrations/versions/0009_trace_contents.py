"""Trace content kept for re-audits: each trace's normalised spans (compressed JSON), the order a
run read its traces in, and the run a re-audit re-judged.

``auditor reaudit`` rebuilds a run's answers from ``trace_contents`` instead of the original files.
Runs stored before this revision have no content rows: a re-audit of one says so.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "trace_contents",
        sa.Column("trace_key", sa.Text(), nullable=False),
        sa.Column("encoding", sa.Text(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["trace_key"],
            ["traces.key"],
            name=op.f("fk_trace_contents_trace_key_traces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("trace_key", name=op.f("pk_trace_contents")),
    )
    with op.batch_alter_table("run_traces", schema=None) as batch_op:
        batch_op.add_column(sa.Column("position", sa.Integer(), nullable=True))
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reaudit_of", sa.Text(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("runs", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("reaudit_of")
    with op.batch_alter_table("run_traces", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("position")
    op.drop_table("trace_contents")
