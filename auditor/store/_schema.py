"""The store's tables, as a SQLAlchemy 2 typed ORM.

Portable on purpose: the same models run on SQLite and PostgreSQL. Ids are text, JSON goes
through :class:`sqlalchemy.JSON`, and every timestamp is stored in UTC and read back as an aware
datetime (:class:`UTCDateTime`), since SQLite keeps no time zone.

Ownership: a run owns its answers, an answer its evidence items and claims, a claim its verdict
(deleting a parent deletes its children). Traces are shared between runs: the same trace
(``trace_id`` and content digest) is stored once however often it is audited, and so is its
content (``trace_contents``, compressed), which a re-audit reads instead of the files. The caches stand
apart: verdicts keyed by :func:`auditor.judges.cache._cache.cache_key`; decompositions and fused results keyed by
:func:`auditor.judges.cache._cache.decomposition_key` and :func:`auditor.judges.cache._cache.fused_key`.

The Alembic migrations in :mod:`auditor.store.migrations` must match these models; a test compares them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

#: Stable constraint names, so migrations can refer to them on every database.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

RUN_STATUSES = ("running", "finished", "interrupted", "failed", "superseded")


class UTCDateTime(TypeDecorator[datetime]):
    """An aware datetime stored as UTC; naive values are taken to be UTC already."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        # SQLite has no time zone type: store naive UTC there, aware elsewhere.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class SafeText(TypeDecorator[str]):
    """Text that PostgreSQL accepts whatever the trace held.

    PostgreSQL text cannot hold NUL characters; there each is stored as U+FFFD (the replacement
    character). Trace content is untrusted, and one stray NUL must not fail a run. SQLite keeps
    text exactly.
    """

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is not None and dialect.name == "postgresql" and "\x00" in value:
            return value.replace("\x00", "\ufffd")
        return value

    def bind_processor(self, dialect: Dialect) -> Callable[[str | None], Any] | None:
        # Elsewhere the text goes as it is: only the inner type's processing (none for Text), not
        # a call per value that returns it unchanged (a run binds tens of thousands of texts).
        if dialect.name != "postgresql":
            return self.impl_instance.bind_processor(dialect)
        return super().bind_processor(dialect)


def _json() -> JSON:
    return JSON(none_as_null=True)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class RunRecord(Base):
    """One audit (or evidence) run: what produced it, on what, and how it ended."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    auditor_version: Mapped[str] = mapped_column(SafeText)
    policy_name: Mapped[str | None] = mapped_column(SafeText)
    policy_version: Mapped[str | None] = mapped_column(SafeText)
    policy_sha256: Mapped[str | None] = mapped_column(SafeText, index=True)
    policy_text: Mapped[str | None] = mapped_column(SafeText)
    judge_kind: Mapped[str | None] = mapped_column(SafeText)
    judge_model: Mapped[str | None] = mapped_column(SafeText)
    judge_prompt_version: Mapped[str | None] = mapped_column(SafeText)
    judge_approximate: Mapped[bool] = mapped_column(Boolean, default=False)
    inputs: Mapped[list[dict[str, Any]]] = mapped_column(_json())
    inputs_digest: Mapped[str] = mapped_column(SafeText, index=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(SafeText)
    usage: Mapped[dict[str, Any] | None] = mapped_column(_json())
    summary: Mapped[dict[str, Any] | None] = mapped_column(_json())
    problems: Mapped[list[dict[str, Any]]] = mapped_column(_json())
    # The lease (migration 0004): who is writing the run, when it last said so, and for how long
    # that holds; a running run whose lease ran out is abandoned and may be claimed to resume it.
    owner: Mapped[str | None] = mapped_column(SafeText)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_seconds: Mapped[float | None] = mapped_column(Float)
    # A re-audit (migration 0009): the run whose kept traces it re-judged (``auditor reaudit``).
    reaudit_of: Mapped[str | None] = mapped_column(SafeText)
    # A live server's run (migration 0012): the sample its trace was chosen under, and the spending
    # cap that made it be judged offline (None when it was not).
    sampling: Mapped[dict[str, Any] | None] = mapped_column(_json())
    cap: Mapped[dict[str, Any] | None] = mapped_column(_json())

    answers: Mapped[list[AnswerRecord]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="AnswerRecord.position"
    )


class TraceRecord(Base):
    """A trace, once per (``trace_id``, content digest): re-ingesting it adds no row."""

    __tablename__ = "traces"
    __table_args__ = (UniqueConstraint("trace_id", "digest", name="uq_traces_trace_id_digest"),)

    key: Mapped[str] = mapped_column(SafeText, primary_key=True)
    trace_id: Mapped[str] = mapped_column(SafeText, index=True)
    digest: Mapped[str] = mapped_column(SafeText)
    spans: Mapped[int | None] = mapped_column(Integer)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)


class TraceContentRecord(Base):
    """A trace's content (migration 0009): the normalised :class:`~auditor.trace.Trace` as JSON,
    compressed, once per trace row; what ``auditor reaudit`` re-judges without the original files."""

    __tablename__ = "trace_contents"

    trace_key: Mapped[str] = mapped_column(ForeignKey("traces.key", ondelete="CASCADE"), primary_key=True)
    encoding: Mapped[str] = mapped_column(SafeText)  # "zlib+json": zlib over the UTF-8 model JSON
    size: Mapped[int] = mapped_column(Integer)  # bytes of JSON before compression
    body: Mapped[bytes] = mapped_column(LargeBinary)


class RunTraceRecord(Base):
    """Which traces a run read, in the order it read them (``position``, migration 0009; NULL before)."""

    __tablename__ = "run_traces"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    trace_key: Mapped[str] = mapped_column(ForeignKey("traces.key"), primary_key=True)
    position: Mapped[int | None] = mapped_column(Integer)


class AnswerRecord(Base):
    """One answer as audited in one run, with its per-answer figures."""

    __tablename__ = "answers"
    __table_args__ = (
        # 0022: the run_id prefix filter as a byte-order range (``_filters.prefix``); PostgreSQL's
        # ``~>=~`` / ``~<~`` need this operator class. SQLite's primary key already answers it.
        Index("ix_answers_run_id_pattern", "run_id", postgresql_ops={"run_id": "text_pattern_ops"}).ddl_if(
            dialect="postgresql"
        ),
    )

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    answer_id: Mapped[str] = mapped_column(SafeText, primary_key=True, index=True)  # 0013: one answer's page
    position: Mapped[int] = mapped_column(Integer)
    trace_key: Mapped[str] = mapped_column(ForeignKey("traces.key"), index=True)
    trace_id: Mapped[str] = mapped_column(SafeText, index=True)  # migration 0008: the server's filters
    span_id: Mapped[str] = mapped_column(SafeText)
    conversation_id: Mapped[str | None] = mapped_column(SafeText, index=True)  # 0013: sessions
    question: Mapped[str | None] = mapped_column(SafeText)
    question_type: Mapped[str | None] = mapped_column(SafeText)
    text: Mapped[str] = mapped_column(SafeText)
    generated_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)  # 0008: newest first, time ranges
    has_claims: Mapped[bool] = mapped_column(Boolean)  # False: claims were not extracted (``evidence`` runs)
    refusal: Mapped[bool | None] = mapped_column(Boolean)
    groundedness: Mapped[float | None] = mapped_column(Float)
    contradicted: Mapped[int | None] = mapped_column(Integer)
    unjudged: Mapped[int | None] = mapped_column(Integer)
    grounded: Mapped[bool | None] = mapped_column(Boolean)
    saved_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # 0011: the judge usage spent on it (a run on Ray sums its answers'); None when not kept.
    usage: Mapped[dict[str, Any] | None] = mapped_column(_json())
    # 0015: its :func:`auditor.metrics.answer_counts`, written with it; a filter the rollups cannot
    # answer sums these instead of reading the children. None: written before 0015 and not filled.
    counts: Mapped[dict[str, int] | None] = mapped_column(_json())

    run: Mapped[RunRecord] = relationship(back_populates="answers")
    evidence: Mapped[list[EvidenceRecord]] = relationship(
        cascade="all, delete-orphan", order_by="EvidenceRecord.position", passive_deletes=True
    )
    claims: Mapped[list[ClaimRecord]] = relationship(
        cascade="all, delete-orphan", order_by="ClaimRecord.position", passive_deletes=True
    )


class EvidenceRecord(Base):
    """One evidence item an answer could draw on, with the policy's decision on it."""

    __tablename__ = "evidence"
    __table_args__ = (
        ForeignKeyConstraint(
            ["run_id", "answer_id"],
            ["answers.run_id", "answers.answer_id"],
            ondelete="CASCADE",
            name="fk_evidence_answer",
        ),
        Index("ix_evidence_evidence_id", "evidence_id"),
        # 0022: the ``outcome`` filter's "has an excluded item" from the index alone, one seek an answer.
        Index("ix_evidence_admitted", "run_id", "answer_id", "admitted"),
    )

    run_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    answer_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    evidence_id: Mapped[str] = mapped_column(SafeText)
    kind: Mapped[str] = mapped_column(SafeText)
    name: Mapped[str | None] = mapped_column(SafeText)
    text: Mapped[str] = mapped_column(SafeText)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", _json())
    document_id: Mapped[str | None] = mapped_column(SafeText)
    url: Mapped[str | None] = mapped_column(SafeText)
    trace_id: Mapped[str] = mapped_column(SafeText)
    span_id: Mapped[str | None] = mapped_column(SafeText)
    available_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    hop_path: Mapped[list[str]] = mapped_column(_json())
    error: Mapped[bool] = mapped_column(Boolean)
    current_question: Mapped[bool] = mapped_column(Boolean)
    source_class: Mapped[str | None] = mapped_column(SafeText)
    admitted: Mapped[bool | None] = mapped_column(Boolean)
    reason: Mapped[str | None] = mapped_column(SafeText)


class ClaimRecord(Base):
    """One sentence of an answer: a claim with its offsets, or screened out with a reason."""

    __tablename__ = "claims"
    __table_args__ = (
        ForeignKeyConstraint(
            ["run_id", "answer_id"],
            ["answers.run_id", "answers.answer_id"],
            ondelete="CASCADE",
            name="fk_claims_answer",
        ),
    )

    run_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    answer_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    claim_id: Mapped[str] = mapped_column(SafeText)
    text: Mapped[str] = mapped_column(SafeText)
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    screened: Mapped[bool] = mapped_column(Boolean)
    screen_reason: Mapped[str | None] = mapped_column(SafeText)
    # Citation markers (migration 0005): as written, each judged against what it cites; NULL in
    # rows stored before it (read back as none).
    markers: Mapped[list[str] | None] = mapped_column(_json())
    citation_markers: Mapped[list[dict[str, Any]] | None] = mapped_column(_json())
    misattributed: Mapped[bool | None] = mapped_column(Boolean)

    verdict: Mapped[VerdictRecord | None] = relationship(
        cascade="all, delete-orphan", single_parent=True, passive_deletes=True
    )


class VerdictRecord(Base):
    """The judgement of one claim, with its verified quotes and what went wrong."""

    __tablename__ = "verdicts"
    __table_args__ = (
        ForeignKeyConstraint(
            ["run_id", "answer_id", "position"],
            ["claims.run_id", "claims.answer_id", "claims.position"],
            ondelete="CASCADE",
            name="fk_verdicts_claim",
        ),
    )

    run_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    answer_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    label: Mapped[str | None] = mapped_column(SafeText)
    citations: Mapped[list[dict[str, Any]]] = mapped_column(_json())
    inadmissible_support: Mapped[list[str]] = mapped_column(_json())
    rationale: Mapped[str | None] = mapped_column(SafeText)
    unjudged_reason: Mapped[str | None] = mapped_column(SafeText)
    judge_errors: Mapped[list[str]] = mapped_column(_json())
    common_knowledge: Mapped[bool] = mapped_column(Boolean)
    settled_by: Mapped[str | None] = mapped_column(SafeText)
    # Conflicting admitted sources (migration 0007): both sides' quotes and the on_conflict rule
    # applied; NULL in rows stored before it (read back as none).
    conflicts: Mapped[list[dict[str, Any]] | None] = mapped_column(_json())
    conflict_resolution: Mapped[str | None] = mapped_column(SafeText)


class CachedVerdictRecord(Base):
    """The verdict cache: key (claim, evidence digest, judge identity) to a verdict."""

    __tablename__ = "verdict_cache"

    key: Mapped[str] = mapped_column(SafeText, primary_key=True)
    verdict: Mapped[dict[str, Any]] = mapped_column(_json())
    label: Mapped[str] = mapped_column(SafeText)
    judge_kind: Mapped[str | None] = mapped_column(SafeText)
    judge_model: Mapped[str | None] = mapped_column(SafeText)
    judge_prompt_version: Mapped[str | None] = mapped_column(SafeText)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CachedDecompositionRecord(Base):
    """The decomposition cache: an LLM decomposition (``kind="decompose"``), or a fused result
    (``kind="fused"``: the decomposition and its verdicts), by key. ``extractor`` names the model."""

    __tablename__ = "decomposition_cache"

    key: Mapped[str] = mapped_column(SafeText, primary_key=True)
    kind: Mapped[str] = mapped_column(SafeText)
    extractor: Mapped[str] = mapped_column(SafeText)
    decomposition: Mapped[dict[str, Any]] = mapped_column(_json())
    verdicts: Mapped[list[dict[str, Any]] | None] = mapped_column(_json())  # fused only
    errors: Mapped[list[str]] = mapped_column(_json())  # fused only: re-located or dropped claims
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CalibrationRecord(Base):
    """A judge measured against human labels (``auditor calibrate``), found again by judge identity."""

    __tablename__ = "calibrations"
    __table_args__ = (Index("ix_calibrations_judge", "judge_kind", "judge_model", "judge_prompt_version"),)

    id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    auditor_version: Mapped[str] = mapped_column(SafeText)
    judge_kind: Mapped[str] = mapped_column(SafeText)
    judge_model: Mapped[str | None] = mapped_column(SafeText)
    judge_prompt_version: Mapped[str | None] = mapped_column(SafeText)
    judge_approximate: Mapped[bool] = mapped_column(Boolean)
    policy_name: Mapped[str | None] = mapped_column(SafeText)
    policy_sha256: Mapped[str | None] = mapped_column(SafeText)
    labelled_path: Mapped[str] = mapped_column(SafeText)
    labelled_sha256: Mapped[str] = mapped_column(SafeText)
    records: Mapped[int] = mapped_column(Integer)
    body: Mapped[dict[str, Any]] = mapped_column(
        _json()
    )  # the whole :class:`auditor.calibration.Calibration`


class RollupRecord(Base):
    """The summed counts (:func:`auditor.metrics.answer_counts`) of the answers of one hour or day
    that share a policy, judge, service, source class and question type (migration 0013), whose
    runs share a sample and a cap (migration 0019), in one policy outcome slice (migration 0023) or
    one verdict slice (migration 0025).

    Kept by every answer write in the same transaction (:mod:`._rollups`), so a summary or trend
    reads a few rows per bucket instead of every answer. An answer counts once in the rows of its
    question type with ``service`` and ``source_class`` ``"*"`` (every answer), and again once per
    service its trace was received from and per source class of its evidence, for those filters.
    An absent dimension (no policy, no question type, a run that is not a live server's, a run the
    spending cap did not send offline) is ``""``. Likewise an answer counts in the rows of
    ``outcome`` ``"*"`` and again in those of each value of the ``outcome`` filter that selects it
    (``excluded`` or ``all_admitted``, and ``inadmissible_support``), each crossed with ``verdict``
    ``"*"`` and each value of the ``verdict`` filter that selects it (migration 0026;
    ``auditor.store._rollups.verdicts_of``, ``slices_of``).
    """

    __tablename__ = "answer_rollups"
    # 0023, 0025: the outcome and verdict in the slice index, before ``start``.
    __table_args__ = (
        Index("ix_answer_rollups_slice", "bucket", "service", "source_class", "outcome", "verdict", "start"),
    )

    key: Mapped[str] = mapped_column(SafeText, primary_key=True)  # the other key columns' digest
    bucket: Mapped[str] = mapped_column(SafeText)  # "hour" or "day"
    start: Mapped[datetime] = mapped_column(UTCDateTime)
    policy_name: Mapped[str] = mapped_column(SafeText)
    policy_sha256: Mapped[str] = mapped_column(SafeText)
    judge_kind: Mapped[str] = mapped_column(SafeText)
    judge_model: Mapped[str] = mapped_column(SafeText)
    service: Mapped[str] = mapped_column(SafeText)
    source_class: Mapped[str] = mapped_column(SafeText)
    question_type: Mapped[str] = mapped_column(SafeText)
    # 0019: the run's sample and cap (``auditor.store._rollups.sample_key`` / ``cap_key``).
    sample: Mapped[str] = mapped_column(SafeText)
    cap: Mapped[str] = mapped_column(SafeText)
    # 0023: ``"*"`` or an ``outcome`` filter value (``auditor.store._rollups.outcomes_of``).
    outcome: Mapped[str] = mapped_column(SafeText)
    # 0025: ``"*"`` or a ``verdict`` filter value (``auditor.store._rollups.verdicts_of``).
    verdict: Mapped[str] = mapped_column(SafeText)
    answer_count: Mapped[int] = mapped_column(Integer)
    counts: Mapped[dict[str, int]] = mapped_column(_json())
