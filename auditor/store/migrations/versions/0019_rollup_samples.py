"""Rollups keyed by the run's sample and cap too (``answer_rollups.sample`` and ``.cap``).

A summary's ``sample`` block (the answers per sample, and those the spending cap sent offline) is
then read from the rollups like the figures beside it, instead of joining every matching answer to
its run once the store holds more than one sample or a capped run. The table is emptied and given
the two key columns; migration 0026, which crosses the outcome with the verdict, fills it again from
the stored answers (the library's computation reads the model at head, which this revision's
table does not have yet). The downgrade merges the rows of every sample and cap back into one.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07

"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
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
)


def upgrade() -> None:
    """Upgrade schema."""
    op.execute("DELETE FROM answer_rollups")  # every row's key changes: recomputed below
    with op.batch_alter_table("answer_rollups", schema=None, recreate="always") as batch_op:
        batch_op.add_column(sa.Column("sample", sa.Text(), nullable=False))
        batch_op.add_column(sa.Column("cap", sa.Text(), nullable=False))
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
    merged: dict[tuple[object, ...], Counter[str]] = {}
    for row in bind.execute(sa.select(*(rollups.c[c] for c in _OLD_KEY), rollups.c.counts)):
        merged.setdefault(tuple(row[:-1]), Counter()).update(row[-1] or {})
    op.execute("DELETE FROM answer_rollups")
    with op.batch_alter_table("answer_rollups", schema=None, recreate="always") as batch_op:
        batch_op.drop_column("cap")
        batch_op.drop_column("sample")
    rows = []
    for key, counts in merged.items():
        # The digest migration 0013's key had: auditor.store._rollups._digest without sample and cap.
        parts = [str(key[0]), key[1].isoformat(), *(str(k) for k in key[2:])]  # type: ignore[attr-defined]
        digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:40]
        total = {k: v for k, v in sorted(counts.items()) if v}
        rows.append(
            {
                "key": digest,
                **dict(zip(_OLD_KEY, key, strict=True)),
                "answer_count": total.get("answers", 0),
                "counts": total,
            }
        )
    if rows:
        op.bulk_insert(rollups, rows)
