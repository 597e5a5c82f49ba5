"""The SQL store: audit runs, the answers they judged, and enough to rebuild the public result.

Guarantees:

- :meth:`Store.load_run` rebuilds the :class:`~auditor.results.AuditResult` that was saved, field
  for field, so any stored run can be re-rendered as a report.
- :meth:`Store.save_answer` commits each answer on its own: a crash keeps every answer saved
  before it, and saving the same answer again replaces it (no duplicate rows).
- A trace is stored once per (``trace_id``, content digest), however many runs read it.
- An interrupted run keeps its finished answers; :meth:`Store.find_resumable` finds it again for
  the same inputs, policy and judge, and :meth:`Store.finished_answer_ids` says what to skip. So
  does a running run whose lease ran out (its process was killed: :mod:`._lease`);
  :meth:`Store.claim_run` hands it to one process only, and a writer that lost its lease is
  refused (:class:`~auditor.errors.LeaseLostError`) instead of writing beside the new owner.
- Every failure of the database is a one-line :class:`StoreError` naming it (:mod:`._translate`);
  ``create=False`` (read-only commands) never creates a database or a folder.

Schema: SQLite databases (the default, a file in the app directory) are migrated to the current
revision when a :class:`Store` opens them. Any other database must be migrated on purpose
(``auditor db upgrade --db URL``, or ``Store(url, upgrade=True)``); opening one at another
revision raises :class:`StoreError` saying so. Migrations run under a lock (:mod:`._migrate`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from auditor.calibration import Calibration
from auditor.errors import StoreError
from auditor.results import AnswerOut, AuditResult
from auditor.settings import SETTINGS, app_dir, setting
from auditor.store import _convert as convert
from auditor.store import _queries as queries
from auditor.store._listing import RunRow, run_row
from auditor.store._migrate import (
    check_at_head,
    check_sqlite_path,
    checked_revision,
    current_revision,
    head_revision,
    is_in_memory,
    make_engine,
    sqlite_file,
    upgrade_engine,
)
from auditor.store._queries import JudgeLike
from auditor.store._runs import RunLedger, now
from auditor.store._schema import (
    AnswerRecord,
    CalibrationRecord,
    RunTraceRecord,
    TraceRecord,
)
from auditor.store._translate import parse_url, shown, store_errors
from auditor.text import short_digest
from auditor.trace import Trace

#: Environment variable naming the database; ``--db`` and explicit arguments win over it.
DB_URL_VARIABLE = SETTINGS["db_url"][0]


def trace_digest(trace: Trace) -> str:
    """The content digest of a normalised trace: the same spans give the same digest."""
    return hashlib.sha256(trace.model_dump_json().encode("utf-8", "surrogatepass")).hexdigest()


class Store(RunLedger):
    """A connection to the audit store.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path.db``, ``postgresql+psycopg://user@host/db``);
            None means :meth:`default_url`.
        upgrade: migrate the schema to the current revision on opening. None (the default) does
            so for SQLite only; other databases are migrated with ``auditor db upgrade``.
        create: False for readers: a SQLite file that does not exist is a :class:`StoreError`,
            and no file or folder is made.

    Use it as a context manager, or call :meth:`close`.

    Raises:
        StoreError: the database cannot be opened or is at another schema revision (one line
            naming it, password masked, and what to do).
    """

    def __init__(self, url: str | None = None, *, upgrade: bool | None = None, create: bool = True) -> None:
        self.url = url or self.default_url()
        parsed = parse_url(self.url)
        check_sqlite_path(parsed, create=create)
        self.engine: Engine = make_engine(parsed)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        try:
            with store_errors(self.url):
                if upgrade if upgrade is not None else self.engine.dialect.name == "sqlite":
                    upgrade_engine(self.engine)
                else:
                    check_at_head(self.engine)
        except BaseException:
            self.engine.dispose()
            raise

    @staticmethod
    def default_url() -> str:
        """``AUDITOR_DB_URL`` if set, else ``sqlite:///<app dir>/auditor.db`` (``AUDITOR_HOME`` moves it)."""
        configured = setting("db_url")
        if configured:
            return configured
        return f"sqlite:///{app_dir() / 'auditor.db'}"

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
        return f"Store({shown(self.url)!r})"

    @property
    def in_memory(self) -> bool:
        """An in-memory SQLite database, private to this process."""
        return is_in_memory(self.engine.url)

    # -- schema ---------------------------------------------------------------------------------

    def upgrade(self) -> str:
        """Migrate the schema to the newest revision; return the revision it is at."""
        with store_errors(self.url):
            return upgrade_engine(self.engine)

    def revision(self) -> str | None:
        """The schema revision of the database (None: never migrated)."""
        with store_errors(self.url):
            return current_revision(self.engine)

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
                            key=key, trace_id=trace_id, digest=digest, spans=spans, first_seen_at=now()
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

    def save_answer(
        self, run_id: str, answer: AnswerOut, trace_digest: str | None = None, *, owner: str | None = None
    ) -> None:
        """Save one audited answer and commit; saving it again replaces it.

        Args:
            run_id: the run it belongs to (see :meth:`begin_run`).
            answer: the answer with its evidence, claims and verdicts.
            trace_digest: its trace's content digest, when the trace was not given to
                :meth:`record_traces`; by default the trace is identified by the run's inputs.
            owner: the lease holder: the save renews its lease, and is refused
                (:class:`~auditor.errors.LeaseLostError`) once another process holds the run.
        """
        trace_key = self._trace_key(run_id, answer.trace_id, trace_digest)
        with self._session() as session:
            self._hold(session, run_id, owner)
            existing = session.get(AnswerRecord, (run_id, answer.answer_id))
            if existing is not None:
                position = existing.position
                session.delete(existing)
                session.flush()
            else:
                last = session.scalar(queries.last_answer_position(run_id))
                position = 0 if last is None else last + 1
            session.add(convert.answer_record(run_id, answer, position, trace_key, now()))

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
    """The database's schema revision (None: never migrated) and the newest the package ships.

    It only reads: a SQLite file that does not exist is at no revision, and is not created.
    """
    where = url or Store.default_url()
    parsed = parse_url(where)
    path = sqlite_file(parsed)
    if path is not None and not path.exists():
        return None, head_revision()
    check_sqlite_path(parsed, create=False)
    engine = make_engine(parsed)
    try:
        with store_errors(where):
            return checked_revision(engine), head_revision()
    finally:
        engine.dispose()
