"""The server's intake: store received spans in the request, hand each ready trace to one worker.

Guarantees:

- :meth:`Intake.receive` commits a request's spans in one transaction before it returns (the
  server acknowledges only then); a re-sent span (same trace id and span id) adds nothing and does
  not make its trace pending again.
- A trace is ready once its root span has ended and ``quiet`` seconds have passed since its last
  new span, or, when no ended root has come, once ``root_wait`` seconds have passed since then.
- :meth:`Intake.claim` hands a ready trace to one owner under a lease (one conditional UPDATE, as
  :meth:`Store.claim_run` does for runs); a worker that stops renewing it (killed) loses it once
  the lease runs out, and the next claim takes it over, so a restart resumes pending traces.
- A span arriving after an audit makes the trace pending again under a new generation; each audit
  pass is recorded (``trace_audits``) with the generation it saw and its run.
- Finishing an audit is one transaction: :meth:`Intake.finish_hook` marks the trace audited in
  the transaction that marks its run finished (:meth:`Store.finish_run`), so a worker killed at
  any point leaves either both or neither. It is also idempotent on retry: a finished run on the
  very same spans (:meth:`Intake.finished_run`, by the digest of the claim's file; e.g. one
  finished by a server without the hook) is recorded by the next claimer, not audited again.
- A run that ends ``failed`` (every judge call failed) does not mark its trace audited: the pass
  is recorded with the error (``trace_audits``, so ``/api/audits`` shows it) and the trace is
  tried again after a backoff (:data:`RETRY_BASE` leases, doubled per attempt), at most
  :data:`MAX_ATTEMPTS` times per generation; after the last, the pass stands with its error. The
  attempts are the failed runs on the same spans and policy, so a restart keeps counting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, func, or_, select, text, tuple_, update
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement

from auditor.store._convert import inputs_digest
from auditor.store._cursor import make_cursor, read_cursor
from auditor.store._received import ReceivedSpanRecord, ReceivedTraceRecord, TraceAuditRecord
from auditor.store._runs import FinishHook, now
from auditor.store._schema import RunRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors
from auditor.store._write import insert_missing
from auditor.trace import ReceivedSpan

#: Trace ids per UPDATE when spans arrive (well under SQLite's bound on parameters).
UPDATE_PAGE = 500
#: Traces looked at per claim attempt (the first that can still be claimed is taken).
CLAIM_CANDIDATES = 8
#: Leases after a held trace's last heartbeat before another worker may take it over.
TAKEOVER_AFTER = 1.5
#: Audits of one generation whose run failed (every judge call failed) before the failure stands.
MAX_ATTEMPTS = 4
#: Audit passes read per query when every one is wanted (:meth:`Intake.audits`).
AUDIT_BATCH = 500
#: Leases before the first retry of a failed audit; each next retry waits twice as long.
RETRY_BASE = 2.0


@dataclass(frozen=True)
class Claim:
    """A trace held by one worker: its spans at ``generation``, each a one-span OTLP request as
    JSON text or protobuf bytes (:class:`auditor.trace.ReceivedSpan`'s ``record``)."""

    trace_id: str
    generation: int
    records: tuple[str | bytes, ...]


@dataclass(frozen=True)
class TraceAudit:
    """One audit pass of a received trace."""

    trace_id: str
    generation: int
    run_id: str | None
    spans: int
    error: str | None


@dataclass(frozen=True)
class AuditPage:
    """One page of audit passes and the cursor of the next (None on the last page)."""

    audits: list[TraceAudit]
    next: str | None


class Intake:
    """Received spans and received traces in ``store``'s database (the store stays open by its owner)."""

    def __init__(self, store: Store) -> None:
        self.url = store.url
        self.in_memory = store.in_memory
        self._sessions = sessionmaker(store.engine, expire_on_commit=False)

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with store_errors(self.url), self._sessions() as session, session.begin():
            yield session

    def receive(self, spans: Sequence[ReceivedSpan]) -> int:
        """Store ``spans`` (committed when this returns); the number that were new."""
        if not spans:
            return 0
        with self._session() as session:
            return store_spans(session, spans, now())

    def pending(self) -> int:
        """Traces waiting for an audit (new spans since their last audit)."""
        with self._session() as session:
            if session.get_bind().dialect.name == "postgresql":
                # PostgreSQL cannot estimate `generation > audited_generation` (it expects a third of
                # the table) and, past a few hundred thousand traces, starts two parallel workers to
                # read the few rows of the partial index: about 10-20 ms a count, all of it starting
                # workers. One worker reads the same index in well under a millisecond. LOCAL: this
                # transaction only, so the pooled connection keeps its setting.
                session.execute(text("SET LOCAL max_parallel_workers_per_gather = 0"))
            return int(
                session.scalar(
                    select(func.count()).where(
                        ReceivedTraceRecord.generation > ReceivedTraceRecord.audited_generation
                    )
                )
                or 0
            )

    @staticmethod
    def _claimable(owner_cutoff: object) -> ColumnElement[bool]:
        return or_(ReceivedTraceRecord.owner.is_(None), ReceivedTraceRecord.heartbeat_at < owner_cutoff)

    def claim(self, owner: str, *, quiet: float, root_wait: float, lease: float) -> Claim | None:
        """Hold the next ready trace for ``owner`` (see the module's rule), or None if none is ready."""
        at = now()
        quiet_cutoff, root_cutoff = at - timedelta(seconds=quiet), at - timedelta(seconds=root_wait)
        # A held trace is taken over only TAKEOVER_AFTER leases after its last heartbeat, so the
        # dead owner's run lease (as long, renewed on the same schedule) has lapsed and the next
        # audit resumes that run instead of starting a second one beside it.
        lease_cutoff = at - timedelta(seconds=lease * TAKEOVER_AFTER)
        ready = and_(
            ReceivedTraceRecord.generation > ReceivedTraceRecord.audited_generation,
            or_(
                and_(
                    ReceivedTraceRecord.root_ended.is_(True), ReceivedTraceRecord.last_span_at <= quiet_cutoff
                ),
                ReceivedTraceRecord.last_span_at <= root_cutoff,
            ),
            self._claimable(lease_cutoff),
        )
        with self._session() as session:
            candidates = session.scalars(
                select(ReceivedTraceRecord.trace_id)
                .where(ready)
                .order_by(ReceivedTraceRecord.last_span_at)
                .limit(CLAIM_CANDIDATES)
            ).all()
        for trace_id in candidates:
            with self._session() as session:
                taken = session.connection().execute(
                    update(ReceivedTraceRecord)
                    .where(ReceivedTraceRecord.trace_id == trace_id, ready)
                    .values(owner=owner, heartbeat_at=at, lease_seconds=lease)
                )
                if taken.rowcount != 1:
                    continue
                generation = session.scalar(
                    select(ReceivedTraceRecord.generation).where(ReceivedTraceRecord.trace_id == trace_id)
                )
                records = session.execute(
                    select(ReceivedSpanRecord.record, ReceivedSpanRecord.proto)
                    .where(ReceivedSpanRecord.trace_id == trace_id)
                    .order_by(ReceivedSpanRecord.received_at, ReceivedSpanRecord.span_id)
                ).all()
                return Claim(
                    trace_id,
                    int(generation or 0),
                    tuple(record if proto is None else proto for record, proto in records),
                )
        return None

    def heartbeat(self, trace_id: str, owner: str) -> bool:
        """Renew ``owner``'s lease on a trace; False once another worker has taken it over."""
        with self._session() as session:
            renewed = session.connection().execute(
                update(ReceivedTraceRecord)
                .where(ReceivedTraceRecord.trace_id == trace_id, ReceivedTraceRecord.owner == owner)
                .values(heartbeat_at=now())
            )
            return renewed.rowcount == 1

    def finish(self, claim: Claim, owner: str, run_id: str | None, error: str | None = None) -> bool:
        """Record ``claim``'s audit pass and release the trace; False if ``owner`` no longer held it."""
        with self._session() as session:
            return self._finish(session, claim, owner, run_id, error)

    def finish_hook(
        self, claim: Claim, owner: str, recorded: Callable[[bool], None] | None = None
    ) -> FinishHook:
        """Work for :meth:`Store.finish_run`'s transaction: record ``claim``'s pass with that run.

        ``recorded`` is told whether ``owner`` still held the trace (if not, the run still finishes:
        its answers are complete; the trace's new owner records its own pass).
        """

        def hook(session: Session, run_id: str) -> None:
            run = session.get(RunRecord, run_id)
            if run is not None and run.status == "failed":
                held = self._failed(session, claim, owner, run)
            else:
                held = self._finish(session, claim, owner, run_id, None)
            if recorded is not None:
                recorded(held)

        return hook

    @staticmethod
    def _failed(session: Session, claim: Claim, owner: str, run: RunRecord) -> bool:
        """Record a failed run's pass; retry the trace after a backoff, or, past the last attempt,
        let the failure stand (the trace is released as audited, with the error)."""
        attempts = int(
            session.scalar(
                select(func.count()).where(
                    RunRecord.inputs_digest == run.inputs_digest,
                    RunRecord.policy_sha256 == run.policy_sha256,
                    RunRecord.status == "failed",
                )
            )
            or 1
        )
        llm = (run.usage or {}).get("llm") or {}
        why = f"every judge call failed ({llm.get('failed', '?')} of {llm.get('calls', '?')}; run {run.id})"
        if attempts >= MAX_ATTEMPTS:
            return Intake._finish(
                session, claim, owner, run.id, f"{why}; attempt {attempts} of {MAX_ATTEMPTS}, given up"
            )
        trace = session.get(ReceivedTraceRecord, claim.trace_id)
        if trace is None or trace.owner != owner:
            return False
        lease = trace.lease_seconds or 0.0
        delay = lease * RETRY_BASE * 2 ** (attempts - 1)
        at = now()
        error = f"{why}; attempt {attempts} of {MAX_ATTEMPTS}, retried in {delay:g} s"
        # Held by an owner no one renews (not the worker's own, which its lease thread may still
        # renew for a moment): claimable again once `delay` has passed (a claim takes a trace
        # TAKEOVER_AFTER leases after its last heartbeat).
        trace.owner = f"{owner}:retry"
        trace.heartbeat_at = at + timedelta(seconds=delay - lease * TAKEOVER_AFTER)
        trace.run_id, trace.error = run.id, error
        Intake._record_pass(session, claim, run.id, error, at)
        return True

    @staticmethod
    def _record_pass(
        session: Session, claim: Claim, run_id: str | None, error: str | None, at: datetime
    ) -> None:
        """The pass of ``claim``'s generation, replacing an earlier failed attempt's."""
        session.execute(
            delete(TraceAuditRecord).where(
                TraceAuditRecord.trace_id == claim.trace_id, TraceAuditRecord.generation == claim.generation
            )
        )
        session.add(
            TraceAuditRecord(
                trace_id=claim.trace_id,
                generation=claim.generation,
                run_id=run_id,
                spans=len(claim.records),
                audited_at=at,
                error=error,
            )
        )

    @staticmethod
    def _finish(session: Session, claim: Claim, owner: str, run_id: str | None, error: str | None) -> bool:
        released = session.connection().execute(
            update(ReceivedTraceRecord)
            .where(ReceivedTraceRecord.trace_id == claim.trace_id, ReceivedTraceRecord.owner == owner)
            .values(
                audited_generation=claim.generation,
                owner=None,
                heartbeat_at=None,
                run_id=run_id,
                error=error,
            )
        )
        if released.rowcount != 1:
            return False
        Intake._record_pass(session, claim, run_id, error, now())
        return True

    def finished_run(self, file_sha256: str, policy_sha256: str | None) -> str | None:
        """The finished run, if any, that audited exactly one input with this digest under this policy.

        A claim's file holds every stored span of the trace at its generation, so its digest names
        that generation's audit: a finished run on it is an audit already done.
        """
        with self._session() as session:
            found = session.scalar(
                select(RunRecord.id)
                .where(
                    RunRecord.inputs_digest == inputs_digest([file_sha256]),
                    RunRecord.policy_sha256 == policy_sha256,
                    RunRecord.status == "finished",
                )
                .order_by(RunRecord.started_at.desc())
                .limit(1)
            )
            return None if found is None else str(found)

    def audits(self, trace_id: str | None = None) -> list[TraceAudit]:
        """Every audit pass recorded, oldest first (of one trace when ``trace_id`` is given)."""
        passes: list[TraceAudit] = []
        after: str | None = None
        while True:
            page = self.audit_page(trace_id, limit=AUDIT_BATCH, after=after)
            passes.extend(page.audits)
            if page.next is None:
                return passes
            after = page.next

    def audit_page(
        self, trace_id: str | None = None, *, limit: int = 100, after: str | None = None
    ) -> AuditPage:
        """A page of the audit passes recorded, oldest first (by when, then trace and generation).

        ``after`` is the ``next`` of the previous page; paging is by keyset on the index
        ``ix_trace_audits_audited_at``, so a page is one range read however many passes are stored,
        and passes recorded meanwhile neither repeat nor shift a page.

        Raises:
            UsageError: ``after`` is not a cursor from an earlier page.
        """
        order = (TraceAuditRecord.audited_at, TraceAuditRecord.trace_id, TraceAuditRecord.generation)
        query = select(TraceAuditRecord).order_by(*order).limit(limit + 1)
        if trace_id is not None:
            query = query.where(TraceAuditRecord.trace_id == trace_id)
        if after is not None:
            query = query.where(tuple_(*order) > tuple(read_cursor(after, str, int)))  # typed as `order`
        with self._session() as session:
            rows = list(session.scalars(query))
        page = rows[:limit]
        last = page[-1] if len(rows) > limit else None
        return AuditPage(
            [TraceAudit(r.trace_id, r.generation, r.run_id, r.spans, r.error) for r in page],
            None if last is None else make_cursor(last.audited_at, last.trace_id, last.generation),
        )


def store_spans(session: Session, spans: Sequence[ReceivedSpan], at: datetime) -> int:
    """Add ``spans`` in ``session``'s transaction (a re-sent span adds nothing); the number that were new."""
    wanted = {(s.trace_id, s.span_id): s for s in spans}
    trace_ids = sorted({s.trace_id for s in spans})
    have = {
        (row.trace_id, row.span_id)
        for row in session.execute(
            select(ReceivedSpanRecord.trace_id, ReceivedSpanRecord.span_id).where(
                ReceivedSpanRecord.trace_id.in_(trace_ids)
            )
        )
    }
    new = [s for key, s in wanted.items() if key not in have]
    insert_missing(
        session,
        ReceivedSpanRecord,
        [
            {
                "trace_id": s.trace_id,
                "span_id": s.span_id,
                "parent_id": s.parent_id,
                "end_ns": s.end_ns,
                "record": s.record if isinstance(s.record, str) else "",
                "received_at": at,
                "service": s.service,
                "proto": s.record if isinstance(s.record, bytes) else None,
            }
            for s in new
        ],
    )
    touched = sorted({s.trace_id for s in new})
    insert_missing(
        session,
        ReceivedTraceRecord,
        [
            {
                "trace_id": t,
                "generation": 0,
                "audited_generation": 0,
                "root_ended": False,
                "first_span_at": at,
                "last_span_at": at,
            }
            for t in touched
        ],
    )
    rooted = {s.trace_id for s in new if s.parent_id is None and s.end_ns is not None}
    bumped = {"generation": ReceivedTraceRecord.generation + 1, "last_span_at": at}
    for group, values in (
        (sorted(rooted), {**bumped, "root_ended": True}),
        (sorted(set(touched) - rooted), bumped),
    ):
        for first in range(0, len(group), UPDATE_PAGE):
            page = group[first : first + UPDATE_PAGE]
            session.execute(
                update(ReceivedTraceRecord).where(ReceivedTraceRecord.trace_id.in_(page)).values(values)
            )
    return len(new)
