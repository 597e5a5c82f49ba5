"""The SQL store: audit runs, the answers they judged, and enough to rebuild the public result.

Guarantees:

- :meth:`Store.load_run` rebuilds the :class:`~auditor.results.AuditResult` that was saved, field
  for field, so any stored run can be re-rendered as a report.
- :meth:`Store.save_answer` commits each answer in one transaction (the run's writer,
  :class:`~auditor.store.StoreWriter`, commits a batch of them in one): a crash keeps every answer
  committed before it, and saving the same answer again replaces it (no duplicate rows).
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
from collections.abc import Collection, Mapping, Sequence
from types import TracebackType
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from auditor.calibration import Calibration
from auditor.errors import StoreError, UsageError
from auditor.results import AnswerOut, AuditResult, RunInfo
from auditor.settings import SETTINGS, app_dir, setting
from auditor.store import _convert as convert
from auditor.store import _kept as kept
from auditor.store import _queries as queries
from auditor.store import _rollups as rollups
from auditor.store import _write as write
from auditor.store._bodies_file import bodies_engine
from auditor.store._checkpoint import SAFETY_PAGES, WalCheckpointer
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
from auditor.store._schema import CalibrationRecord
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
        background_checkpoints: on a SQLite file, copy the write-ahead log back from a thread of
            this store's own instead of inside the commits (:mod:`._checkpoint`): for a process
            that commits without pause, as ``auditor serve`` does. Ignored on other databases.

    Use it as a context manager, or call :meth:`close`.

    Raises:
        StoreError: the database cannot be opened or is at another schema revision (one line
            naming it, password masked, and what to do).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        upgrade: bool | None = None,
        create: bool = True,
        background_checkpoints: bool = False,
    ) -> None:
        self.url = url or self.default_url()
        parsed = parse_url(self.url)
        check_sqlite_path(parsed, create=create)
        background = background_checkpoints and sqlite_file(parsed) is not None
        self._autocheckpoint = SAFETY_PAGES if background else None
        self.engine: Engine = make_engine(parsed, wal_autocheckpoint=self._autocheckpoint)
        self._checkpointer: WalCheckpointer | None = None
        self._bodies_engine: Engine | None = None
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._linked: set[tuple[str, str]] = set()  # (run id, trace key) pairs written by this store
        self._positions: dict[str, int] = {}  # the next answer position of each run this store writes
        try:
            with store_errors(self.url):
                if upgrade if upgrade is not None else self.engine.dialect.name == "sqlite":
                    upgrade_engine(self.engine)
                else:
                    check_at_head(self.engine)
        except BaseException:
            self.engine.dispose()
            raise
        if background:
            self._checkpointer = WalCheckpointer(self.engine).start()

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
        """Release the connections (and stop the checkpoints' thread, if it runs)."""
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        if self._bodies_engine is not None and self._bodies_engine is not self.engine:
            self._bodies_engine.dispose()
        self.engine.dispose()

    @property
    def bodies_engine(self) -> Engine:
        """Where acknowledged request bodies wait to be read (:class:`~auditor.store.BodyQueue`):
        this database, or for a SQLite file a database of their own beside it (:mod:`._bodies`)."""
        if self._bodies_engine is None:
            with store_errors(self.url):
                self._bodies_engine = bodies_engine(self.engine, self._autocheckpoint)
            if self._checkpointer is not None and self._bodies_engine is not self.engine:
                self._checkpointer.add(self._bodies_engine)
        return self._bodies_engine

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

    def record_traces(
        self,
        run_id: str,
        traces: Sequence[Trace],
        digests: Sequence[str] | None = None,
        *,
        positions: Sequence[int] | None = None,
    ) -> None:
        """Record the traces a run read, in this order, with their content, in one transaction.

        Each trace is stored once per content digest, and so is its content (compressed JSON,
        what :meth:`load_traces` reads back): a trace already kept is not written again.

        Args:
            digests: each trace's content digest (:func:`trace_digest`), in the same order, when
                the caller has them already; computed otherwise.
            positions: each trace's place in the run's read order, when the run's traces are
                recorded in parts (a distributed run's shards); by default this call's order.
        """
        if digests is None:
            digests = [trace_digest(t) for t in traces]
        if len(digests) != len(traces) or (positions is not None and len(positions) != len(traces)):
            raise ValueError(f"{len(digests)} digests and positions for {len(traces)} traces")
        with self._session() as session:
            self.write_traces(session, run_id, traces, digests, positions=positions)

    def write_traces(
        self,
        session: Session,
        run_id: str,
        traces: Sequence[Trace],
        digests: Sequence[str],
        *,
        positions: Sequence[int] | None = None,
    ) -> None:
        """:meth:`record_traces` in ``session``'s transaction, uncommitted (what the run's writer,
        :class:`~auditor.store.StoreWriter`, runs). Writing the same traces again changes nothing."""
        keys = [self._key(t.trace_id, digest) for t, digest in zip(traces, digests, strict=True)]
        linked = [
            (key, t.trace_id, digest, len(t.spans))
            for key, t, digest in zip(keys, traces, digests, strict=True)
        ]
        write.link_traces(session, run_id, linked, ordered=True, positions=positions)
        kept.keep(session, list(zip(keys, traces, strict=True)))
        self._linked.update((run_id, key) for key in keys)

    def load_traces(self, run_id: str, trace_ids: Collection[str] | None = None) -> list[Trace]:
        """The traces a stored run read, from their kept content, in the order it read them.

        Read and decoded in batches (one query per :data:`~auditor.store._write.CHUNK` of
        ``trace_ids``, rows fetched a batch at a time), so a subset of a large run costs only itself.

        Args:
            run_id: the run's full id (:func:`~auditor.store.resolve_run` takes a prefix).
            trace_ids: only these traces (ids the run did not read are left out); None: all.

        Raises:
            StoreError: no such run, or it was stored without its traces' content (before the
                store kept it): one line naming the run and saying to audit its files again.
        """
        with self._session() as session:
            self._run(session, run_id)
            kept.check_kept(session, run_id)
            found = list(kept.iter_kept(session, run_id, trace_ids))
        if trace_ids is not None:
            found.sort(key=lambda item: item[0])  # read in groups of ids: back into read order
        return [trace for _, trace in found]

    def run_info(self, run_id: str) -> RunInfo:
        """The run's identity as recorded: policy, judge, inputs with their digests, problems."""
        with self._session() as session:
            return convert.run_info(self._run(session, run_id))

    def reaudit_of(self, run_id: str) -> str | None:
        """The run this one re-audited (``auditor reaudit``), or None."""
        with self._session() as session:
            return self._run(session, run_id).reaudit_of

    @staticmethod
    def _key(trace_id: str, digest: str) -> str:
        return short_digest(trace_id, digest, length=32)

    def _trace_key(self, session: Session, run_id: str, trace_id: str, digest: str | None) -> str:
        if digest is None:
            key = session.scalar(queries.trace_key_in_run(run_id, trace_id))
            if key is not None:
                return key
            # Not recorded with its spans: the trace is identified by the input files it came from.
            digest = f"inputs:{session.scalar(queries.inputs_digest(run_id))}"
        key = self._key(trace_id, digest)
        if (run_id, key) not in self._linked:
            write.link_traces(session, run_id, [(key, trace_id, digest, None)])
            self._linked.add((run_id, key))
        return key

    def save_answer(
        self,
        run_id: str,
        answer: AnswerOut,
        trace_digest: str | None = None,
        *,
        owner: str | None = None,
        if_absent: bool = False,
        usage: dict[str, Any] | None = None,
    ) -> None:
        """Save one audited answer and commit (one transaction); saving it again replaces it.

        Args:
            run_id: the run it belongs to (see :meth:`begin_run`).
            answer: the answer with its evidence, claims and verdicts.
            trace_digest: its trace's content digest, when the trace was not given to
                :meth:`record_traces`; by default the trace is identified by the run's inputs.
            owner: the lease holder: the save renews its lease, and is refused
                (:class:`~auditor.errors.LeaseLostError`) once another process holds the run.
            if_absent: an answer the run already holds is left as it is: saving it again is a
                no-op (a retried task of a distributed run re-saves nothing).
            usage: the judge usage the answer cost, kept with it (:meth:`answer_usages`).
        """
        with self._session() as session:
            self.write_answers(
                session,
                run_id,
                [(answer, trace_digest)],
                owner,
                if_absent=if_absent,
                usages={answer.answer_id: usage} if usage is not None else None,
            )

    def write_answers(
        self,
        session: Session,
        run_id: str,
        answers: Sequence[tuple[AnswerOut, str | None]],
        owner: str | None = None,
        *,
        if_absent: bool = False,
        usages: Mapping[str, dict[str, Any]] | None = None,
    ) -> None:
        """Write answers (each with its trace digest or None) in ``session``'s transaction, uncommitted;
        ``usages``: the judge usage of some of them, by answer id.

        What :meth:`save_answer` and the run's writer (:class:`~auditor.store.StoreWriter`) share:
        the lease is renewed (or :class:`~auditor.errors.LeaseLostError`), an answer saved before is
        replaced at its position (``if_absent``: left as it is), a new one goes after the last.
        """
        self._renew(session, run_id, owner)
        latest = {a.answer_id: (a, digest) for a, digest in answers}  # saved twice: the later wins
        if if_absent:
            for answer_id in write.saved_answers(session, run_id, list(latest)):
                del latest[answer_id]
        replaced = rollups.stored(session, run_id, list(latest))
        existing = write.remove_answers(session, run_id, list(latest))
        records = []
        for answer, digest in latest.values():
            trace_key = self._trace_key(session, run_id, answer.trace_id, digest)
            position = existing.get(answer.answer_id)
            if position is None:
                position = self._next_position(session, run_id)
            usage = (usages or {}).get(answer.answer_id)
            records.append(convert.answer_record(run_id, answer, position, trace_key, now(), usage))
        write.insert_answers(session, records)
        # The figures per hour and day follow in the same transaction (after the inserts: on SQLite
        # this transaction holds the write lock by then).
        # Each answer's counts, computed once for its row and its rollup rows.
        counts = {r.answer["answer_id"]: r.answer["counts"] for r in records}
        rollups.record(session, run_id, [answer for answer, _ in latest.values()], replaced, counts)

    def _next_position(self, session: Session, run_id: str) -> int:
        # Counted here after the first read: a run has one writer at a time (its lease holder).
        if run_id not in self._positions:
            last = session.scalar(queries.last_answer_position(run_id))
            self._positions[run_id] = 0 if last is None else last + 1
        position = self._positions[run_id]
        self._positions[run_id] = position + 1
        return position

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

    def answer_usages(self, run_id: str) -> list[dict[str, Any]]:
        """The judge usage kept with the run's answers (those saved with one), in no order."""
        with self._session() as session:
            self._run(session, run_id)
            return [usage for usage in session.scalars(queries.answer_usages(run_id)) if usage is not None]

    def finished_answer_ids(self, run_id: str) -> set[str]:
        """The answers already saved in a run: what a resumed run skips."""
        with self._session() as session:
            self._run(session, run_id)
            return set(session.scalars(queries.answer_ids(run_id)))

    def reorder_answers(self, run_id: str, answer_ids: Sequence[str], *, owner: str | None = None) -> None:
        """Number a run's answers in this order (its report and ``load_run`` follow it), in one
        transaction: a distributed run's workers save them in completion order.

        Args:
            owner: the lease holder (:class:`~auditor.errors.LeaseLostError` if another process
                took the run over); None writes regardless.
        """
        with self._session() as session:
            self._renew(session, run_id, owner)
            write.number_answers(session, run_id, answer_ids)
        self._positions.pop(run_id, None)

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

    def calibrations(self) -> list[Calibration]:
        """Every stored calibration, newest first."""
        with self._session() as session:
            bodies = session.scalars(queries.calibration_bodies()).all()
        return [Calibration.model_validate(body) for body in bodies]

    def find_calibration(self, id_prefix: str) -> Calibration:
        """The stored calibration whose id starts with ``id_prefix`` (``--calibration ID``).

        Raises:
            UsageError: none or several match (the message lists what is stored).
        """
        stored = self.calibrations()
        found = [c for c in stored if c.id.startswith(id_prefix.strip())] if id_prefix.strip() else []
        if len(found) == 1:
            return found[0]
        listed = "; ".join(c.label for c in stored[:5]) or "none stored (run `auditor calibrate`)"
        what = "no calibration" if not found else f"{len(found)} calibrations"
        raise UsageError(f"--calibration {id_prefix}: {what} with an id starting so. Stored: {listed}.")


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
