"""The ingest worker: splits acknowledged request bodies into spans, behind the answers.

The receiver commits each body (:meth:`auditor.store.BodyQueue.put`) and answers; this thread
claims the stored bodies oldest first, reads each with the adapter that checked it
(:meth:`auditor.trace.SpanReceiver.receive`, the slow half: every span turned into its one-span
OTLP JSON record) and stores its spans while deleting the body, in one transaction
(:meth:`auditor.store.BodyQueue.ingest`). It wakes as soon as this process stores a body, and
polls for bodies that other replicas (or a process killed before reading them) left behind.

One thread, not a pool: the work is CPU-bound Python, and a second thread would only take turns
with the first (and with the requests being answered) under the GIL.
"""

from __future__ import annotations

import logging
import threading

from auditor.errors import AuditorError
from auditor.serve._config import ServeConfig
from auditor.serve._receiver import Receiver
from auditor.store import Body, BodyQueue, new_owner
from auditor.trace import SpanReceiver

logger = logging.getLogger(__name__)

#: Seconds between looks for bodies no request of this process announced.
POLL = 0.5


class IngestWorker:
    """One thread reading stored bodies into spans until :meth:`stop`."""

    def __init__(
        self, config: ServeConfig, bodies: BodyQueue, readers: dict[str, SpanReceiver], receiver: Receiver
    ) -> None:
        self.config, self.bodies, self.receiver = config, bodies, receiver
        self.readers = readers  # by adapter name
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="otlp-ingest", daemon=True)

    def start(self) -> IngestWorker:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop claiming; wait up to ``timeout`` for the body in hand (a cut one is read next time)."""
        self._stop.set()
        self.receiver.stored.set()
        self._thread.join(timeout)

    def _work(self) -> None:
        owner = new_owner()
        while not self._stop.is_set():
            self.receiver.stored.clear()
            try:
                body = self.bodies.claim(owner, self.config.lease)
            except AuditorError as err:  # the database briefly unavailable: try again at the next poll
                logger.warning("could not claim a received body: %s", err)
                body = None
            if body is None:
                self.receiver.stored.wait(POLL)
                continue
            self._ingest(body, owner)

    def _ingest(self, body: Body, owner: str) -> None:
        reader = self.readers.get(body.adapter)
        if reader is None:  # stored by a server with an adapter this one lacks: left for it
            logger.warning(
                "received body %s needs the %s adapter, which is not installed", body.id, body.adapter
            )
            return
        try:
            batch = reader.receive(body.body)
            if batch.unreadable is not None:  # it passed the check: only an adapter change gets here
                logger.warning("received body %s is no longer readable: %s", body.id, batch.unreadable)
            if self.bodies.ingest(body, owner, batch.spans) is None:
                logger.warning("received body %s was taken over by another worker", body.id)
        except AuditorError as err:  # the store is down: the claim runs out, the body is read again
            logger.warning("could not store the spans of received body %s: %s", body.id, err)
