"""The SQL store: audit runs, the answers they judged, and enough to rebuild the public result.

Guarantees:

- :meth:`Store.load_run` rebuilds the :class:`~auditor.results.AuditResult` that was saved, field
  for field, so any stored run can be re-rendered as a report.
- :meth:`Store.save_answer` commits each answer on its own: a crash keeps every answer saved
  before it, and saving the same answer again replaces it (no duplicate rows).
- A trace is stored once per (``trace_id``, content digest), however many runs read it.
- An interrupted run keeps its finished answers; :meth:`Store.find_resumable` finds it again for
  the same inputs, policy and judge, and :meth:`Store.finished_answer_ids` says what to skip.

Schema: SQLite databases (the default, a file in the app directory) are migrated to the current
revision when a :class:`Store` opens them. Any other database must be migrated on purpose
(``auditor db upgrade --db URL``, or ``Store(url, upgrade=True)``); opening one at another
revision raises :class:`StoreError` saying so.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import Engine, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from auditor import __version__
from auditor.calibration import Calibration
from auditor.errors import AuditorError
from auditor.results import AnswerOut, AuditResult, RunInfo
from auditor.settings import app_dir
from auditor.store import _convert as convert
from auditor.store import _queries as queries
from auditor.store._listing import RunRow, run_row
from auditor.store._migrate import current_revision, head_revision, make_engine, upgrade_engine
from auditor.store._queries import JudgeLike
from auditor.store._schema import (
    RUN_STATUSES,
    AnswerRecord,
    CalibrationRecord,
    RunRecord,
    RunTraceRecord,
    TraceRecord,
)
from auditor.text import short_digest
from auditor.trace import Trace

#: Environment variable naming the database; ``--db`` and explicit arguments win over it.
DB_URL_VARIABLE = "AUDITOR_DB_URL"


class StoreError(AuditorError):
    """The store cannot do what was asked (unknown run, schema not migrated, ...)."""


def trace_digest(trace: Trace) -> str:
    """The content digest of a normalised trace: the same spans give the same digest."""
    return hashlib.sha256(trace.model_dump_json().encode("utf-8", "surrogatepass")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


class Store:
    """A connection to the audit store.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path.db``, ``postgresql+psycopg://user@host/db``);
            None means :meth:`default_url`.
        upgrade: migrate the schema to the current revision on opening. None (the default) does
            so for SQLite only; other databases are migrated with ``auditor db upgrade``.

    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, url: str | None = None, *, upgrade: bool | None = None) -> None:
        self.url = url or self.default_url()
        self.engine: Engine = make_engine(self.url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        try:
            if upgrade if upgrade is not None else self.engine.dialect.name == "sqlite":
                self.upgrade()
            else:
                self._check_revision()
        except BaseException:
            self.engine.dispose()
            raise

    @staticmethod
    def default_url() -> str:
        """``AUDITOR_DB_URL`` if set, else ``sqlite:///<app dir>/auditor.db`` (``AUDITOR_HOME`` moves it)."""
        configured = os.environ.get(DB_URL_VARIABLE)
        if configured:
            return configured
        directory = app_dir()
        directory.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{directory / 'auditor.db'}"

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Store({make_url(self.url).render_as_string(hide_password=True)!r})"

    # -- schema ---------------------------------------------------------------------------------

    def upgrade(self) -> str:
        """Migrate the schema to the newest revision; return the revision it is at."""
        if self.engine.dialect.name == "sqlite" and self.engine.url.database:
            Path(self.engine.url.database).parent.mkdir(parents=True, exist_ok=True)
        return upgrade_engine(self.engine)

    def revision(self) -> str | None:
        """The schema revision of the database (None: never migrated)."""
        return current_revision(self.engine)

    def _check_revision(self) -> None:
        found, wanted = self.revision(), head_revision()
        if found != wanted:
            shown = make_url(self.url).render_as_string(hide_password=True)
            raise StoreError(
                f"The database {shown} is at schema revision {found or 'none'}, this auditor needs {wanted}: "
                f"run `auditor db upgrade --db {shown}`."
            )

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    @staticmethod
    def _run(session: Session, run_id: str) -> RunRecord:
        row = session.get(RunRecord, run_id)
        if row is None:
            raise StoreError(f"No run {run_id!r} in the store: `auditor runs` lists the stored runs.")
        return row

    # -- runs -----------------------------------------------------------------------------------

    def begin_run(self, run: RunInfo, policy_text: str | None = None) -> str:
        """Record a new run as ``running`` and return its id (``run.id``).

        Args:
            run: the run's identity: policy and judge, inputs with their digests, start time.
            policy_text: the policy file's text as read, so the run can be reconstructed.
        """
        with self._session() as session:
            session.add(convert.run_record(run, policy_text, __version__, "running"))
        return run.id

    def reopen_run(self, run_id: str) -> None:
        """Mark an interrupted (or failed) run as ``running`` again, to resume it."""
        with self._session() as session:
            row = self._run(session, run_id)
            row.status, row.finished_at = "running", None

    def finish_run(
        self,
        run_id: str,
        summary: dict[str, Any],
        usage: dict[str, Any] | None = None,
        status: str = "finished",
    ) -> None:
        """Close a run with its summary figures and token usage.

        Args:
            status: ``finished``, ``interrupted`` or ``failed``.
        """
        if status not in RUN_STATUSES or status == "running":
            raise ValueError(f"status must be finished, interrupted or failed, not {status!r}")
        with self._session() as session:
            row = self._run(session, run_id)
            row.summary, row.usage, row.status, row.finished_at = summary, usage, status, _now()

    def mark_interrupted(self, run_id: str) -> None:
        """Mark a run interrupted (Ctrl-C, a crash): its saved answers stay, it can be resumed."""
        with self._session() as session:
            row = self._run(session, run_id)
            row.status, row.finished_at = "interrupted", _now()

    # -- traces and answers -----------------------------------------------------------------------

    def record_traces(self, run_id: str, traces: Iterable[Trace]) -> None:
        """Record the traces a run read (each stored once per content digest)."""
        for trace in traces:
            self._link_trace(run_id, trace.trace_id, trace_digest(trace), len(trace.spans))

    def _link_trace(self, run_id: str, trace_id: str, digest: str, spans: int | None) -> str:
        key = short_digest(trace_id, digest, length=32)
        try:
            with self._session() as session:
                if session.get(TraceRecord, key) is None:
                    session.add(
                        TraceRecord(
                            key=key, trace_id=trace_id, digest=digest, spans=spans, first_seen_at=_now()
                        )
                    )
        except IntegrityError:
            pass  # stored meanwhile by another writer: the same row
        with self._session() as session:
            if session.get(RunTraceRecord, (run_id, key)) is None:
                session.add(RunTraceRecord(run_id=run_id, trace_key=key))
        return key

    def _trace_key(self, run_id: str, trace_id: str, digest: str | None) -> str:
        if digest is not None:
            return self._link_trace(run_id, trace_id, digest, None)
        with self._session() as session:
            key = session.scalar(queries.trace_key_in_run(run_id, trace_id))
            inputs = self._run(session, run_id).inputs_digest
        # Not recorded with its spans: the trace is identified by the input files it came from.
        return key or self._link_trace(run_id, trace_id, f"inputs:{inputs}", None)

    def save_answer(self, run_id: str, answer: AnswerOut, trace_digest: str | None = None) -> None:
        """Save one audited answer and commit; saving it again replaces it.

        Args:
            run_id: the run it belongs to (see :meth:`begin_run`).
            answer: the answer with its evidence, claims and verdicts.
            trace_digest: its trace's content digest, when the trace was not given to
                :meth:`record_traces`; by default the trace is identified by the run's inputs.
        """
        trace_key = self._trace_key(run_id, answer.trace_id, trace_digest)
        with self._session() as session:
            self._run(session, run_id)
            existing = session.get(AnswerRecord, (run_id, answer.answer_id))
            if existing is not None:
                position = existing.position
                session.delete(existing)
                session.flush()
            else:
                last = session.scalar(queries.last_answer_position(run_id))
                position = 0 if last is None else last + 1
            session.add(convert.answer_record(run_id, answer, position, trace_key, _now()))

    def save_result(
        self, result: AuditResult, policy_text: str | None = None, usage: dict[str, Any] | None = None
    ) -> str:
        """Save a whole finished result at once (begin, every answer, finish); return the run id."""
        run_id = self.begin_run(result.run, policy_text)
        for answer in result.answers:
            self.save_answer(run_id, answer)
        self.finish_run(run_id, result.summary, usage)
        with self._session() as session:
            self._run(session, run_id).auditor_version = result.auditor_version
        return run_id

    def finished_answer_ids(self, run_id: str) -> set[str]:
        """The answers already saved in a run: what a resumed run skips."""
        with self._session() as session:
            self._run(session, run_id)
            return set(session.scalars(queries.answer_ids(run_id)))

    # -- reading ----------------------------------------------------------------------------------

    def load_run(self, run_id: str) -> AuditResult:
        """The public result of a stored run, as it was saved."""
        with self._session() as session:
            row = session.scalars(queries.run_with_answers(run_id)).one_or_none()
            if row is None:
                raise StoreError(f"No run {run_id!r} in the store: `auditor runs` lists the stored runs.")
            return convert.audit_result(row)

    def run_status(self, run_id: str) -> str:
        """``running``, ``finished``, ``interrupted`` or ``failed``."""
        with self._session() as session:
            return self._run(session, run_id).status

    def policy_text(self, run_id: str) -> str | None:
        """The policy file's text recorded with a run."""
        with self._session() as session:
            return self._run(session, run_id).policy_text

    def list_runs(self, limit: int | None = None) -> list[RunRow]:
        """Stored runs, newest first, with their headline figures."""
        with self._session() as session:
            return [
                run_row(run, saved) for run, saved in session.execute(queries.runs_with_answer_counts(limit))
            ]

    def find_resumable(
        self, input_digests: Iterable[str], policy_sha256: str | None, judge: JudgeLike | None
    ) -> str | None:
        """The latest interrupted run on the same inputs (by digest), policy and judge, or None.

        Args:
            input_digests: the SHA-256 of each input file (order does not matter).
            policy_sha256: the policy's canonical hash.
            judge: the judge identity (kind, model, prompt version); None for evidence-only runs.
        """
        with self._session() as session:
            return session.scalar(queries.latest_resumable(input_digests, policy_sha256, judge))

    # -- calibrations -----------------------------------------------------------------------------

    def save_calibration(self, calibration: Calibration) -> str:
        """Store a calibration (``auditor calibrate``) under its judge identity; return its id."""
        judge = calibration.judge
        with self._session() as session:
            session.add(
                CalibrationRecord(
                    id=calibration.id,
                    created_at=calibration.created_at,
                    auditor_version=calibration.auditor_version,
                    judge_kind=judge.kind,
                    judge_model=judge.model,
                    judge_prompt_version=judge.prompt_version,
                    judge_approximate=judge.approximate,
                    policy_name=calibration.policy.name if calibration.policy else None,
                    policy_sha256=calibration.policy.sha256 if calibration.policy else None,
                    labelled_path=calibration.labelled_path,
                    labelled_sha256=calibration.labelled_sha256,
                    records=calibration.records,
                    body=calibration.model_dump(mode="json"),
                )
            )
        return calibration.id

    def latest_calibration(self, judge: JudgeLike) -> Calibration | None:
        """The newest calibration of this judge (same kind, model and prompt version), or None."""
        with self._session() as session:
            body = session.scalar(queries.latest_calibration_body(judge))
        return None if body is None else Calibration.model_validate(body)


def upgrade(url: str | None = None) -> str:
    """Migrate the database at ``url`` (default: :meth:`Store.default_url`) to head; return the revision."""
    with Store(url, upgrade=True) as store:
        revision = store.revision()
    if revision is None:  # pragma: no cover - upgrade either worked or raised
        raise StoreError("The migration left no revision.")
    return revision


def revision(url: str | None = None) -> tuple[str | None, str]:
    """The database's schema revision (None: never migrated) and the newest the package ships."""
    engine = make_engine(url or Store.default_url())
    try:
        return current_revision(engine), head_revision()
    finally:
        engine.dispose()
