"""An index on ``received_traces.last_span_at``: the runs page's newest received traces.

The page shows the hundred traces received most recently; without it, every received trace was
sorted to find them (and the spans of every trace counted: now only the hundred's, in
``auditor.store._overview.received_traces``), 1.2 s at 400,000 traces on SQLite.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_index("ix_received_traces_last_span_at", "received_traces", ["last_span_at"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index("ix_received_traces_last_span_at", table_name="received_traces")
