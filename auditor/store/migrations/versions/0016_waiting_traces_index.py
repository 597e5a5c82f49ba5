"""A partial index of the received traces waiting for an audit (``ix_received_traces_waiting``).

The receiver counts the waiting traces on every request (its queue bound) and the audit workers
look for the next ready one; both asked the whole ``received_traces`` table, audited traces
included, which grows with the store (17 ms a request at 300,000 traces). The index holds only
the traces whose ``generation`` is ahead of ``audited_generation``, ordered by their last span,
so both cost what is waiting. It replaces ``ix_received_traces_pending``, an index of every
trace's two generations, which SQLite preferred for the count and scanned whole.

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
    op.drop_index("ix_received_traces_pending", table_name="received_traces")
    op.create_index(
        "ix_received_traces_waiting",
        "received_traces",
        ["last_span_at"],
        unique=False,
        sqlite_where=sa.text(WAITING),
        postgresql_where=sa.text(WAITING),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index("ix_received_traces_waiting", table_name="received_traces")
    op.create_index(
        "ix_received_traces_pending", "received_traces", ["audited_generation", "generation"], unique=False
    )
