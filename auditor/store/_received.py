"""The tables of ``auditor serve``: spans as received, the traces they make up, each audit pass.

Kept beside :mod:`._schema` (same metadata, migration 0006) so the server's intake reads apart
from the audit tables. ``received_spans`` is keyed by trace id and span id, so a re-sent span adds
nothing. ``received_traces`` holds one row per trace: its ``generation`` counts the batches that
brought it new spans, ``audited_generation`` the generation last audited; a trace whose two differ
is pending. Its ``owner`` / ``heartbeat_at`` / ``lease_seconds`` are a lease on the audit, like a
run's (:mod:`._lease`). ``trace_audits`` records which run audited which generation, so a trace
re-audited after a late span keeps both results apart.

``received_bodies`` (migration 0014) holds request bodies acknowledged but not yet split into
spans: the receiver commits a body there and answers; an ingest worker claims it (``owner`` /
``heartbeat_at``, a lease), stores its spans and deletes it in one transaction.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Float, Index, Integer, LargeBinary, text
from sqlalchemy.orm import Mapped, mapped_column

from auditor.store._schema import Base, SafeText, UTCDateTime


class ReceivedSpanRecord(Base):
    """One span as received: its ids, when it ended, and the span as a one-span OTLP request, in
    ``record`` as JSON text or (migration 0024) in ``proto`` as protobuf bytes, ``record`` then
    empty (:class:`auditor.trace.ReceivedSpan`); ``service`` is its resource's ``service.name``
    where the adapter read it (protobuf spans)."""

    __tablename__ = "received_spans"

    trace_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    span_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    parent_id: Mapped[str | None] = mapped_column(SafeText)
    end_ns: Mapped[int | None] = mapped_column(BigInteger)
    record: Mapped[str] = mapped_column(SafeText)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    service: Mapped[str | None] = mapped_column(SafeText)
    proto: Mapped[bytes | None] = mapped_column(LargeBinary)


#: A received trace waiting for an audit: new spans since the generation last audited.
WAITING = "generation > audited_generation"


class ReceivedTraceRecord(Base):
    """A received trace: whether its root has ended, when its last span came, and its audit state."""

    __tablename__ = "received_traces"
    __table_args__ = (
        Index("ix_received_traces_last_span_at", "last_span_at"),  # 0017: the newest traces (runs page)
        # 0016: only the traces waiting for an audit, so counting and claiming them costs what
        # waits (it replaced an index of every trace's two generations, which a count scanned whole).
        Index(
            "ix_received_traces_waiting",
            "last_span_at",
            sqlite_where=text(WAITING),
            postgresql_where=text(WAITING),
        ),
    )

    trace_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    generation: Mapped[int] = mapped_column(Integer)
    audited_generation: Mapped[int] = mapped_column(Integer)
    root_ended: Mapped[bool] = mapped_column(Boolean)
    first_span_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_span_at: Mapped[datetime] = mapped_column(UTCDateTime)
    owner: Mapped[str | None] = mapped_column(SafeText)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_seconds: Mapped[float | None] = mapped_column(Float)
    run_id: Mapped[str | None] = mapped_column(SafeText)  # the run of the latest audit
    error: Mapped[str | None] = mapped_column(SafeText)  # why the latest audit failed, if it did


class TraceAuditRecord(Base):
    """One audit pass of a received trace: the generation it saw and the run it wrote."""

    __tablename__ = "trace_audits"
    # 0021: the passes in the order /api/audits pages them, so a page is a range read, not a sort.
    __table_args__ = (Index("ix_trace_audits_audited_at", "audited_at", "trace_id", "generation"),)

    trace_id: Mapped[str] = mapped_column(SafeText, primary_key=True)
    generation: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str | None] = mapped_column(SafeText, index=True)
    spans: Mapped[int] = mapped_column(Integer)
    audited_at: Mapped[datetime] = mapped_column(UTCDateTime)
    error: Mapped[str | None] = mapped_column(SafeText)


class ReceivedBodyRecord(Base):
    """An acknowledged request body waiting to be split into spans, and the ingest worker holding it."""

    __tablename__ = "received_bodies"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    adapter: Mapped[str] = mapped_column(SafeText)  # the adapter that reads it (``otlp-proto``, ...)
    spans: Mapped[int] = mapped_column(Integer)  # spans the pre-acknowledgement check counted
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    owner: Mapped[str | None] = mapped_column(SafeText)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Last: SQLite reads a row's columns in order, so the counts and claims, which read the
    # columns above, never walk a large body's overflow pages (33 ms a count at 20 bodies of 1 MB).
    body: Mapped[bytes] = mapped_column(LargeBinary)  # as received, or compressed (:meth:`BodyQueue.put`)
