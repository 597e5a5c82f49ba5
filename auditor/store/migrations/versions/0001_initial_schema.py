"""Initial schema: runs, traces, answers, evidence, claims, verdicts and the verdict cache.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "runs",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("auditor_version", sa.Text(), nullable=False),
        sa.Column("policy_name", sa.Text(), nullable=True),
        sa.Column("policy_version", sa.Text(), nullable=True),
        sa.Column("policy_sha256", sa.Text(), nullable=True),
        sa.Column("policy_text", sa.Text(), nullable=True),
        sa.Column("judge_kind", sa.Text(), nullable=True),
        sa.Column("judge_model", sa.Text(), nullable=True),
        sa.Column("judge_prompt_version", sa.Text(), nullable=True),
        sa.Column("judge_approximate", sa.Boolean(), nullable=False),
        sa.Column("inputs", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("inputs_digest", sa.Text(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("usage", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("summary", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("problems", sa.JSON(none_as_null=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index(op.f("ix_runs_inputs_digest"), "runs", ["inputs_digest"], unique=False)
    op.create_index(op.f("ix_runs_policy_sha256"), "runs", ["policy_sha256"], unique=False)
    op.create_index(op.f("ix_runs_started_at"), "runs", ["started_at"], unique=False)
    op.create_table(
        "traces",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("digest", sa.Text(), nullable=False),
        sa.Column("spans", sa.Integer(), nullable=True),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_traces")),
        sa.UniqueConstraint("trace_id", "digest", name="uq_traces_trace_id_digest"),
    )
    op.create_index(op.f("ix_traces_trace_id"), "traces", ["trace_id"], unique=False)
    op.create_table(
        "verdict_cache",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("verdict", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("judge_kind", sa.Text(), nullable=True),
        sa.Column("judge_model", sa.Text(), nullable=True),
        sa.Column("judge_prompt_version", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_verdict_cache")),
    )
    op.create_table(
        "answers",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("answer_id", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("trace_key", sa.Text(), nullable=False),
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("span_id", sa.Text(), nullable=False),
        sa.Column("conversation_id", sa.Text(), nullable=True),
        sa.Column("question", sa.Text(), nullable=True),
        sa.Column("question_type", sa.Text(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("generated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("has_claims", sa.Boolean(), nullable=False),
        sa.Column("refusal", sa.Boolean(), nullable=True),
        sa.Column("groundedness", sa.Float(), nullable=True),
        sa.Column("contradicted", sa.Integer(), nullable=True),
        sa.Column("unjudged", sa.Integer(), nullable=True),
        sa.Column("grounded", sa.Boolean(), nullable=True),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_answers_run_id_runs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["trace_key"], ["traces.key"], name=op.f("fk_answers_trace_key_traces")),
        sa.PrimaryKeyConstraint("run_id", "answer_id", name=op.f("pk_answers")),
    )
    op.create_index(op.f("ix_answers_trace_key"), "answers", ["trace_key"], unique=False)
    op.create_table(
        "run_traces",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("trace_key", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_traces_run_id_runs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["trace_key"], ["traces.key"], name=op.f("fk_run_traces_trace_key_traces")),
        sa.PrimaryKeyConstraint("run_id", "trace_key", name=op.f("pk_run_traces")),
    )
    op.create_table(
        "claims",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("answer_id", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("claim_id", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("end", sa.Integer(), nullable=False),
        sa.Column("screened", sa.Boolean(), nullable=False),
        sa.Column("screen_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id", "answer_id"],
            ["answers.run_id", "answers.answer_id"],
            name="fk_claims_answer",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "answer_id", "position", name=op.f("pk_claims")),
    )
    op.create_table(
        "evidence",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("answer_id", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("evidence_id", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("metadata", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("document_id", sa.Text(), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("trace_id", sa.Text(), nullable=False),
        sa.Column("span_id", sa.Text(), nullable=True),
        sa.Column("available_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("hop_path", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("error", sa.Boolean(), nullable=False),
        sa.Column("current_question", sa.Boolean(), nullable=False),
        sa.Column("source_class", sa.Text(), nullable=True),
        sa.Column("admitted", sa.Boolean(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id", "answer_id"],
            ["answers.run_id", "answers.answer_id"],
            name="fk_evidence_answer",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "answer_id", "position", name=op.f("pk_evidence")),
    )
    op.create_index("ix_evidence_evidence_id", "evidence", ["evidence_id"], unique=False)
    op.create_table(
        "verdicts",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("answer_id", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("citations", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("inadmissible_support", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("rationale", sa.Text(), nullable=True),
        sa.Column("unjudged_reason", sa.Text(), nullable=True),
        sa.Column("judge_errors", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("common_knowledge", sa.Boolean(), nullable=False),
        sa.Column("settled_by", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id", "answer_id", "position"],
            ["claims.run_id", "claims.answer_id", "claims.position"],
            name="fk_verdicts_claim",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "answer_id", "position", name=op.f("pk_verdicts")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("verdicts")
    op.drop_index("ix_evidence_evidence_id", table_name="evidence")
    op.drop_table("evidence")
    op.drop_table("claims")
    op.drop_table("run_traces")
    op.drop_index(op.f("ix_answers_trace_key"), table_name="answers")
    op.drop_table("answers")
    op.drop_table("verdict_cache")
    op.drop_index(op.f("ix_traces_trace_id"), table_name="traces")
    op.drop_table("traces")
    op.drop_index(op.f("ix_runs_started_at"), table_name="runs")
    op.drop_index(op.f("ix_runs_policy_sha256"), table_name="runs")
    op.drop_index(op.f("ix_runs_inputs_digest"), table_name="runs")
    op.drop_table("runs")
