"""The production guard for LangChain and LangGraph agents.

:class:`GroundednessGuard` is a callback handler: pass it in ``config={"callbacks": [guard]}``. It
records the run live (:mod:`auditor_langchain.live`, the same mapping as an exported run tree), and
when the top-level run ends it audits every answer the run produced against the evidence the run
gathered, under the policy, with the judge (offline by default). Each audit is the public
:class:`~auditor.results.AnswerOut` (claims, verdicts, quoted evidence): ``guard.last_audit`` is the
latest, ``guard.audits`` all of them, ``guard.audits_for(run_id)`` those of one run. With ``db_url``
every audit is stored (one store run per guard).

``on_ungrounded`` decides what happens to an answer that is not grounded:

- ``flag`` (default): record it, log a warning on the ``auditor_langchain.guard`` logger; the answer
  is served;
- ``raise``: raise :class:`UngroundedAnswerError` (carrying the audit) out of ``invoke``/``ainvoke``.

Changing what is served needs the output, so it happens in :func:`guarded`, a wrapper around the
runnable: ``strip`` (remove the sentences holding unsupported, contradicted or unjudged claims and
say so; contradicted claims are never served), ``refuse`` (a configurable refusal) or ``fallback``
(call a function).

Conversations: traces sharing a conversation id (``session_id`` / ``thread_id`` metadata) are audited
together, as ``auditor audit`` does with an exported file, so a second turn may rest on the first
turn's tool results. The guard keeps the last ``history`` traces of each of the last
``conversations`` conversations in memory.

Failures of the audit itself (a bug, a store that is down) never pass silently: they are logged and
kept in ``guard.failures``; under ``raise`` they raise :class:`UngroundedAnswerError` with no audit,
and :func:`guarded` treats an answer it has no audit for as ungrounded (fail closed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar
from uuid import UUID

from langchain_core.tracers.schemas import Run

from auditor.errors import AuditorError
from auditor.evidence import reconstruct
from auditor.judges import build_judge
from auditor.llm import run_sync
from auditor.pipeline import audit_all, audit_result
from auditor.policy import Policy, load_policy
from auditor.results import AnswerOut, RunInfo
from auditor.trace import IngestResult, Trace
from auditor_langchain.live import RunRecorder, runs_to_trace

logger = logging.getLogger("auditor_langchain.guard")

OnUngrounded = Literal["flag", "raise"]
T = TypeVar("T")


class UngroundedAnswerError(AuditorError):
    """An answer was not grounded (or could not be audited) and the guard was told to raise.

    Attributes:
        audit: the answer's audit (claims, verdicts, evidence); None when the audit itself failed.
        audits: every audit of the run that raised.
        run_id: the top-level LangChain run.
    """

    def __init__(
        self,
        message: str,
        audit: AnswerOut | None,
        audits: list[AnswerOut] | None = None,
        run_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.audit = audit
        self.audits = audits or ([audit] if audit else [])
        self.run_id = run_id


@dataclass(frozen=True)
class GuardFailure:
    """An audit that could not be completed."""

    run_id: str
    error: str
    at: datetime


def unsupported_claims(audit: AnswerOut) -> list[str]:
    """The texts of the judgeable claims that are not supported (absent, contradicted, unjudged)."""
    return [c.text for c in audit.claims or [] if not c.screened and c.verdict != "supported"]


def _run_coroutine(factory: Callable[[], Awaitable[T]]) -> T:
    """Run the async audit from a callback: inline when no loop runs here, else on a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_sync(factory)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="auditor-guard") as pool:
        return pool.submit(run_sync, factory).result()


class GroundednessGuard(RunRecorder):
    """A LangChain callback handler that audits each final answer when its top-level run ends.

    Args:
        policy: a :class:`~auditor.policy.Policy`, a policy file, or a shipped name (default policy when None).
        judge: ``offline`` (default; approximate, no network) or ``openai:MODEL``.
        base_url: an OpenAI-compatible endpoint for ``openai:`` judges.
        on_ungrounded: ``flag`` or ``raise`` (module docstring); use :func:`guarded` to strip, refuse or fall back.
        db_url: store every audit in this database (a SQLAlchemy URL); nothing is stored when None.
        history: traces kept per conversation (for later turns' evidence).
        conversations: conversations kept in memory.
    """

    name: str = "auditor_groundedness_guard"

    def __init__(
        self,
        policy: Policy | str | Path | None = None,
        judge: str = "offline",
        *,
        base_url: str | None = None,
        on_ungrounded: OnUngrounded = "flag",
        db_url: str | None = None,
        history: int = 50,
        conversations: int = 1000,
    ) -> None:
        super().__init__(on_trace=self._on_trace_end)
        if on_ungrounded not in ("flag", "raise"):
            raise AuditorError(
                f"on_ungrounded must be 'flag' or 'raise', not {on_ungrounded!r}: "
                "use guarded(runnable, guard, on_ungrounded=...) to strip, refuse or fall back."
            )
        self.policy = policy if isinstance(policy, Policy) else load_policy(policy)
        self.judge_spec = judge
        self.base_url = base_url
        build_judge(judge, base_url=base_url)  # fail now, not at the first answer, on a bad spec or no key
        self.on_ungrounded: OnUngrounded = on_ungrounded
        self.raise_error = on_ungrounded == "raise"  # LangChain swallows callback errors unless this is set
        self.db_url = db_url
        self.audits: list[AnswerOut] = []
        self.last_audit: AnswerOut | None = None
        self.failures: list[GuardFailure] = []
        self._by_run: OrderedDict[str, list[AnswerOut]] = OrderedDict()
        self._conversations: OrderedDict[str, list[Trace]] = OrderedDict()
        self._history = history
        self._max_conversations = conversations
        self._lock = threading.Lock()
        self._store: Any = None
        self._store_run: str | None = None

    # -- results ----------------------------------------------------------------------------------

    def audits_for(self, run_id: UUID | str) -> list[AnswerOut] | None:
        """The audits of one top-level run: a list (empty when it gave no answer), None if not audited."""
        with self._lock:
            return self._by_run.get(str(run_id))

    def failure_for(self, run_id: UUID | str) -> GuardFailure | None:
        with self._lock:
            return next((f for f in reversed(self.failures) if f.run_id == str(run_id)), None)

    # -- the audit --------------------------------------------------------------------------------

    def _on_trace_end(self, root: Run, runs: list[dict[str, Any]]) -> None:
        run_id = str(root.id)
        try:
            answers = self._audit(runs)
        except Exception as exc:  # recorded and logged; raised only under on_ungrounded="raise"
            failure = GuardFailure(run_id, f"{type(exc).__name__}: {exc}", datetime.now(UTC))
            with self._lock:
                self.failures.append(failure)
            logger.error("auditor guard: could not audit run %s: %s", run_id, failure.error)
            if self.raise_error:
                raise UngroundedAnswerError(
                    f"The answer could not be audited ({failure.error}); not served.", None, [], run_id
                ) from exc
            return
        with self._lock:
            self._by_run[run_id] = answers
            while len(self._by_run) > 10_000:
                self._by_run.popitem(last=False)
            self.audits.extend(answers)
            if answers:
                self.last_audit = answers[-1]
        bad = [a for a in answers if a.grounded is False]
        for answer in bad:
            logger.warning(
                "auditor guard: ungrounded answer %s (run %s): unsupported claims %s",
                answer.answer_id,
                run_id,
                unsupported_claims(answer),
            )
        if bad and self.raise_error:
            claims = "; ".join(unsupported_claims(bad[-1])) or "no judged claim"
            raise UngroundedAnswerError(
                f"Ungrounded answer {bad[-1].answer_id}: {claims}", bad[-1], answers, run_id
            )

    def _conversation(self, trace: Trace) -> list[Trace]:
        if trace.conversation_id is None:
            return [trace]
        with self._lock:
            earlier = self._conversations.pop(trace.conversation_id, [])
            kept = [*earlier, trace][-self._history :]
            self._conversations[trace.conversation_id] = kept
            while len(self._conversations) > self._max_conversations:
                self._conversations.popitem(last=False)
            return list(kept)

    def _audit(self, runs: list[dict[str, Any]]) -> list[AnswerOut]:
        started = datetime.now(UTC)
        traces, problems = runs_to_trace(runs)
        if not traces:
            raise AuditorError("the run could not be read: " + "; ".join(p.reason for p in problems[:3]))
        trace = traces[0]
        together = self._conversation(trace)
        answers = [
            a for a in reconstruct(together, self.policy.answer_selection()) if a.trace_id == trace.trace_id
        ]
        if not answers:
            return []

        async def judge_all() -> list[AnswerOut]:
            setup = build_judge(self.judge_spec, base_url=self.base_url)
            try:
                audits = await audit_all(answers, self.policy, setup.extractor, setup.judge)
                ingested = IngestResult(traces=together, problems=problems)
                return audit_result(ingested, started, self.policy, setup.judge, audits).answers
            finally:
                await setup.aclose()

        out = _run_coroutine(judge_all)
        if self.db_url is not None:
            self._save(out, trace, started)
        return out

    def _save(self, answers: list[AnswerOut], trace: Trace, started: datetime) -> None:
        from auditor.pipeline import policy_ref
        from auditor.results import judge_ref
        from auditor.store import Store, trace_digest

        with self._lock:
            if self._store is None:
                self._store = Store(self.db_url)
                identity = build_judge(self.judge_spec, base_url=self.base_url).judge.identity
                info = RunInfo(
                    id=uuid.uuid4().hex,
                    started_at=started,
                    policy=policy_ref(self.policy),
                    judge=judge_ref(identity),
                )
                self._store_run = self._store.begin_run(info, self.policy.source_text)
            store, run_id = self._store, self._store_run
            digest = trace_digest(trace)
            for answer in answers:
                store.save_answer(run_id, answer, digest)

    def close(self) -> None:
        """Finish the store run (with the figures of every audit so far) and release the connection."""
        with self._lock:
            store, run_id, audits = self._store, self._store_run, list(self.audits)
            self._store = self._store_run = None
        if store is None or run_id is None:
            return
        from auditor.metrics import summarise

        try:
            summary = summarise(audits, thresholds=self.policy.thresholds)
            store.finish_run(run_id, summary.model_dump(mode="json"))
        finally:
            store.close()


DEFAULT_REFUSAL = "I can't give a reliable answer to that from the sources I have."
STRIP_NOTE = "(I removed {n} statement(s) that my sources do not support.)"


def strip_unsupported(text: str, audit: AnswerOut, note: str = STRIP_NOTE) -> str | None:
    """The answer without the sentences that hold an unsupported, contradicted or unjudged claim.

    Returns None when no supported claim would remain (the caller should refuse instead).
    """
    from auditor.claims import sentences

    claims = [c for c in audit.claims or [] if not c.screened]
    bad = [(c.start, c.end) for c in claims if c.verdict != "supported"]
    good = [(c.start, c.end) for c in claims if c.verdict == "supported"]
    kept: list[tuple[int, int]] = []
    removed = 0
    for start, end, _ in sentences(text):
        if any(s < end and start < e for s, e in bad):
            removed += 1
        else:
            kept.append((start, end))
    if not any(any(s < ke and ks < e for s, e in good) for ks, ke in kept):
        return None
    body = " ".join(text[s:e].strip() for s, e in kept)
    return f"{body}\n\n{note.format(n=removed)}" if removed else body


def final_text(output: Any) -> str | None:
    """The answer text in a runnable's output: a string, a message, ``{"messages": [...]}`` or ``{"output": str}``."""
    from langchain_core.messages import BaseMessage

    if isinstance(output, str):
        return output
    if isinstance(output, BaseMessage):
        content = output.content
        return content if isinstance(content, str) else str(output.text)
    if isinstance(output, dict):
        messages = output.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], BaseMessage):
            return final_text(messages[-1])
        if isinstance(output.get("output"), str):
            return str(output["output"])
    return None


def replace_text(output: Any, text: str) -> Any:
    """``output`` with its answer text replaced (same shapes as :func:`final_text`)."""
    from langchain_core.messages import AIMessage, BaseMessage

    if isinstance(output, str):
        return text
    if isinstance(output, BaseMessage):
        return output.model_copy(
            update={"content": text, "tool_calls": []} if isinstance(output, AIMessage) else {"content": text}
        )
    if isinstance(output, dict):
        messages = output.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[-1], BaseMessage):
            return {**output, "messages": [*messages[:-1], replace_text(messages[-1], text)]}
        if isinstance(output.get("output"), str):
            return {**output, "output": text}
    raise TypeError(f"cannot replace the answer in a {type(output).__name__} output")
