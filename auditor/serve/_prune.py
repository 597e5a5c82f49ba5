"""The retention policy applied while serving: :func:`auditor.store.prune` every so often.

When any ``AUDITOR_RETAIN_*`` age is set, a thread prunes the store once at start-up and then
every ``AUDITOR_SERVE_PRUNE_EVERY`` seconds, logging what it pruned and what it kept and why (the
same report as ``auditor db prune``). Replicas may all prune: each prune is one transaction, and
a second one finds nothing left to delete.
"""

from __future__ import annotations

import logging
import threading

from auditor.errors import AuditorError
from auditor.serve._config import ServeConfig
from auditor.store import Store, prune

logger = logging.getLogger(__name__)


class Pruner:
    """A thread pruning ``store`` by ``config.retention`` every ``config.prune_every`` seconds."""

    def __init__(self, config: ServeConfig, store: Store) -> None:
        self.config, self.store = config, store
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="retention", daemon=True)

    def start(self) -> Pruner:
        if not self.config.retention.empty:
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                report = prune(self.store, self.config.retention)
            except AuditorError as err:  # the database briefly unavailable: next time
                logger.warning("could not prune the store: %s", err)
            else:
                pruned = ", ".join(f"{n} {what}" for what, n in report.pruned.items() if n)
                if pruned:
                    logger.info("pruned %s", pruned)
                for skip in report.skipped:
                    logger.info("kept %d %s: %s", skip.count, skip.what, skip.why)
            self._stop.wait(self.config.prune_every)
