"""``auditor serve``'s intake: received spans, the traces they make up, and each audit pass.

Revision ID: 0006
Revises: 0005
Create Date: 2027-01-20

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "received_spans",
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("span_id", sa.Text(), nullable=False),
        sa.Column("parent_id", sa.Text(), nullable=True),
        sa.Column("end_ns", sa.BigInteger(), nullable=True),
        sa.Column("record", sa.Text(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("trace_id", "span_id", name=op.f("pk_received_spans")),
    )
    op.create_table(
        "received_traces",
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("audited_generation", sa.Integer(), nullable=False),
        sa.Column("root_ended", sa.Boolean(), nullable=False),
        sa.Column("first_span_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_span_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner", sa.Text(), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_seconds", sa.Float(), nullable=True),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("trace_id", name=op.f("pk_received_traces")),
    )
    op.create_index(
        "ix_received_traces_pending", "received_traces", ["audited_generation", "generation"], unique=False
    )
    op.create_table(
        "trace_audits",
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("spans", sa.Integer(), nullable=False),
        sa.Column("audited_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("trace_id", "generation", name=op.f("pk_trace_audits")),
    )
    op.create_index(op.f("ix_trace_audits_run_id"), "trace_audits", ["run_id"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index(op.f("ix_trace_audits_run_id"), table_name="trace_audits")
    op.drop_table("trace_audits")
    op.drop_index("ix_received_traces_pending", table_name="received_traces")
    op.drop_table("received_traces")
    op.drop_table("received_spans")
