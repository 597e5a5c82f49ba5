"""The background audits: a bounded pool of worker threads, each auditing one ready trace at a time.

A worker claims a ready trace from the store (:meth:`auditor.store.Intake.claim`, under a lease it
renews with :class:`auditor.store.RunLease` while it works), writes the trace's stored spans as one
OTLP JSON Lines file and audits that file with :func:`auditor.run.audit_async`, exactly as
``auditor audit FILE --format otlp-json`` would: same pipeline, same store, one run per audit pass.
The run's finishing transaction also marks the trace audited
(:meth:`auditor.store.Intake.finish_hook`), so results and "done" commit together. A worker
killed mid-audit leaves its trace claimed until the lease runs out; the next claim resumes it,
and the audit resumes the interrupted run (same file, same inputs digest), so no answer is
audited twice. An audit that fails because the judge's endpoint or the database is down
is tried again once its lease runs out; any other failure is recorded on the audit pass.

Threads, not tasks on the server's event loop: an audit is CPU-bound work (the offline judge) with
an event loop of its own, and must not hold up the requests being acknowledged.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
import threading
from pathlib import Path

from auditor.errors import AuditorError, LLMError, StoreError
from auditor.llm import run_sync
from auditor.policy import Policy
from auditor.run import audit_async
from auditor.serve._config import ServeConfig
from auditor.store import Claim, Intake, RunLease, new_owner

logger = logging.getLogger(__name__)

#: The adapter that reads the files the workers write (:class:`auditor.trace.ReceivedSpan`).
FILE_FORMAT = "otlp-json"


class AuditWorkers:
    """``config.workers`` threads auditing ready traces until :meth:`stop`."""

    def __init__(self, config: ServeConfig, intake: Intake, policy: Policy) -> None:
        self.config, self.intake, self.policy = config, intake, policy
        self._stop = threading.Event()
        self._dir = Path(tempfile.mkdtemp(prefix="auditor-serve-"))
        self._threads = [
            threading.Thread(target=self._work, name=f"audit-worker-{i}", daemon=True)
            for i in range(config.workers)
        ]

    def start(self) -> AuditWorkers:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop claiming; wait up to ``timeout`` for audits in flight (a cut one resumes next time)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        shutil.rmtree(self._dir, ignore_errors=True)

    def _work(self) -> None:
        owner = new_owner()
        while not self._stop.is_set():
            try:
                claim = self.intake.claim(
                    owner, quiet=self.config.quiet, root_wait=self.config.root_wait, lease=self.config.lease
                )
            except AuditorError as err:  # the database briefly unavailable: try again at the next poll
                logger.warning("could not claim a trace: %s", err)
                claim = None
            if claim is None:
                self._stop.wait(self.config.poll)
                continue
            self._audit(claim, owner)

    def _audit(self, claim: Claim, owner: str) -> None:
        path = self._dir / f"{claim.trace_id}.otlp.jsonl"
        content = "".join(record + "\n" for record in claim.records).encode("utf-8")
        path.write_bytes(content)
        run_id: str | None = None
        error: str | None = None
        # Set by the hook in the run's finishing transaction: the trace is marked audited there.
        recorded: list[bool] = []
        try:
            # A worker that died after its audit was committed but before the trace was marked done:
            # that audit stands (the same spans, the same policy), it is recorded, not repeated.
            run_id = self.intake.finished_run(hashlib.sha256(content).hexdigest(), self.policy.sha256)
            if run_id is not None:
                logger.info(
                    "trace %s: recording the finished run %s of an earlier worker", claim.trace_id, run_id
                )
                return
            with RunLease(self.intake, claim.trace_id, owner, self.config.lease):
                result, _ = run_sync(
                    lambda: audit_async(
                        [path],
                        policy=self.policy,
                        judge=self.config.judge,
                        base_url=self.config.base_url,
                        format=FILE_FORMAT,
                        db_url=self.config.db_url,
                        finish_with=self.intake.finish_hook(claim, owner, recorded.append),
                    )
                )
            run_id = result.run.id
        except (LLMError, StoreError) as err:
            # Transient (the judge's endpoint or the database is down): the claim is left to run
            # out, and the trace is tried again a lease later, by this worker or another.
            logger.warning("audit of trace %s postponed: %s", claim.trace_id, err)
            return
        except AuditorError as err:
            error = str(err)
            logger.warning("audit of trace %s failed: %s", claim.trace_id, err)
        except Exception as err:  # one trace's failure must not stop the worker
            error = f"{type(err).__name__}: {err}"
            logger.exception("audit of trace %s failed", claim.trace_id)
        finally:
            path.unlink(missing_ok=True)
            if recorded == [False]:
                logger.warning(
                    "trace %s was taken over by another worker before its audit was recorded", claim.trace_id
                )
            elif not recorded:
                self._record(claim, owner, run_id, error)

    def _record(self, claim: Claim, owner: str, run_id: str | None, error: str | None) -> None:
        if run_id is None and error is None:
            return  # postponed: the claim runs out and the trace is tried again
        try:
            if not self.intake.finish(claim, owner, run_id, error):
                logger.warning(
                    "trace %s was taken over by another worker before its audit was recorded", claim.trace_id
                )
        except AuditorError as err:
            logger.warning("could not record the audit of trace %s: %s", claim.trace_id, err)
