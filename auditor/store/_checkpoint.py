"""WAL checkpoints off the writers' path, for a SQLite store under a steady stream of writes.

SQLite copies its write-ahead log back into the database (a *checkpoint*, two ``fsync`` calls)
inside whichever commit finds the log past ``wal_autocheckpoint`` pages (1,000 by default). Under
``auditor serve``'s load that is every third body the ingest worker stores, and now and then the
receiver's own commit, which the client waits for: measured on 510-span bodies, storing the
spans took 28.5 ms a body with checkpoints in the commits and 14.3 ms without.

:class:`WalCheckpointer` runs ``PRAGMA wal_checkpoint(PASSIVE)`` from a thread of its own every
:data:`INTERVAL` seconds. A passive checkpoint never waits for a writer or a reader, and a commit
that finds the log already copied has nothing left to do, so the commits stay short. The store's
connections keep an automatic checkpoint at :data:`SAFETY_PAGES` (64 MB of log): should the
thread fall behind or stop, the log still cannot grow without bound.

Durability is unchanged: a commit is in the log before it returns, and a checkpoint only copies
what is committed (``synchronous=NORMAL``: a killed process loses nothing committed).
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

logger = logging.getLogger(__name__)

#: Seconds between checkpoints.
INTERVAL = 0.25
#: Log pages past which a commit checkpoints itself anyway (4 KB pages: 64 MB).
SAFETY_PAGES = 16384


class WalCheckpointer:
    """A daemon thread checkpointing the SQLite logs of its engines every ``interval`` seconds
    until :meth:`stop` (an engine added later, by :meth:`add`, from the next pass on)."""

    def __init__(self, engine: Engine, interval: float = INTERVAL) -> None:
        self.engines, self.interval = [engine], interval
        self.checkpoints = 0  # passes that ran (a busy database skips one quietly)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpoint", daemon=True)

    def start(self) -> WalCheckpointer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def add(self, engine: Engine) -> None:
        self.engines = [*self.engines, engine]

    def checkpoint(self, engine: Engine) -> None:
        """One passive checkpoint (nothing is waited for: frames in use stay for the next pass)."""
        with engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        self.checkpoints += 1

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for engine in self.engines:
                try:
                    self.checkpoint(engine)
                except (DBAPIError, OSError) as err:  # busy or briefly away: the next pass tries again
                    logger.debug("WAL checkpoint skipped: %s", err)
