"""What a live server audited and how (``runs.sampling``, ``runs.cap``; JSON, None for other runs).

``sampling`` is the share of traces and the filter a run's trace was chosen under
(``{"share": 0.1, "filter": "service=checkout"}``), so a figure over the run's answers is never
quoted without its sample. ``cap`` is set on a run judged offline because the live LLM judge's
spending cap was reached (the cap, the window, what was spent, when the cap was hit).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sampling", sa.JSON(none_as_null=True), nullable=True))
        batch_op.add_column(sa.Column("cap", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    # In place: recreating ``runs`` on SQLite would cascade-delete every run's answers.
    with op.batch_alter_table("runs", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("cap")
        batch_op.drop_column("sampling")
