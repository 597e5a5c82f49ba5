"""A verdict's conflict between admitted sources: both sides' quotes and how on_conflict settled it.

Revision ID: 0007
Revises: 0006
Create Date: 2027-01-24

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("conflicts", sa.JSON(none_as_null=True), nullable=True))
        batch_op.add_column(sa.Column("conflict_resolution", sa.Text(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("verdicts", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("conflict_resolution")
        batch_op.drop_column("conflicts")
