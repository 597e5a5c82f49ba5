"""Indexes for two filters the rollups cannot answer: ``run_id`` prefixes and the policy ``outcome``.

``ix_evidence_admitted`` (``run_id, answer_id, admitted``) lets the ``outcome`` filter's EXISTS
("the answer has an excluded evidence item") seek one index entry an answer instead of reading each
evidence row: at a million answers on SQLite, 105 to 58 ms over the last day's answers and 3.0 to
0.5 s over 30 days. ``ix_answers_run_id_pattern`` (PostgreSQL only) is ``answers.run_id`` under
``text_pattern_ops``: the ``run_id`` prefix filter is now a byte-order range
(``auditor.store._filters.prefix``) that PostgreSQL answers only from an index of that operator
class, whatever the database's collation; on SQLite the answers' primary key answers it.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_index("ix_evidence_admitted", "evidence", ["run_id", "answer_id", "admitted"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.create_index(
            "ix_answers_run_id_pattern",
            "answers",
            ["run_id"],
            unique=False,
            postgresql_ops={"run_id": "text_pattern_ops"},
        )


def downgrade() -> None:
    """Downgrade schema."""
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_answers_run_id_pattern", table_name="answers")
    op.drop_index("ix_evidence_admitted", table_name="evidence")
