"""``AuditSpanProcessor``: audit OpenTelemetry-instrumented agents as their traces complete.

Add it to the application's ``TracerProvider`` beside its exporter. It buffers ended spans by trace;
when a trace's local root span ends the trace is complete and goes on a bounded queue; one background
worker thread reads it exactly as the ``otlp-proto`` file adapter would (the spans are encoded with
the OTLP exporter's own encoder and decoded by :mod:`auditor_otel.otlp_proto`, so GenAI, OpenInference
and OpenLLMetry are all understood, and a live audit equals the audit of the exported file), audits
every answer in it, keeps the audits, stores them when ``db_url`` is given, and can emit each verdict
as a ``gen_ai.evaluation.result`` event.

Guarantees for the application:

- ``on_start`` and ``on_end`` never block and never raise: ``on_start`` notes the span id,
  ``on_end`` appends the span to its trace's buffer and, at the trace's local root (a span whose
  parent was not started through this provider: none, a remote one, or another provider's), puts
  the trace on the queue without waiting;
- when the queue is full the trace is dropped, counted in ``stats.dropped`` and logged as a warning
  on the ``auditor_otel.processor`` logger; so is a trace evicted because too many traces are open;
- an exception inside auditing is recorded (``failures``, ``stats.failed``, an error log) and never
  propagated; the worker carries on with the next trace;
- a trace with model calls from which no answer is read is never a silent zero: it is counted in
  ``stats.unanswered`` and its ``no_answer`` problem (trace, span, convention, what was missing) is
  logged as a warning;
- with ``sampling`` (:class:`auditor.trace.TraceSampling`), a completed trace outside the share (a
  hash of its trace id, so every replica of the application, and ``auditor serve`` with the same
  share, picks the same traces) or not matching the filter is not audited, counted in
  ``stats.not_sampled`` / ``stats.filtered_out``; a stored run records the sample and filter;
- ``force_flush()`` waits (up to its timeout) until every queued trace is audited; ``shutdown()``
  drains the queue, stops the worker and finishes the store run. Traces whose root never ended are
  not audited.

Evaluation events follow the GenAI semantic conventions' ``gen_ai.evaluation.result`` event (a
log-based event, parented to the span it evaluates): one per answer (``gen_ai.evaluation.name`` =
``groundedness``, ``score.value`` the answer's supported / judged claims, ``score.label``
``grounded`` / ``ungrounded`` / ``refusal`` / ``not_judged``) and one per judged claim
(``groundedness.claim``, label the verdict, score 1 for supported and 0 otherwise), each with
``gen_ai.evaluation.explanation``; both are parented to the answer's LLM span.

Needs ``opentelemetry-sdk`` and ``opentelemetry-exporter-otlp-proto-common`` (the ``live`` extra).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from auditor.evidence import reconstruct, unanswered_traces
from auditor.judges import JudgeSetup, build_judge
from auditor.pipeline import audit_all, audit_result
from auditor.policy import Policy, load_policy
from auditor.results import AnswerOut
from auditor.trace import IngestResult, Problem, SpanFacts, Trace, TraceSampling

from .events import emit_evaluation_events

logger = logging.getLogger("auditor_otel.processor")

SOURCE = "<live OpenTelemetry spans>"
FORMAT = "otlp-live"
_STOP = object()


@dataclass
class ProcessorStats:
    """Counts since the processor started."""

    traces_queued: int = 0
    traces_audited: int = 0
    answers_audited: int = 0
    dropped: int = 0  # traces dropped because the queue was full or too many traces were open
    failed: int = 0  # traces whose audit raised
    unanswered: int = 0  # traces with model calls that yielded no answer (each logged as a warning)
    on_end_errors: int = 0  # exceptions swallowed in on_start / on_end (never propagated)
    not_sampled: int = 0  # completed traces outside the sampled share (by trace id)
    filtered_out: int = 0  # completed traces in the share that no span of matched the filter


@dataclass(frozen=True)
class AuditFailure:
    trace_id: str
    error: str
    at: datetime


@dataclass
class _Work:
    trace_id: str
    spans: list[ReadableSpan] = field(default_factory=list)
    started: set[int] = field(default_factory=set)  # span ids started through this provider


def spans_to_traces(spans: Sequence[ReadableSpan], source: str = SOURCE) -> tuple[list[Trace], list[Problem]]:
    """Read SDK spans as the ``otlp-proto`` adapter reads a file of the same spans."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from .collect import TraceCollector
    from .otlp_proto import _raw_span

    collector = TraceCollector(source, FORMAT)
    problems: list[Problem] = []
    request = encode_spans(spans)
    for resource in request.resource_spans:
        for scope_spans in resource.scope_spans:
            for span in scope_spans.spans:
                problems.extend(collector.add(_raw_span(span, str(scope_spans.scope.name))))
    traces: list[Trace] = []
    for item in collector.finish():
        (traces if isinstance(item, Trace) else problems).append(item)  # type: ignore[arg-type]
    return traces, problems


def span_facts(spans: Sequence[ReadableSpan]) -> list[SpanFacts]:
    """What the sampling filter reads of each span: its resource's ``service.name`` and its attributes."""
    out = []
    for span in spans:
        service = span.resource.attributes.get("service.name") if span.resource is not None else None
        attributes = {
            key: str(value).lower() if isinstance(value, bool) else str(value)
            for key, value in (span.attributes or {}).items()
            if isinstance(value, str | int | float | bool)
        }
        out.append(SpanFacts(None if service is None else str(service), attributes))
    return out


class AuditSpanProcessor(SpanProcessor):
    """Audits each completed trace in a background worker.

    Args:
        policy: a :class:`~auditor.policy.Policy`, a policy file or a shipped name (the default when None).
        judge: ``offline`` (default) or ``openai:MODEL``.
        base_url: an OpenAI-compatible endpoint for ``openai:`` judges.
        db_url: store every audit in this database; nothing is stored when None.
        logger_provider: emit ``gen_ai.evaluation.result`` events through this OpenTelemetry
            ``LoggerProvider`` (None: no events).
        max_queue: completed traces waiting to be audited before new ones are dropped.
        max_open_traces: traces buffered while their root is still running; beyond it the oldest is dropped.
        keep: audits kept in ``audits`` (the newest).
        on_audit: called in the worker with each trace's audits (its exceptions are recorded too).
        history: traces kept per conversation, so later turns see earlier turns' evidence.
        sampling: audit only this share of traces (by trace id) matching its filter
            (:func:`auditor.trace.parse_sampling`); None: every trace.
    """

    def __init__(
        self,
        policy: Policy | str | Path | None = None,
        judge: str = "offline",
        *,
        base_url: str | None = None,
        db_url: str | None = None,
        logger_provider: Any = None,
        max_queue: int = 256,
        max_open_traces: int = 10_000,
        keep: int = 10_000,
        on_audit: Callable[[list[AnswerOut]], None] | None = None,
        history: int = 50,
        sampling: TraceSampling | None = None,
    ) -> None:
        self.policy = policy if isinstance(policy, Policy) else load_policy(policy)
        self.judge_spec = judge
        self.base_url = base_url
        build_judge(judge, base_url=base_url)  # fail in the constructor on a bad spec or a missing key
        self.db_url = db_url
        self.on_audit = on_audit
        self.sampling = sampling or TraceSampling()
        self.stats = ProcessorStats()
        self.audits: deque[AnswerOut] = deque(maxlen=keep)
        self.failures: deque[AuditFailure] = deque(maxlen=1000)
        self._event_logger = (
            logger_provider.get_logger("auditor_otel.processor") if logger_provider is not None else None
        )
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_queue)
        self._open: OrderedDict[str, _Work] = OrderedDict()
        self._max_open = max_open_traces
        self._lock = threading.Lock()
        self._idle = threading.Condition()
        self._pending = 0
        self._history = history
        self._conversations: OrderedDict[str, list[Trace]] = OrderedDict()
        self._store: Any = None
        self._store_run: str | None = None
        self._shutdown = False
        self._worker = threading.Thread(target=self._work, name="auditor-span-processor", daemon=True)
        self._worker.start()

    # -- the application's side: never blocks, never raises ------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:
            context = span.get_span_context()
            if context is None or self._shutdown:
                return
            trace_id = format(context.trace_id, "032x")
            evicted: _Work | None = None
            with self._lock:
                work = self._open.get(trace_id)
                if work is None:
                    work = self._open[trace_id] = _Work(trace_id)
                    if len(self._open) > self._max_open:
                        _, evicted = self._open.popitem(last=False)
                work.started.add(context.span_id)
            if evicted is not None:
                self._drop(evicted.trace_id, "too many traces open at once")
        except Exception:  # the contract: the application never sees an auditor error
            self.stats.on_end_errors += 1

    def on_end(self, span: ReadableSpan) -> None:
        try:
            self._on_end(span)
        except Exception:  # the contract: the application never sees an auditor error
            self.stats.on_end_errors += 1

    def _on_end(self, span: ReadableSpan) -> None:
        if self._shutdown:
            return
        context = span.get_span_context()
        if context is None:
            return
        trace_id = format(context.trace_id, "032x")
        parent = span.parent
        with self._lock:
            work = self._open.get(trace_id)
            if work is None:  # started before this processor was added, or its trace was evicted
                return
            work.spans.append(span)
            # The local root: no parent, or a parent this provider never started (a remote parent,
            # or a span of another TracerProvider whose context leaked into this one's).
            is_root = parent is None or parent.span_id not in work.started
            if is_root:
                del self._open[trace_id]
        if is_root and self._chosen(work):
            self._enqueue(work)

    def _chosen(self, work: _Work) -> bool:
        """Whether the completed trace is in the sample and matches the filter (counted when not)."""
        if self.sampling.everything:
            return True
        if not self.sampling.sampled(work.trace_id):
            self.stats.not_sampled += 1
            return False
        if not self.sampling.matches(span_facts(work.spans)):
            self.stats.filtered_out += 1
            return False
        return True

    def _enqueue(self, work: _Work) -> None:
        with self._idle:
            self._pending += 1
        try:
            self._queue.put_nowait(work)
        except queue.Full:
            with self._idle:
                self._pending -= 1
                self._idle.notify_all()
            self._drop(work.trace_id, "the audit queue is full")
            return
        self.stats.traces_queued += 1

    def _drop(self, trace_id: str, why: str) -> None:
        self.stats.dropped += 1
        logger.warning(
            "auditor: trace %s not audited: %s (%d trace(s) dropped so far)",
            trace_id,
            why,
            self.stats.dropped,
        )

    # -- the worker ---------------------------------------------------------------------------------

    def _work(self) -> None:
        loop = asyncio.new_event_loop()
        setup: JudgeSetup | None = None
        try:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    return
                try:
                    if setup is None:
                        setup = build_judge(self.judge_spec, base_url=self.base_url)
                    self._audit(item, setup, loop)
                except Exception as exc:  # recorded, never propagated
                    self.stats.failed += 1
                    self.failures.append(
                        AuditFailure(item.trace_id, f"{type(exc).__name__}: {exc}", datetime.now(UTC))
                    )
                    logger.error(
                        "auditor: could not audit trace %s: %s: %s", item.trace_id, type(exc).__name__, exc
                    )
                finally:
                    with self._idle:
                        self._pending -= 1
                        self._idle.notify_all()
        finally:
            if setup is not None:
                try:
                    loop.run_until_complete(setup.aclose())
                except Exception as exc:
                    logger.error("auditor: closing the judge failed: %s", exc)
            loop.close()

    def _conversation(self, trace: Trace) -> list[Trace]:
        if trace.conversation_id is None:
            return [trace]
        earlier = self._conversations.pop(trace.conversation_id, [])
        kept = [*earlier, trace][-self._history :]
        self._conversations[trace.conversation_id] = kept
        while len(self._conversations) > 1000:
            self._conversations.popitem(last=False)
        return list(kept)

    def _audit(self, work: _Work, setup: JudgeSetup, loop: asyncio.AbstractEventLoop) -> None:
        started = datetime.now(UTC)
        traces, problems = spans_to_traces(work.spans)
        out: list[AnswerOut] = []
        for trace in traces:
            together = self._conversation(trace)
            answers = [
                a
                for a in reconstruct(together, self.policy.answer_selection())
                if a.trace_id == trace.trace_id
            ]
            if not answers:
                # Never a silent zero: a trace with model calls and no answer is counted and said.
                for problem in unanswered_traces([trace], answers, self.policy.answer_selection()):
                    self.stats.unanswered += 1
                    logger.warning("auditor: %s", problem.reason)
                continue
            audits = loop.run_until_complete(audit_all(answers, self.policy, setup.extractor, setup.judge))
            ingested = IngestResult(traces=together, problems=problems)
            result = audit_result(ingested, started, self.policy, setup.judge, audits)
            out.extend(result.answers)
            if self.db_url is not None:
                self._save(result.answers, trace, started, setup)
        self.audits.extend(out)
        self.stats.traces_audited += 1
        self.stats.answers_audited += len(out)
        if self._event_logger is not None:
            emit_evaluation_events(self._event_logger, out)
        if self.on_audit is not None:
            self.on_audit(out)

    def _save(self, answers: list[AnswerOut], trace: Trace, started: datetime, setup: JudgeSetup) -> None:
        from auditor.pipeline import policy_ref
        from auditor.results import RunInfo, judge_ref
        from auditor.store import Store, trace_digest

        if self._store is None:
            self._store = Store(self.db_url)
            info = RunInfo(
                id=uuid.uuid4().hex,
                started_at=started,
                policy=policy_ref(self.policy),
                judge=judge_ref(setup.judge.identity),
            )
            self._store_run = self._store.begin_run(info, self.policy.source_text)
            from auditor.store import note_live

            note_live(self._store, self._store_run, self.sampling.recorded())
        digest = trace_digest(trace)
        for answer in answers:
            self._store.save_answer(self._store_run, answer, digest)

    # -- flush and shutdown ---------------------------------------------------------------------------

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Wait until every queued trace is audited; False if the timeout came first."""
        deadline = time.monotonic() + timeout_millis / 1000
        with self._idle:
            while self._pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def shutdown(self) -> None:
        """Audit what is queued, stop the worker, finish the store run."""
        if self._shutdown:
            return
        self.force_flush()
        self._shutdown = True
        self._queue.put(_STOP)
        self._worker.join(timeout=30)
        if self._store is not None and self._store_run is not None:
            from auditor.metrics import summarise

            try:
                summary = summarise(list(self.audits), thresholds=self.policy.thresholds)
                self._store.finish_run(self._store_run, summary.model_dump(mode="json"))
            except Exception as exc:
                logger.error("auditor: could not finish the store run: %s", exc)
            finally:
                self._store.close()
                self._store = None
