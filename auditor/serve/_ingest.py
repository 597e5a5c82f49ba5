"""The ingest worker: splits acknowledged request bodies into spans, behind the answers.

The receiver commits each body (:meth:`auditor.store.BodyQueue.put`) and answers; this worker
claims the stored bodies oldest first, :data:`BATCH` at a time, reads each with the adapter that
checked it (:meth:`auditor.trace.SpanReceiver.receive`, the slow half: every span turned into its
one-span OTLP JSON record) and stores their spans while deleting the bodies
(:meth:`auditor.store.BodyQueue.ingest_many`). It wakes as soon as the server stores a body, and
polls for bodies that other replicas (or a process killed before reading them) left behind.

Reading and storing overlap: a thread stores one batch's spans while the process reads the next
(the store's driver lets go of the interpreter lock while the database works), so a batch costs
the slower of the two rather than their sum. The bodies of a batch are deleted only once its spans
are committed, so a kill at any point leaves them to be read again.

A process of its own, not a thread: reading is CPU-bound Python, and a thread doing it holds the
interpreter lock the acknowledgements need (measured: ack p50 149 ms with 4 clients with the
reader as a thread, every request waiting out switch intervals). The process is started with
``spawn`` (the server already runs threads), dies with the server (``PR_SET_PDEATHSIG`` on Linux,
and a check of its parent everywhere), and needs nothing from it but the database URL: a server
killed with ``kill -9`` takes its reader with it, and the next start reads what was left.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Sequence
from multiprocessing.synchronize import Event

from auditor.errors import AuditorError
from auditor.serve._otlp import ADAPTERS
from auditor.store import Body, BodyQueue, Store, new_owner
from auditor.trace import ReceivedSpan, SpanReceiver, installed_adapters

logger = logging.getLogger(__name__)

#: Seconds between looks for bodies the server did not announce (another replica's, a dead one's).
POLL = 0.5
#: Seconds the server waits for the reader to stop before it is terminated.
STOP_TIMEOUT = 5.0
#: Added to the reader's nice value: where the two compete for a core, the acknowledgements a client
#: waits for go first, and the reading behind them takes what is left (the backlog's bound and its
#: 429s keep what waits finite).
NICENESS = 5
#: Bodies claimed, read and stored together: one claim and one commit for several bodies (a claim
#: a body competed with the receiver's commits once per body).
BATCH = 4


def span_readers() -> dict[str, SpanReceiver]:
    """The installed adapters that read OTLP request bodies, by adapter name."""
    found = {item.name: item.adapter for item in installed_adapters()}
    readers: dict[str, SpanReceiver] = {}
    for name in ADAPTERS.values():
        adapter = found.get(name)
        if isinstance(adapter, SpanReceiver):
            readers[name] = adapter
    return readers


class IngestWorker:
    """The reader processes (``readers`` of them, ``AUDITOR_SERVE_READERS``), started by
    :meth:`start` and stopped by :meth:`stop`. Each claims bodies of its own, as replicas' readers
    do: more readers use more cores."""

    def __init__(self, db_url: str, lease: float, readers: int = 1) -> None:
        context = multiprocessing.get_context("spawn")
        self.stored = context.Event()  # set by the receiver after each stored body
        self._stop = context.Event()
        self._processes = [
            context.Process(
                target=_main,
                args=(db_url, lease, os.getpid(), self.stored, self._stop),
                name=f"otlp-ingest-{n}",
                daemon=True,
            )
            for n in range(max(1, readers))
        ]

    def start(self) -> IngestWorker:
        for process in self._processes:
            process.start()
        return self

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop reading; a body cut off mid-read is read again by the next start."""
        self._stop.set()
        self.stored.set()
        for process in self._processes:
            process.join(timeout)
            if process.is_alive():
                process.terminate()
                process.join(timeout)


def _die_with_parent() -> None:
    """Ask Linux to kill this process when the server dies (``kill -9`` included)."""
    with contextlib.suppress(Exception):  # not Linux, or no libc: the parent check below covers it
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _main(db_url: str, lease: float, parent: int, stored: Event, stop: Event) -> None:
    _die_with_parent()
    with contextlib.suppress(AttributeError, OSError):  # not on this system: same priority, still correct
        os.nice(NICENESS)
    readers = span_readers()
    owner = new_owner()
    with Store(db_url, background_checkpoints=True) as store:
        bodies = BodyQueue(store)
        # One batch read ahead at most: the claims it holds stay few, and memory bounded.
        ready: queue.Queue[list[Read] | None] = queue.Queue(maxsize=1)
        storer = threading.Thread(target=_store_batches, args=(bodies, ready, owner), name="store-spans")
        storer.start()
        try:
            while not stop.is_set() and os.getppid() == parent:
                stored.clear()
                try:
                    held = bodies.claim_many(owner, lease, BATCH)
                except AuditorError as err:  # the database briefly unavailable: try again at the next poll
                    logger.warning("could not claim a received body: %s", err)
                    held = []
                if not held:
                    stored.wait(POLL)
                    continue
                if read := _read(readers, held):
                    _hand_over(ready, read, storer)
        finally:
            if storer.is_alive():
                ready.put(None)
                storer.join()


#: A body and the spans read from it.
Read = tuple[Body, Sequence[ReceivedSpan]]


def _store_batches(bodies: BodyQueue, ready: queue.Queue[list[Read] | None], owner: str) -> None:
    """Store each batch :func:`_read` hands over, until it hands over None."""
    while (read := ready.get()) is not None:
        _store(bodies, read, owner)


def _hand_over(ready: queue.Queue[list[Read] | None], read: list[Read], storer: threading.Thread) -> None:
    """Queue ``read`` for the storer once it takes the batch before; fail if it has died (its
    error is logged: the process ends and the server's next start reads the bodies again)."""
    while True:
        try:
            ready.put(read, timeout=POLL)
            return
        except queue.Full:
            if not storer.is_alive():
                raise RuntimeError("the thread storing received spans has stopped") from None


def _read(readers: dict[str, SpanReceiver], held: list[Body]) -> list[Read]:
    read: list[Read] = []
    for body in held:
        reader = readers.get(body.adapter)
        if reader is None:  # stored by a server with an adapter this one lacks: left for it
            logger.warning(
                "received body %s needs the %s adapter, which is not installed", body.id, body.adapter
            )
            continue
        batch = reader.receive(body.body)
        if batch.unreadable is not None:  # it passed the check: only an adapter change gets here
            logger.warning("received body %s is no longer readable: %s", body.id, batch.unreadable)
        read.append((body, batch.spans))
    return read


def _store(bodies: BodyQueue, read: list[Read], owner: str) -> None:
    try:
        stored = bodies.ingest_many(read, owner)
    except AuditorError as err:  # the store is down: the claims run out, the bodies are read again
        logger.warning("could not store the spans of received bodies %s: %s", _ids(read), err)
        return
    for (body, _), new in zip(read, stored, strict=True):
        if new is None:
            logger.warning("received body %s was taken over by another worker", body.id)


def _ids(read: list[Read]) -> str:
    return ", ".join(str(body.id) for body, _ in read)
