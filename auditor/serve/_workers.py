"""The background audits: a bounded pool of worker threads, each auditing one ready trace at a time.

A worker claims a ready trace from the store (:meth:`auditor.store.Intake.claim`, under a lease it
renews with :class:`auditor.store.RunLease` while it works), writes the trace's stored spans as one
OTLP JSON Lines file (a span kept as protobuf turned into its JSON line by the adapter that kept
it, :class:`auditor.trace.BinaryRecords`) and audits that file with :func:`auditor.run.audit_async`, exactly as
``auditor audit FILE --format otlp-json`` would: same pipeline, same store, one run per audit pass.
The run's finishing transaction also marks the trace audited
(:meth:`auditor.store.Intake.finish_hook`), so results and "done" commit together. A worker
killed mid-audit leaves its trace claimed until the lease runs out; the next claim resumes it,
and the audit resumes the interrupted run (same file, same inputs digest), so no answer is
audited twice. An audit that fails because the judge's endpoint or the database is down
is tried again once its lease runs out; any other failure is recorded on the audit pass.

Threads, not tasks on the server's event loop: an audit is CPU-bound work (the offline judge) with
an event loop of its own, and must not hold up the requests being acknowledged.

What is audited (``AUDITOR_SERVE_SAMPLE``, ``AUDITOR_SERVE_FILTER``): a claimed trace outside the
sample (a hash of its id: :class:`auditor.trace.TraceSampling`, so replicas agree) or not matching
the filter is released with its pass recorded as not audited and why; every run records the sample
and filter it was chosen under (``runs.sampling``), in its finishing transaction. With a spending
cap (:mod:`auditor.serve._budget`), an LLM-judged audit starts only while the window's spending is
under it; once spent, workers stop claiming (``wait``) or audit with the offline judge and record
the cap on the run (``offline``). With an events endpoint, each finished audit's verdicts are sent
as ``gen_ai.evaluation.result`` events (:mod:`auditor.serve._events`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from auditor.errors import AuditorError, LLMError, StoreError
from auditor.llm import run_sync
from auditor.policy import Policy
from auditor.run import audit_async
from auditor.serve._budget import CapGuard, CapState
from auditor.serve._config import ServeConfig
from auditor.serve._events import EventSender
from auditor.store import NOT_AUDITED, Claim, FinishHook, Intake, RunLease, Store, live_record, new_owner
from auditor.trace import BinaryRecords, SpanFacts, installed_adapters

logger = logging.getLogger(__name__)

#: The adapter that reads the files the workers write (:class:`auditor.trace.ReceivedSpan`).
FILE_FORMAT = "otlp-json"


class AuditWorkers:
    """``config.workers`` threads auditing ready traces until :meth:`stop`."""

    def __init__(
        self, config: ServeConfig, intake: Intake, policy: Policy, events: EventSender | None = None
    ) -> None:
        self.config, self.intake, self.policy, self.events = config, intake, policy, events
        self._cap_store = (
            Store(config.db_url) if config.cap is not None and config.judge != "offline" else None
        )
        self.cap = (
            CapGuard(config.cap, config.cap_then, self._cap_store)
            if config.cap is not None and self._cap_store is not None
            else None
        )
        self._binary = binary_records()
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
        if self._cap_store is not None:
            self._cap_store.close()

    def _work(self) -> None:
        owner = new_owner()
        while not self._stop.is_set():
            try:
                capped = self._cap_state()
            except AuditorError as err:
                logger.warning("could not read the LLM judge's spending: %s", err)
                self._stop.wait(self.config.poll)
                continue
            if capped is not None and capped.then == "wait":
                self._stop.wait(self.config.poll)  # the traces wait for the next window (logged once)
                continue
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
            try:
                lines = json_lines(claim.records, self._binary)
            except ValueError as err:
                self._record(claim, owner, None, f"the trace's stored spans cannot be read: {err}")
                continue
            skipped = self._outside(claim, lines)
            if skipped is not None:
                self._record(claim, owner, None, skipped)
                continue
            self._audit(claim, lines, owner, capped)

    def _cap_state(self) -> CapState | None:
        """The cap's state when it is reached (None: no cap, or spending is under it)."""
        if self.cap is None:
            return None
        state = self.cap.check()
        return state if state.reached else None

    def _outside(self, claim: Claim, lines: tuple[str, ...]) -> str | None:
        """Why the trace is not audited (outside the sample, or not matching the filter), or None."""
        sampling = self.config.sampling
        if sampling.everything:
            return None
        if not sampling.sampled(claim.trace_id):
            return f"{NOT_AUDITED}outside the {sampling.share:.4g} sample of traces"
        if not sampling.matches(record_facts(lines)):
            return f"{NOT_AUDITED}no span matches the filter {sampling.filter_text()}"
        return None

    def _live(self, capped: CapState | None) -> FinishHook:
        """The run's sample (and cap) on the run."""
        return live_record(self.config.sampling.recorded(), capped.recorded() if capped else None)

    def _hook(self, claim: Claim, owner: str, recorded: list[bool], capped: CapState | None) -> FinishHook:
        """The run's finishing work: its sample (and cap) on the run (a resumed run's were not
        recorded when it began), the trace marked audited."""
        sampled = self._live(capped)
        finish = self.intake.finish_hook(claim, owner, recorded.append)

        def hook(session: Session, run_id: str) -> None:
            sampled(session, run_id)
            finish(session, run_id)

        return hook

    def _audit(
        self, claim: Claim, lines: tuple[str, ...], owner: str, capped: CapState | None = None
    ) -> None:
        path = self._dir / f"{claim.trace_id}.otlp.jsonl"
        content = "".join(line + "\n" for line in lines).encode("utf-8")
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
                        judge="offline" if capped is not None else self.config.judge,
                        base_url=self.config.base_url,
                        format=FILE_FORMAT,
                        db_url=self.config.db_url,
                        finish_with=self._hook(claim, owner, recorded, capped),
                        # The sample and cap from the start: the rollups key the answers by them.
                        begin_with=self._live(capped),
                    )
                )
            run_id = result.run.id
            if self.events is not None:
                self.events.send(result.answers)
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


def binary_records() -> BinaryRecords | None:
    """The installed adapter that reads back spans kept as protobuf (``otlp-proto``), if any."""
    for item in installed_adapters():
        if isinstance(item.adapter, BinaryRecords):
            return item.adapter
    return None


def json_lines(records: tuple[str | bytes, ...], binary: BinaryRecords | None) -> tuple[str, ...]:
    """A trace's stored spans as OTLP JSON lines (a span kept as protobuf turned into its line).

    Raises:
        ValueError: a span is kept as protobuf and no installed adapter reads it, or it is not a
            one-span request.
    """
    lines = []
    for record in records:
        if isinstance(record, str):
            lines.append(record)
        elif binary is None:
            raise ValueError("it holds spans kept as protobuf, and the otlp-proto adapter is not installed")
        else:
            lines.append(binary.record_json(record))
    return tuple(lines)


def record_facts(records: tuple[str, ...]) -> Iterator[SpanFacts]:
    """What the filter reads of each stored span (a one-span OTLP JSON request): service and attributes."""
    for record in records:
        try:
            request = json.loads(record)
        except ValueError:
            continue
        for resource_spans in request.get("resourceSpans") or ():
            resource = _attributes((resource_spans.get("resource") or {}).get("attributes"))
            service = resource.get("service.name")
            for scope_spans in resource_spans.get("scopeSpans") or ():
                for span in scope_spans.get("spans") or ():
                    yield SpanFacts(service, _attributes(span.get("attributes")))


def _attributes(items: Any) -> dict[str, str]:
    """OTLP JSON ``KeyValue`` list as text values (scalars only; arrays and maps are left out)."""
    out: dict[str, str] = {}
    for item in items or ():
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            continue
        value = item.get("value") or {}
        for kind in ("stringValue", "intValue", "doubleValue", "boolValue"):
            if kind in value:
                scalar = value[kind]
                out[item["key"]] = str(scalar).lower() if isinstance(scalar, bool) else str(scalar)
                break
    return out
