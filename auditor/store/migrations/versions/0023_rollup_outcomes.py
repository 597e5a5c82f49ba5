"""Rollups keyed by the policy outcome too (``answer_rollups.outcome``).

A summary or trend filtered by ``outcome`` (``excluded``, ``all_admitted``, ``inadmissible_support``)
is then read from the rollups like one filtered by policy or source class, instead of summing every
matching answer's counts behind an ``EXISTS`` on its evidence or verdicts (seconds over a month at a
million answers). The values are not exclusive (an answer with an excluded item may have a claim with
inadmissible support), so the outcome is a slice like the service: an answer counts in the rows of
``outcome`` ``"*"`` and again in those of each value that selects it
(``auditor.store._rollups.outcomes_of``); the slice index takes the column before ``start``. The
table is emptied and given the key column; migration 0026, which crosses the outcome with the verdict,
fills it again from the stored answers (the library's computation reads the model at head, which
this revision's table does not have yet). The
downgrade keeps the ``"*"`` rows, which hold every answer.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07

"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_KEY = (
    "bucket",
    "start",
    "policy_name",
    "policy_sha256",
    "judge_kind",
    "judge_model",
    "service",
    "source_class",
    "question_type",
    "sample",
    "cap",
)


def upgrade() -> None:
    """Upgrade schema."""
    op.execute("DELETE FROM answer_rollups")  # every row's key changes: recomputed below
    with op.batch_alter_table("answer_rollups", schema=None, recreate="always") as batch_op:
        batch_op.add_column(sa.Column("outcome", sa.Text(), nullable=False))
        batch_op.drop_index("ix_answer_rollups_slice")
        batch_op.create_index(
            "ix_answer_rollups_slice", ["bucket", "service", "source_class", "outcome", "start"], unique=False
        )
    # Filled by migration 0026 (module docstring).


def downgrade() -> None:
    """Downgrade schema."""
    from auditor.store._schema import UTCDateTime  # the model's times: aware UTC on both stores

    bind = op.get_bind()
    rollups = sa.table(
        "answer_rollups",
        sa.column("key", sa.Text()),
        *(sa.column(c, UTCDateTime() if c == "start" else sa.Text()) for c in _OLD_KEY),
        sa.column("answer_count", sa.Integer()),
        sa.column("counts", sa.JSON(none_as_null=True)),
    )
    outcome = sa.column("outcome", sa.Text())
    kept = bind.execute(
        sa.select(*(rollups.c[c] for c in _OLD_KEY), rollups.c.counts).where(outcome == "*")
    ).all()  # every answer's counts, once
    op.execute("DELETE FROM answer_rollups")
    with op.batch_alter_table("answer_rollups", schema=None, recreate="always") as batch_op:
        batch_op.drop_index("ix_answer_rollups_slice")
        batch_op.drop_column("outcome")
        batch_op.create_index(
            "ix_answer_rollups_slice", ["bucket", "service", "source_class", "start"], unique=False
        )
    rows = []
    for row in kept:
        key, counts = tuple(row[:-1]), dict(row[-1] or {})
        # The digest migration 0019's key had: auditor.store._rollups._digest without the outcome.
        parts = [str(key[0]), key[1].isoformat(), *(str(k) for k in key[2:])]
        digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:40]
        rows.append(
            {
                "key": digest,
                **dict(zip(_OLD_KEY, key, strict=True)),
                "answer_count": counts.get("answers", 0),
                "counts": counts,
            }
        )
    if rows:
        op.bulk_insert(rollups, rows)
