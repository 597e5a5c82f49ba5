"""A run's life in the store: begun, renewed by its owner, claimed when abandoned, closed.

:class:`RunLedger` is the part of :class:`~auditor.store.Store` that writes the ``runs`` row. The
run lease (:mod:`._lease`) is enforced here: a writer passing its ``owner`` token renews its lease
with every write and is refused (:class:`~auditor.errors.LeaseLostError`) once another process
holds the run, so two live processes never write the same run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from auditor import __version__
from auditor.errors import LeaseLostError, StoreError
from auditor.results import ProblemOut, RunInfo
from auditor.settings import run_lease
from auditor.store import _convert as convert
from auditor.store import _queries as queries
from auditor.store._lease import abandoned, cutoff, owner_gone
from auditor.store._queries import JudgeLike
from auditor.store._schema import RUN_STATUSES, RunRecord
from auditor.store._translate import store_errors

#: More work for the transaction that finishes (or begins) a run, given the session and the run id:
#: what was waiting on the run is marked done in the same commit (``auditor serve``'s trace, for one).
FinishHook = Callable[[Session, str], None]


def now() -> datetime:
    """The time stamps the store writes: aware, UTC."""
    return datetime.now(UTC)


class RunLedger:
    """Sessions on the store's engine, and the writes of a run's row (see :class:`~auditor.store.Store`)."""

    url: str
    engine: Engine
    _sessions: sessionmaker[Session]

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with store_errors(self.url), self._sessions() as session, session.begin():
            yield session

    @staticmethod
    def _run(session: Session, run_id: str) -> RunRecord:
        row = session.get(RunRecord, run_id)
        if row is None:
            raise StoreError(f"No run {run_id!r} in the store: `auditor runs` lists the stored runs.")
        return row

    def begin_run(
        self,
        run: RunInfo,
        policy_text: str | None = None,
        *,
        owner: str | None = None,
        lease_seconds: float | None = None,
        also: FinishHook | None = None,
    ) -> str:
        """Record a new run as ``running`` and return its id (``run.id``).

        Args:
            run: the run's identity: policy and judge, inputs with their digests, start time.
            policy_text: the policy file's text as read, so the run can be reconstructed.
            owner: the process writing it (:func:`~auditor.store.new_owner`), holding its lease.
            lease_seconds: how long the lease lasts unrenewed (default: ``AUDITOR_RUN_LEASE``).
            also: more work for the same transaction, after the row is added (a live server's
                sample and cap, :func:`~auditor.store.live_record`).
        """
        record = convert.run_record(run, policy_text, __version__, "running")
        record.owner, record.heartbeat_at, record.lease_seconds = owner, now(), run_lease(lease_seconds)
        with self._session() as session:
            session.add(record)
            if also is not None:
                session.flush()
                also(session, run.id)
        return run.id

    def claim_run(self, run_id: str, owner: str, lease_seconds: float | None = None) -> bool:
        """Take a run over to resume it: an interrupted one, or a running one whose lease ran out.

        One conditional UPDATE, on the row as just read: of processes claiming the same run at
        once one wins, and a run whose owner still renews its lease is never taken.

        Args:
            owner: the claiming process (:func:`~auditor.store.new_owner`).
            lease_seconds: its lease; also the lease of a run that recorded none.

        Returns:
            True when ``owner`` now holds the run (``running``, lease renewed), else False.
        """
        lease, at = run_lease(lease_seconds), now()
        with self._session() as session:
            row = self._run(session, run_id)
            held = row.lease_seconds or lease
            if row.status != "interrupted" and not abandoned(
                row.status, row.heartbeat_at, held, at, row.owner
            ):
                return False
            # An owner whose process has exited cannot renew: the run is claimable whatever its heartbeat.
            since = at if owner_gone(row.owner) else cutoff(held, at)
            claim = queries.claim_run(run_id, row.owner, row.status, since, owner, lease, at)
            return session.connection().execute(claim).rowcount == 1

    def heartbeat(self, run_id: str, owner: str) -> bool:
        """Renew ``owner``'s lease on a running run; False once another process has taken it over."""
        with self._session() as session:
            return session.connection().execute(queries.renew_lease(run_id, owner, now())).rowcount == 1

    def _hold(self, session: Session, run_id: str, owner: str | None) -> RunRecord:
        """The run, with ``owner``'s lease renewed in this transaction (LeaseLostError if it is not theirs)."""
        self._renew(session, run_id, owner)
        return self._run(session, run_id)

    def _renew(self, session: Session, run_id: str, owner: str | None) -> None:
        """Renew ``owner``'s lease in this transaction (LeaseLostError if the run is not theirs), or
        with no owner check that the run exists; without loading the row."""
        if owner is None:
            if session.scalar(queries.run_exists(run_id)) is None:
                self._run(session, run_id)
            return
        if not session.connection().execute(queries.renew_lease(run_id, owner, now())).rowcount:
            self._run(session, run_id)
            raise LeaseLostError(
                f"Run {run_id} was taken over by another process (this one's lease ran out: it did not "
                "renew it within AUDITOR_RUN_LEASE seconds); stopped writing it. Its saved answers are "
                "kept; the other process continues the run."
            )

    def finish_run(
        self,
        run_id: str,
        summary: dict[str, Any],
        usage: dict[str, Any] | None = None,
        status: str = "finished",
        *,
        owner: str | None = None,
        also: FinishHook | None = None,
    ) -> None:
        """Close a run with its summary figures and token usage (and ``also``, in the same transaction).

        Args:
            status: ``finished``, ``interrupted`` or ``failed``.
            owner: the lease holder writing it (:class:`~auditor.errors.LeaseLostError` if another
                process took the run over); None writes regardless.
        """
        if status not in RUN_STATUSES or status in ("running", "superseded"):
            raise ValueError(f"status must be finished, interrupted or failed, not {status!r}")
        with self._session() as session:
            row = self._hold(session, run_id, owner)
            row.summary, row.usage, row.status, row.finished_at = summary, usage, status, now()
            if also is not None:
                also(session, run_id)

    def add_problems(self, run_id: str, problems: Iterable[ProblemOut], *, owner: str | None = None) -> None:
        """Append problems to a run's (a distributed run's workers find some after it began).

        Args:
            owner: the lease holder writing it (:class:`~auditor.errors.LeaseLostError` if another
                process took the run over); None writes regardless.
        """
        added = [p.model_dump(mode="json") for p in problems]
        if not added:
            return
        with self._session() as session:
            row = self._hold(session, run_id, owner)
            row.problems = [*row.problems, *added]

    def mark_interrupted(self, run_id: str, owner: str | None = None) -> None:
        """Mark a run interrupted (Ctrl-C, SIGTERM, a crash): its saved answers stay, it can be resumed.

        With ``owner``, only while that process still holds the run (never over its new owner).
        """
        with self._session() as session:
            if owner is not None:
                session.connection().execute(queries.interrupt_run(run_id, owner, now()))
                return
            row = self._run(session, run_id)
            row.status, row.finished_at = "interrupted", now()

    def find_resumable(
        self,
        input_digests: Iterable[str],
        policy_sha256: str | None,
        judge: JudgeLike | None,
        lease_seconds: float | None = None,
    ) -> str | None:
        """The latest run to resume on the same inputs (by digest), policy and judge, or None:
        interrupted, or running with its lease run out (its process was killed).

        Args:
            input_digests: the SHA-256 of each input file (order does not matter).
            policy_sha256: the policy's canonical hash.
            judge: the judge identity (kind, model, prompt version); None for evidence-only runs.
            lease_seconds: the lease of a run that recorded none (default: ``AUDITOR_RUN_LEASE``).
        """
        lease, at = run_lease(lease_seconds), now()
        with self._session() as session:
            for run_id, status, heartbeat_at, held, owner in session.execute(
                queries.resumable_runs(input_digests, policy_sha256, judge)
            ):
                if status == "interrupted" or abandoned(status, heartbeat_at, held or lease, at, owner):
                    return str(run_id)
        return None

    def supersede_runs(
        self,
        run_id: str,
        input_digests: Iterable[str],
        policy_sha256: str | None,
        judge: JudgeLike | None,
        lease_seconds: float | None = None,
    ) -> list[str]:
        """Mark ``superseded`` the abandoned runs on the same inputs, policy and judge as the run
        ``run_id`` that has just finished them; their ids, oldest first.

        Abandoned: ``running`` with the lease run out or the owner's process gone (a kill -9 while
        a rerun had started beside it). Each is marked only if still as read (one conditional
        UPDATE), so a run its owner renews meanwhile is left alone. A superseded run keeps its
        answers and is no longer resumed.
        """
        lease, at = run_lease(lease_seconds), now()
        marked: list[str] = []
        with self._session() as session:
            rows = session.execute(queries.resumable_runs(input_digests, policy_sha256, judge)).all()
            for other, status, heartbeat_at, held, owner in reversed(rows):
                if other == run_id or not abandoned(status, heartbeat_at, held or lease, at, owner):
                    continue
                since = at if owner_gone(owner) else cutoff(held or lease, at)
                mark = queries.supersede_run(other, owner, since, at)
                if session.connection().execute(mark).rowcount == 1:
                    marked.append(str(other))
        return marked
