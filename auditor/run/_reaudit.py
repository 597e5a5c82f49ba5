"""``reaudit()``: a stored run's answers judged again, from the traces the store kept, not the files.

A re-audit is an ordinary run (:func:`~auditor.run.audit_answers_async`): stored as it goes,
resumable, with its own id, the policy's hash and the judge's identity, and the same inputs as the
run it re-judges (their paths and digests, as recorded). Its answers are reconstructed afresh
from the kept traces under the policy's ``[answers]`` section, so a policy that selects other
answers gets them. What it changes is only what is passed: by default the policy is the one
stored with the source run (its text, as read then) and the judge is the source run's, so
``reaudit(run, judge="openai:...")`` changes only the judge and ``reaudit(run, policy=...)``
only the policy. The verdict cache in the store makes a re-audit with the same judge and evidence
cost no LLM call. The finished run records the run it re-audited (``reaudit_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Unpack

from auditor.errors import UsageError
from auditor.llm import run_sync
from auditor.pipeline import AnswerAudit, trace_answers
from auditor.policy import Policy, parse_policy
from auditor.results import AuditResult, JudgeRef
from auditor.run._audit import audit_answers_async
from auditor.run._options import AuditArgs, AuditOptions, with_changes
from auditor.run._progress import Progress
from auditor.store import Store, reaudit_link, resolve_run
from auditor.trace import IngestResult, InputFile


def judge_spec(judge: JudgeRef | None) -> str:
    """The ``--judge`` spec that builds the judge a run recorded (``offline`` for none)."""
    if judge is None or judge.kind == "offline":
        return "offline"
    return f"{judge.kind}:{judge.model}" if judge.model else judge.kind


def _policy_of(store: Store, run_id: str) -> Policy:
    text = store.policy_text(run_id)
    if text is None:
        raise UsageError(
            f"Run {run_id} recorded no policy text (its policy was built in code): pass --policy."
        )
    return parse_policy(text, origin=f"the policy stored with run {run_id[:12]}")


def stored_policy(run_id: str, db_url: str | None = None) -> Policy:
    """The policy a stored run was judged under, from the text it recorded (a unique id prefix is enough).

    Raises:
        UsageError: no run, or several, start with ``run_id``; or it recorded no policy text.
    """
    with Store(db_url, create=False) as store:
        return _policy_of(store, resolve_run(store, run_id))


def _source(run_id: str, options: AuditOptions) -> tuple[str, IngestResult, Policy, AuditOptions]:
    """The source run's full id, its kept traces as an ingest result, the policy to judge under
    (``options.policy``, else the run's stored one), and ``options`` with the judge resolved
    (``options.judge``, else the run's own).
    """
    with Store(options.db_url, create=False) as store:
        source = resolve_run(store, run_id)
        info = store.run_info(source)
        policy = options.policy or _policy_of(store, source)
        traces = store.load_traces(source)
    inputs = [InputFile(path=i.path, sha256=i.sha256, format=i.format, traces=i.traces) for i in info.inputs]
    return (
        source,
        IngestResult(traces=traces, problems=[], inputs=inputs),
        policy,
        replace(options, judge=options.judge or judge_spec(info.judge)),
    )


def reaudit_options(options: AuditOptions | None, changes: Mapping[str, Any], caller: str) -> AuditOptions:
    """The options of a re-audit: :func:`~auditor.run.with_changes`, refusing the fields that do
    not apply to one (it reads the run's kept traces, all of them, and is always stored).

    Raises:
        UsageError: ``format``, ``trace_id`` or ``store=False`` given.
        TypeError: as :func:`~auditor.run.with_changes`.
    """
    options = with_changes(options, changes, caller)
    if options.format is not None or options.trace_id is not None:
        raise UsageError(
            "A re-audit reads the run's kept traces, all of them: format and trace_id do not apply."
        )
    if not options.store:
        raise UsageError("A re-audit is always stored (it is a new run linked to the one it re-judges).")
    return options


async def reaudit_async(
    run_id: str,
    options: AuditOptions | None = None,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    **changes: Unpack[AuditArgs],
) -> tuple[AuditResult, list[AnswerAudit]]:
    """Re-judge the stored run ``run_id``; see :func:`reaudit`. Returns the result and the audits made now."""
    options = reaudit_options(options, changes, "reaudit_async")
    started = datetime.now(UTC)
    source, ingested, policy, options = _source(run_id, options)
    answers = trace_answers(ingested.traces, policy, problems=ingested.problems)
    return await audit_answers_async(
        ingested,
        answers,
        policy,
        options,
        started=started,
        on_progress=on_progress,
        finish_with=reaudit_link(source),
    )


def reaudit(
    run_id: str,
    options: AuditOptions | None = None,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    **changes: Unpack[AuditArgs],
) -> AuditResult:
    """Re-judge a stored run's answers from its kept traces, as a new stored run; return its result.

    Args:
        run_id: the stored run's id (a unique prefix is enough).
        options: as for :func:`~auditor.run.audit` (:class:`AuditOptions`), except that
            ``policy`` None is the policy stored with the run, ``judge`` None the run's judge (kind
            and model), ``db_url`` the store holding the run (where the re-audit is stored too),
            ``resume`` continues an interrupted re-audit (the same run, policy and judge), and
            ``format``, ``trace_id`` and ``store=False`` do not apply.
        on_progress: called after each answer with a :class:`Progress`.
        **changes: fields of :class:`AuditOptions`, as for :func:`~auditor.run.audit`.

    Raises:
        UsageError: no run, or several, start with ``run_id``; or it recorded no policy text and
            ``policy`` is None; or ``format``, ``trace_id`` or ``store=False`` given.
        StoreError: the store cannot be opened, or the run was stored without its traces'
            content (before the store kept it): the message says to audit its files again.
        LLMError: as for :func:`~auditor.run.audit`.
        TypeError: a keyword that is no field of :class:`AuditOptions`.
    """
    options = reaudit_options(options, changes, "reaudit")
    result, _ = run_sync(lambda: reaudit_async(run_id, options, on_progress=on_progress))
    return result
