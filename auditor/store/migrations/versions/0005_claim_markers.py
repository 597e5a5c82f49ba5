"""A claim's citation markers: as written, each one judged against what it cites, misattribution.

Revision ID: 0005
Revises: 0004
Create Date: 2027-01-10

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("claims", schema=None) as batch_op:
        batch_op.add_column(sa.Column("markers", sa.JSON(none_as_null=True), nullable=True))
        batch_op.add_column(sa.Column("citation_markers", sa.JSON(none_as_null=True), nullable=True))
        batch_op.add_column(sa.Column("misattributed", sa.Boolean(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    # In place, as 0004 does: a batch copy of ``claims`` would cascade to every stored verdict.
    with op.batch_alter_table("claims", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("misattributed")
        batch_op.drop_column("citation_markers")
        batch_op.drop_column("markers")
