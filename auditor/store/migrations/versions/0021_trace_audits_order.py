"""An index of ``trace_audits`` in the order ``GET /api/audits`` pages it (``ix_trace_audits_audited_at``).

The route lists the audit passes oldest first (by ``audited_at``, then trace id and generation),
a page at a time with a keyset cursor. Without an index in that order, every page sorted the whole
table (400,000 passes at production scale); with it, a page is a range read of the index.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | Sequence[str] | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_index(
        "ix_trace_audits_audited_at", "trace_audits", ["audited_at", "trace_id", "generation"], unique=False
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index("ix_trace_audits_audited_at", table_name="trace_audits")
