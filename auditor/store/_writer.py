"""The run's writer: one thread that does a run's database writes, so the event loop never waits on them.

An audit hands each finished answer to :meth:`StoreWriter.save_answer` and awaits it; the thread
takes what is queued (up to :data:`BATCH` jobs: answers, and the cache entries the judges wrote
meanwhile; after the first job it sleeps :data:`LINGER` seconds, or until a whole batch is queued,
then takes what came), writes it in **one transaction** and commits, then resolves the awaits. So
LLM requests keep flowing while answers are saved, a run costs one commit per batch instead of
several per answer, and writes to SQLite never contend with each other (one writer). The thread
wakes once per batch, not once per job: each wake-up takes the interpreter lock from the event loop.

Guarantees:

- An awaited :meth:`StoreWriter.save_answer` returns only once its answer is committed: what a run
  reports as saved survives a kill. An answer still queued when the process dies is simply not
  saved, and a resumed run audits it again.
- Jobs commit in the order they were handed over (a cache entry before the answer judged with it;
  a run's traces, :meth:`StoreWriter.record_traces`, before its answers: no answer is committed
  without the trace it names).
- A failed batch fails every job in it with the error (a :class:`~auditor.errors.StoreError` or
  :class:`~auditor.errors.LeaseLostError`), and every later job with the same error: a run learns
  of it at its next save, and :meth:`StoreWriter.close` raises it if nothing did.
- At most :data:`PENDING` answers wait at once; a run with more finished answers waits to hand
  them over (the queue is bounded).
- An in-memory database (one connection, private to this process) is written on the caller's
  thread instead, synchronously.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from sqlalchemy.orm import Session

from auditor.results import AnswerOut
from auditor.store import _write as write
from auditor.store._schema import Base
from auditor.store._store import Store
from auditor.trace import Trace

#: Jobs written in one transaction at most.
BATCH = 64
#: Seconds a batch waits for more jobs after its first (less once :data:`BATCH` jobs are queued,
#: and none when the writer closes). Each transaction costs about 3 ms of CPU besides its rows
#: (the lease renewal, the lookup of answers to replace, a statement per table, the commit): at
#: 0.05 s a dev-set audit committed 4 answers a transaction, 70 to 150 transactions a run.
LINGER = 0.25
#: Answers handed over and not yet committed, at most.
PENDING = 256


@dataclass(frozen=True)
class Upsert:
    """A job writing cache rows (``key`` to the other columns); a batch's upserts into one table
    are one statement."""

    model: type[Base]
    values: Mapping[str, dict[str, Any]]


@dataclass(frozen=True)
class RecordTraces:
    """A job recording the traces a run read (:meth:`Store.record_traces`); a batch writes these
    before its answers."""

    run_id: str
    traces: Sequence[Trace]
    digests: Sequence[str]


@dataclass(frozen=True)
class _Save:
    """A job saving one answer; the saves of a batch are written together (one statement per table)."""

    run_id: str
    owner: str | None
    answer: AnswerOut
    trace_digest: str | None
    if_absent: bool = False
    usage: dict[str, Any] | None = None


class StoreWriter:
    """Writes a run's answers and cache entries on one thread, a batch per transaction.

    Args:
        store: the open store (its engine; the thread takes its own connection from the pool).

    Use it as a context manager, or call :meth:`start` and :meth:`close`.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.batches = 0  # transactions committed
        self.error: BaseException | None = None
        self._queue: queue.SimpleQueue[tuple[Upsert | RecordTraces | _Save, Future[None], int] | None] = (
            queue.SimpleQueue()
        )
        self._inline = store.in_memory
        self._pending: asyncio.Semaphore | None = None
        self._thread = threading.Thread(target=self._work, name="auditor-store-writer", daemon=True)
        self._hurry = threading.Event()  # a whole batch is queued, or the writer is closing: stop lingering
        self._closed = False
        self._submitted = 0  # jobs handed over so far; each job's number is its place in that count
        self._flushed = 0  # jobs up to this number are written without lingering (:meth:`flush`)

    def start(self) -> StoreWriter:
        """Start the thread (nothing to start for an in-memory database)."""
        if not self._inline:
            self._thread.start()
        return self

    def __enter__(self) -> StoreWriter:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(raise_error=exc is None)

    # -- handing work over -------------------------------------------------------------------------

    def submit(self, job: Upsert | RecordTraces | _Save) -> Future[None]:
        """Queue ``job``; the future resolves once its batch is committed, or fails with the batch's error."""
        done: Future[None] = Future()
        if self._closed:
            done.set_exception(RuntimeError("the store writer is closed"))
        elif self.error is not None:
            done.set_exception(self.error)
        elif self._inline:
            self._run([(job, done)])
        else:
            self._submitted += 1
            self._queue.put((job, done, self._submitted))
            if self._queue.qsize() >= BATCH - 1:  # with the job the thread holds: a whole batch
                self._hurry.set()
        return done

    def flush(self) -> None:
        """Write every job handed over so far without waiting for more: the caller has no more to come.

        A run calls it with its last answer, so the last batch is not held back :data:`LINGER`
        seconds for jobs that will never arrive (a quarter of a second at the end of every run).
        """
        self._flushed = self._submitted
        self._hurry.set()

    def record_traces(self, run_id: str, traces: Sequence[Trace], digests: Sequence[str]) -> Future[None]:
        """Record the traces a run read (as :meth:`Store.record_traces`), in the next batch, before
        the answers handed over after it: the run's first requests need not wait for the writes
        (a failure reaches the run at its next save, as any batch's)."""
        if len(digests) != len(traces):
            raise ValueError(f"{len(digests)} digests for {len(traces)} traces")
        return self.submit(RecordTraces(run_id, traces, digests))

    async def save_answer(
        self,
        run_id: str,
        answer: AnswerOut,
        trace_digest: str | None = None,
        *,
        owner: str | None = None,
        if_absent: bool = False,
        last: bool = False,
        usage: dict[str, Any] | None = None,
    ) -> None:
        """Save one answer as :meth:`Store.save_answer` does (``if_absent`` too); returns once committed.

        ``last``: the caller hands over no more answers for now, so the batch is written at once
        (:meth:`flush`).

        Raises:
            StoreError, LeaseLostError: as :meth:`Store.save_answer` (the batch's error).
        """
        if self._pending is None:
            self._pending = asyncio.Semaphore(PENDING)
        async with self._pending:
            saved = self.submit(_Save(run_id, owner, answer, trace_digest, if_absent, usage))
            if last:
                self.flush()
            await asyncio.wrap_future(saved)

    # -- the thread --------------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item[:2]]
            stop = False
            # Let more arrive: a transaction costs about as much as several answers' rows, and an
            # answer's wait for its commit does not hold up the run's next LLM requests. One sleep,
            # then whatever is queued: waiting job by job would wake the thread for each.
            self._hurry.clear()  # then look: a job, a flush or a close after this sets it again
            if not self._closed and item[2] > self._flushed and self._queue.qsize() < BATCH - 1:
                self._hurry.wait(LINGER)
            while len(batch) < BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more[:2])
            self._run(batch)
            if stop:
                return

    def _run(self, batch: Sequence[tuple[Upsert | RecordTraces | _Save, Future[None]]]) -> None:
        # A future whose waiter was cancelled (Ctrl-C) is still written: its answer was finished.
        # The others are marked running, so they can no longer be cancelled under us.
        waited = [done for _, done in batch if done.set_running_or_notify_cancel()]
        if self.error is None:
            try:
                with self.store._session() as session:
                    self._write(session, [job for job, _ in batch])
                self.batches += 1
            except BaseException as err:  # every error reaches the run, through its futures
                self.error = err
        for done in waited:
            if self.error is None:
                done.set_result(None)
            else:
                done.set_exception(self.error)

    def _write(self, session: Session, jobs: Sequence[Upsert | RecordTraces | _Save]) -> None:
        """The batch in one transaction: runs' traces, each table's cache rows, then the answers of each run."""
        upserts: dict[type[Base], dict[str, dict[str, Any]]] = {}
        saves: dict[tuple[str, str | None, bool], list[tuple[AnswerOut, str | None]]] = {}
        usages: dict[str, dict[str, Any]] = {}
        for job in jobs:
            if isinstance(job, RecordTraces):  # first: the answers after it name these traces
                self.store.write_traces(session, job.run_id, job.traces, job.digests)
            elif isinstance(job, Upsert):
                upserts.setdefault(job.model, {}).update(job.values)  # a key written twice: the later
            else:
                saves.setdefault((job.run_id, job.owner, job.if_absent), []).append(
                    (job.answer, job.trace_digest)
                )
                if job.usage is not None:
                    usages[job.answer.answer_id] = job.usage
        for model, values in upserts.items():
            write.upsert(session, model, values)
        for (run_id, owner, if_absent), answers in saves.items():
            self.store.write_answers(session, run_id, answers, owner, if_absent=if_absent, usages=usages)

    def close(self, *, raise_error: bool = True) -> None:
        """Write what is queued, stop the thread; then raise the first error, if any (``raise_error``)."""
        if not self._closed:
            self._closed = True
            if self._thread.is_alive():
                self._queue.put(None)
                self._hurry.set()
                self._thread.join()
        if raise_error and self.error is not None:
            raise self.error
