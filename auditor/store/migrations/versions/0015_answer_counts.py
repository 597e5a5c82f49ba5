"""Each answer's counts (``answers.counts``): the summary of a filter the rollups cannot answer is their sum.

:func:`auditor.metrics.answer_counts` of the answer, written in the same transaction as the answer.
Filled here from the answers already stored (the same computation as the rollups' rebuild, 500
answers at a time), so it may take a while on a large store.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("counts", sa.JSON(none_as_null=True), nullable=True))
    # Filled by the library's own computation: the answers as the current models read them.
    from auditor.store._rollups import fill_counts

    with Session(bind=op.get_bind()) as session:
        fill_counts(session)


def downgrade() -> None:
    """Downgrade schema."""
    # ALTER TABLE ... DROP COLUMN in place: recreating ``answers`` on SQLite would drop the old
    # table, and the foreign keys' ON DELETE CASCADE would take every answer's evidence and claims.
    with op.batch_alter_table("answers", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("counts")
