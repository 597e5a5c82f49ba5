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

from collections.abc import Callable
from datetime import UTC, datetime

from auditor.errors import UsageError
from auditor.judges import Decomposer
from auditor.llm import run_sync
from auditor.metrics import Labels
from auditor.pipeline import AnswerAudit, trace_answers
from auditor.policy import Policy, parse_policy
from auditor.results import AuditResult, JudgeRef
from auditor.run._audit import AuditOptions, audit_answers_async
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


def _source(
    run_id: str, policy: Policy | None, judge: str | None, db_url: str | None
) -> tuple[str, IngestResult, Policy, str]:
    """The source run's full id, its kept traces as an ingest result, the policy and the judge spec."""
    with Store(db_url, create=False) as store:
        source = resolve_run(store, run_id)
        info = store.run_info(source)
        policy = policy or _policy_of(store, source)
        traces = store.load_traces(source)
    inputs = [InputFile(path=i.path, sha256=i.sha256, format=i.format, traces=i.traces) for i in info.inputs]
    return (
        source,
        IngestResult(traces=traces, problems=[], inputs=inputs),
        policy,
        judge or judge_spec(info.judge),
    )


async def reaudit_async(
    run_id: str,
    *,
    policy: Policy | None = None,
    judge: str | None = None,
    db_url: str | None = None,
    base_url: str | None = None,
    cascade: bool = True,
    cache: bool = True,
    decomposer: Decomposer = "rules",
    concurrency: int = 8,
    labels: Labels | None = None,
    resume: bool = True,
    on_progress: Callable[[Progress], None] | None = None,
    calibration: str | None = None,
    rate_limit: float | None = None,
) -> tuple[AuditResult, list[AnswerAudit]]:
    """Re-judge the stored run ``run_id``; see :func:`reaudit`. Returns the result and the audits made now."""
    started = datetime.now(UTC)
    source, ingested, policy, spec = _source(run_id, policy, judge, db_url)
    answers = trace_answers(ingested.traces, policy, problems=ingested.problems)
    options = AuditOptions(
        judge=spec,
        base_url=base_url,
        cascade=cascade,
        cache=cache,
        decomposer=decomposer,
        concurrency=concurrency,
        labels=labels,
        db_url=db_url,
        store=True,
        resume=resume,
        calibration=calibration,
        rate_limit=rate_limit,
    )
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
    *,
    policy: Policy | None = None,
    judge: str | None = None,
    db_url: str | None = None,
    base_url: str | None = None,
    cascade: bool = True,
    cache: bool = True,
    decomposer: Decomposer = "rules",
    concurrency: int = 8,
    labels: Labels | None = None,
    resume: bool = True,
    on_progress: Callable[[Progress], None] | None = None,
    calibration: str | None = None,
    rate_limit: float | None = None,
) -> AuditResult:
    """Re-judge a stored run's answers from its kept traces, as a new stored run; return its result.

    Args:
        run_id: the stored run's id (a unique prefix is enough).
        policy: the policy to judge under; None: the one stored with the run.
        judge: ``offline`` or ``openai:MODEL``; None: the run's judge (kind and model).
        db_url: the store holding the run, where the re-audit is stored too (default:
            ``AUDITOR_DB_URL``, else SQLite in the app directory).
        resume: continue an interrupted re-audit (the same inputs, policy and judge).
        rate_limit: LLM requests per second at most (None: unbounded).

    The other arguments are :func:`~auditor.run.audit`'s.

    Raises:
        UsageError: no run, or several, start with ``run_id``; or it recorded no policy text and
            ``policy`` is None.
        StoreError: the store cannot be opened, or the run was stored without its traces'
            content (before the store kept it): the message says to audit its files again.
        LLMError: as for :func:`~auditor.run.audit`.
    """
    result, _ = run_sync(
        lambda: reaudit_async(
            run_id,
            policy=policy,
            judge=judge,
            db_url=db_url,
            base_url=base_url,
            cascade=cascade,
            cache=cache,
            decomposer=decomposer,
            concurrency=concurrency,
            labels=labels,
            resume=resume,
            on_progress=on_progress,
            calibration=calibration,
            rate_limit=rate_limit,
        )
    )
    return result
