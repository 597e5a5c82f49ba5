"""Rollups keyed by the verdict too (``answer_rollups.verdict``).

A summary or trend filtered by ``verdict`` (``grounded``, ``ungrounded``, ``contradicted``,
``refusal``, ``undecided``) is then read from the rollups like one filtered by outcome, instead of
summing every matching answer's counts (seconds for a month's trend at a million answers). The
values overlap (``contradicted`` answers are ``ungrounded``), so the verdict is a slice taken apart
from the outcome's: an answer counts in the rows of outcome and verdict ``"*"``, in those of each
outcome value with verdict ``"*"``, and in those of each verdict value with outcome ``"*"``; the
slice index takes the column before ``start``. As in migration 0023, the table is emptied and given
the key column; migration 0026, which crosses the two slices, fills it again from the stored
answers (the library's computation reads the model at head). The downgrade keeps the rows of
verdict ``"*"``, which hold what the rows before it held.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07

"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | Sequence[str] | None = "0024"
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
    "outcome",
)


def upgrade() -> None:
    """Upgrade schema."""
    op.execute("DELETE FROM answer_rollups")  # every row's key changes: recomputed below
    with op.batch_alter_table("answer_rollups", schema=None, recreate="always") as batch_op:
        batch_op.add_column(sa.Column("verdict", sa.Text(), nullable=False))
        batch_op.drop_index("ix_answer_rollups_slice")
        batch_op.create_index(
            "ix_answer_rollups_slice",
            ["bucket", "service", "source_class", "outcome", "verdict", "start"],
            unique=False,
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
    verdict = sa.column("verdict", sa.Text())
    kept = bind.execute(
        sa.select(*(rollups.c[c] for c in _OLD_KEY), rollups.c.counts).where(verdict == "*")
    ).all()  # the rows migration 0023's key had
    op.execute("DELETE FROM answer_rollups")
    with op.batch_alter_table("answer_rollups", schema=None, recreate="always") as batch_op:
        batch_op.drop_index("ix_answer_rollups_slice")
        batch_op.drop_column("verdict")
        batch_op.create_index(
            "ix_answer_rollups_slice", ["bucket", "service", "source_class", "outcome", "start"], unique=False
        )
    rows = []
    for row in kept:
        key, counts = tuple(row[:-1]), dict(row[-1] or {})
        # The digest migration 0023's key had: auditor.store._rollups._digest without the verdict.
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
