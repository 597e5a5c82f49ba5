"""Rollups with the policy outcome crossed with the verdict.

A summary or trend filtered by both an ``outcome`` and a ``verdict`` ("the ungrounded answers whose
evidence the policy cut") is then read from the rollups too, instead of summing every matching
answer's counts (250 to 310 ms for a 48-hour trend at a million answers). An answer counts in the
rows of each pair of its outcome values and ``"*"`` with its verdict values and ``"*"``
(``auditor.store._rollups.slices_of``): about six slices an answer instead of about four. No column
changes: the table is emptied and filled again from the stored answers (``auditor db rollups
--rebuild``'s computation), which takes a while on a large store (about 4 minutes at 200,000
generated answers on a 2-core machine, growing with the answers; memory holds one day's rows).
The downgrade deletes the crossed rows (neither the outcome nor the verdict ``"*"``); the others
hold what migration 0025's did.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
from sqlalchemy.orm import Session

revision: str = "0026"
down_revision: str | Sequence[str] | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    # Filled by the library's own computation: the answers as the current models read them.
    from auditor.store._rollups import recompute

    with Session(bind=op.get_bind()) as session:
        recompute(session)  # it empties the table first


def downgrade() -> None:
    """Downgrade schema."""
    op.execute("DELETE FROM answer_rollups WHERE outcome <> '*' AND verdict <> '*'")
