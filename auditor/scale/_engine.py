"""``audit_on_ray``: one stored audit run over trace files, its shards audited on a Ray cluster.

The driver (the process that calls it) does the bookkeeping and no auditing:

1. checks the judge once (an unreachable endpoint fails before any work), connects to Ray
   (``address``; by default it starts a local Ray), and scans every file in a task of its own
   (:func:`~auditor.scale._plan.scan_file`: ids, conversations, span counts, problems, digests);
2. opens **one run** for the whole job with the same store code as a single process
   (:func:`auditor.run.open_run`: inputs and their digests, policy hash, judge; a rerun of the
   same command resumes an interrupted or abandoned run), and keeps its lease while it runs;
3. plans the shards (whole conversations on one shard) and runs one task per shard
   (:func:`~auditor.scale._worker.audit_shard`), which audits its answers into the run exactly as
   a single process would; a task whose worker dies is retried by Ray (``max_retries``) and skips
   what was saved;
4. shows one progress report (every shard's committed answers, through a small actor), and
   finishes: the summary is computed from the stored answers, in single-process order.

A task that still fails after its retries never drops its traces silently: each is named in the
run's problems, the run is left ``interrupted`` (a rerun resumes it) and :class:`ShardError` says so.
Ray is imported here only, when the function is called; without it the call is one line saying
what to install.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Unpack

from auditor.errors import (
    NothingReadError,
    ShardError,
    StoreError,
    UsageError,
)
from auditor.evidence import count_unanswered
from auditor.llm import run_sync
from auditor.pipeline import run_info
from auditor.policy import Policy, load_policy
from auditor.results import AuditResult, RunInfo, judge_ref
from auditor.run import (
    AuditArgs,
    AuditOptions,
    Progress,
    choose_calibration,
    finish_result,
    judge_spec,
    merge_usage,
    open_run,
    reaudit_options,
    store_judge,
    stored_policy,
    with_changes,
    with_correction,
)
from auditor.scale._budget import ClusterBudget
from auditor.scale._collect import (
    ProgressBoard,
    conversation_ranks,
    fail,
    gather,
    order_answers,
    outcome,
    reason,
    wait_for_shards,
)
from auditor.scale._plan import FileScan, TraceEntry, plan_shards, scan_file
from auditor.scale._watchdog import children, marking, new_mark, start_watchdog, supported
from auditor.scale._worker import ShardJob, ShardOutcome, audit_shard
from auditor.settings import SETTINGS, run_lease
from auditor.store import FinishHook, RunLease, Store, new_owner, reaudit_link, resolve_run
from auditor.trace import IngestResult, InputFile, expand_inputs, get_adapter

#: The one line when Ray is not installed.
RAY_MISSING = "--engine ray needs Ray: pip install 'trace-auditor[ray]'"


def import_ray() -> ModuleType:
    """The ``ray`` module, or :class:`~auditor.errors.UsageError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(RAY_MISSING) from None
    return ray


def audit_on_ray(
    paths: Sequence[Path | str],
    options: AuditOptions | None = None,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    address: str | None = None,
    workers: int | None = None,
    max_retries: int = 3,
    **changes: Unpack[AuditArgs],
) -> AuditResult:
    """Audit every answer in ``paths`` on a Ray cluster as one stored run; the result as :func:`auditor.run.audit`.

    ``options`` (and the keywords, :class:`~auditor.run.AuditOptions`' fields) mean what they mean
    for :func:`auditor.run.audit`, with these differences: ``concurrency`` is per worker (answers,
    and LLM requests, in flight in each task), and ``rate_limit`` is one budget for the whole
    cluster (``ClusterBudget``: every worker's requests together, a 429's ``Retry-After`` pausing
    all of them). The run is always stored, in a database every worker can reach (PostgreSQL on a
    cluster of several machines), and the options travel whole to every shard task.

    Args:
        address: the Ray cluster (``auto``, ``ray://head:10001``, ``head:6379``); None connects to
            the one this process already joined, else starts a local Ray for the call.
        workers: shards, and so tasks at once at most (default: the cluster's CPUs).
        max_retries: how often Ray retries a shard whose worker died.

    Raises:
        UsageError: Ray is not installed, an input error, an in-memory store, ``trace_id``
            (one trace: audit it in one process) or ``store=False``.
        ShardError: shard tasks failed after their retries (their traces are named in the run's
            problems; the run is interrupted and a rerun resumes it).
        LLMError, StoreError: as :func:`auditor.run.audit`.
        TypeError: a keyword that is no field of :class:`~auditor.run.AuditOptions`.
    """
    options = with_changes(options, changes, "audit_on_ray")
    if options.trace_id is not None:
        raise UsageError(
            "trace_id selects one trace: audit it in one process (auditor.run.audit), not on Ray."
        )
    if not options.store:
        raise UsageError("A run on Ray is always stored (its workers write it): store=False does not apply.")
    ray = import_ray()
    if options.format:
        get_adapter(options.format)  # fail early with the list of installed adapters
    files = [str(f) for f in expand_inputs(paths)]

    def index(env: dict[str, Any] | None) -> _Inputs:
        scan = ray.remote(scan_file).options(num_cpus=1, max_retries=max_retries, runtime_env=env)
        scans: list[FileScan] = gather(ray, [scan.remote(f, options.format) for f in files])
        ingested = IngestResult(
            problems=[p for s in scans for p in s.problems], inputs=[s.input for s in scans]
        )
        if not any(s.traces for s in scans):
            raise NothingReadError(
                f"{_listed(files)}: no trace could be read from any input (the problems: "
                f"{'; '.join(p.reason for p in ingested.problems[:3]) or 'none'})."
            )
        return _Inputs(ingested, scans)

    job = _Job(options.policy or load_policy(), options, address, workers, max_retries)
    return _run_job(ray, job, index, on_progress)


def reaudit_on_ray(
    run_id: str,
    options: AuditOptions | None = None,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    address: str | None = None,
    workers: int | None = None,
    max_retries: int = 3,
    **changes: Unpack[AuditArgs],
) -> AuditResult:
    """:func:`auditor.run.reaudit` on a Ray cluster: a stored run judged again from its kept traces.

    The shards are cut from the run's kept traces (whole conversations on one) and each worker
    reads its own from the store; the rest is :func:`audit_on_ray` (one run, its lease, retries,
    progress, the options whole on every worker) and the result is :func:`auditor.run.reaudit`'s:
    by default the run's stored policy and its judge, the new run recording the run it re-judged.

    Raises:
        UsageError: as :func:`auditor.run.reaudit`, or as :func:`audit_on_ray`.
        TypeError: a keyword that is no field of :class:`~auditor.run.AuditOptions`.
    """
    options = reaudit_options(options, changes, "reaudit_on_ray")
    ray = import_ray()
    db_url = options.db_url
    with Store(db_url, create=False) as store:
        source = resolve_run(store, run_id)
        recorded = store.run_info(source)
    policy = options.policy or stored_policy(source, db_url)

    def index(env: dict[str, Any] | None) -> _Inputs:
        with Store(db_url, create=False) as store:
            # The driver reads the kept traces once for their ids and conversations (the
            # workers read their own shard's again).
            traces = store.load_traces(source)
        scan = FileScan(
            InputFile(path=f"run {source}", sha256="", format=None, traces=len(traces)),
            tuple(TraceEntry(t.trace_id, t.conversation_id, len(t.spans)) for t in traces),
            (),
        )
        inputs = [InputFile(i.path, i.sha256, i.format, i.traces) for i in recorded.inputs]
        return _Inputs(IngestResult(problems=[], inputs=inputs), [scan], source)

    options = replace(options, judge=options.judge or judge_spec(recorded.judge))
    job = _Job(policy, options, address, workers, max_retries, reaudit_link(source))
    return _run_job(ray, job, index, on_progress)


@dataclass(frozen=True)
class _Inputs:
    """What the driver plans from: the run's inputs and problems, each file's index, and the
    stored run whose kept traces the shards read (a re-audit) or None (the files)."""

    ingested: IngestResult
    scans: list[FileScan]
    source_run: str | None = None


@dataclass(frozen=True)
class _Job:
    """A run on Ray: the policy resolved (``options.policy``, the default or a re-audited run's),
    the options whole, how to reach the cluster, and the hook of the run's finishing transaction."""

    policy: Policy
    options: AuditOptions
    address: str | None
    workers: int | None
    max_retries: int
    finish_with: FinishHook | None = None


def _run_job(
    ray: ModuleType,
    job: _Job,
    index: Callable[[dict[str, Any] | None], _Inputs],
    on_progress: Callable[[Progress], None] | None,
) -> AuditResult:
    """Connect, index the inputs, open the run, run the shards and finish (see the module docstring)."""
    policy, max_retries = job.policy, job.max_retries
    started = datetime.now(UTC)
    if job.workers is not None and job.workers < 1:
        raise UsageError(f"--workers {job.workers}: give 1 or more.")
    db = Store(job.options.db_url)
    owner, lease = new_owner(), run_lease()
    keeper: RunLease | None = None
    budget: ClusterBudget | None = None
    board: Any = None
    pending: dict[Any, int] = {}
    run_id: str | None = None
    finished = False
    started_ray = False
    watchdog: subprocess.Popen[bytes] | None = None
    try:
        if db.in_memory:
            raise UsageError(
                f"--db {db.url}: an in-memory database is private to this process; --engine ray "
                "needs a store every worker can reach (a SQLite file on one machine, else PostgreSQL)."
            )
        options = replace(job.options, db_url=db.url)  # every worker writes the store resolved here
        started_ray, watchdog = _connect(ray, job.address)
        identity = _checked_judge(options)
        env = _runtime_env()
        inputs = index(env)
        entries = [(t.trace_id, t.conversation_id) for s in inputs.scans for t in s.traces]
        info = run_info(inputs.ingested, started, policy).model_copy(update={"judge": judge_ref(identity)})
        chosen = choose_calibration(db, options.calibration, info.judge)  # a bad id fails before any work
        run_id, _ = open_run(db, info, policy, options.resume, [], [], owner, lease)
        keeper = RunLease(db, run_id, owner, lease).start()
        parallel = job.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        shards = plan_shards(inputs.scans, parallel)
        if options.rate_limit is not None:
            budget = ClusterBudget(options.rate_limit)
        board = ray.remote(ProgressBoard).options(num_cpus=0).remote()
        task = ray.remote(audit_shard).options(num_cpus=1, max_retries=max_retries, runtime_env=env)
        places: dict[str, int] = {}
        for trace_id, _ in entries:
            places.setdefault(trace_id, len(places))
        for number, shard in enumerate(shards):
            shard_job = ShardJob(
                number,
                shard,
                policy,
                options,
                run_id,
                owner,
                budget.handle() if budget is not None else None,
                board,
                {t: places[t] for t in shard.trace_ids},
                inputs.source_run,
            )
            pending[task.remote(shard_job)] = number
        outcomes, failures = wait_for_shards(ray, pending, board, on_progress, len(places), run_id)
        if failures:
            fail(db, run_id, owner, shards, failures, max_retries)
        ordered = order_answers(
            db.load_run(run_id).answers,
            [outcomes[i].order for i in range(len(shards))],
            conversation_ranks(entries),
        )
        db.reorder_answers(run_id, [a.answer_id for a in ordered], owner=owner)
        # Every saved answer's usage (those of a killed worker's too, and of an interrupted run
        # this one resumes), and what the shards spent after their last save.
        usage = merge_usage([*db.answer_usages(run_id), *(outcomes[i].usage for i in range(len(shards)))])
        info = with_unanswered(db, run_id, owner, info, [outcomes[i] for i in range(len(shards))], places)
        run = info.model_copy(update={"id": run_id})
        result = finish_result(AuditResult(run=run, answers=ordered), policy, options.labels, usage)
        result = with_correction(result, chosen)
        db.finish_run(
            run_id, result.summary, result.run.usage, status=outcome(usage), owner=owner, also=job.finish_with
        )
        finished = True
        return result
    except ray.exceptions.RayError as err:  # the cluster itself failed (a node, the head, an actor)
        where = (
            f"run {run_id[:12]} is left interrupted: run the same command again to resume it"
            if run_id
            else "nothing was stored"
        )
        raise ShardError(f"The Ray cluster failed ({reason(err)}); {where}.") from None
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)  # nothing left once finished; on Ctrl-C, stop the workers
        if run_id is not None and not finished:
            with contextlib.suppress(StoreError):  # the error that stopped the run is the one to show
                db.mark_interrupted(run_id, owner)  # what was saved stays; a rerun resumes it
        if keeper is not None:
            keeper.stop()
        if budget is not None:
            budget.close()
        if board is not None:
            ray.kill(board)
        db.close()
        if started_ray:
            ray.shutdown()
        if watchdog is not None and watchdog.stdin is not None:
            watchdog.stdin.close()  # the watchdog ends what the shutdown left (the raylet's agents)


def with_unanswered(
    db: Store,
    run_id: str,
    owner: str,
    info: RunInfo,
    outcomes: Sequence[ShardOutcome],
    places: dict[str, int],
) -> RunInfo:
    """The run's info with the shards' ``no_answer`` problems after the files' own, in input order
    (as one process records them), each also stored once on the run (a resumed run has some)."""
    found = sorted(
        (p for o in outcomes for p in o.unanswered), key=lambda p: places.get(p.trace_id or "", len(places))
    )
    if not found:
        return info
    stored = db.run_info(run_id).problems
    db.add_problems(run_id, [p for p in found if p not in stored], owner=owner)
    problems = [*info.problems, *found]
    return info.model_copy(update={"problems": problems, "unanswered_traces": count_unanswered(problems)})


def _checked_judge(options: AuditOptions) -> Any:
    """The judge's identity, after one check of its endpoint (before any run is opened)."""
    setup = store_judge(options, None, None)

    async def check() -> None:
        try:
            await setup.check()
        finally:
            await setup.aclose()

    run_sync(check)
    return setup.judge.identity


def _connect(ray: ModuleType, address: str | None) -> tuple[bool, subprocess.Popen[bytes] | None]:
    """Join the cluster at ``address`` (or the one already joined, or a new local one): whether
    this call started the connection (and so ends it), and for a local Ray it started itself the
    watchdog (:mod:`~auditor.scale._watchdog`) that ends Ray's processes once this process ends,
    even killed (None: no local Ray started, or no ``/proc``)."""
    if ray.is_initialized():
        return False, None
    _probe(address)
    local = address in (None, "local") and supported()  # ray.init may start a local Ray of its own
    before = children(os.getpid()) if local else set()
    mark = new_mark()
    try:
        with marking(mark if local else None):
            ray.init(
                address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR
            )
    except ConnectionError as err:
        raise UsageError(f"--address {address}: could not connect to a Ray cluster ({err}).") from None
    if local:
        # A cluster given by address (or found by ray.init, e.g. RAY_ADDRESS) is someone else's:
        # only what this ray.init started (new children of this process) is watched.
        return True, start_watchdog(children(os.getpid()) - before, mark)
    return True, None


#: Settings the driver resolves itself and hands over: not copied into the workers' environment.
_RESOLVED = ("home", "db_url", "judge", "base_url", "policy", "llm_rate")


def _probe(address: str | None, timeout: float = 5.0) -> None:
    """A ``HOST:PORT`` address that accepts no connection is one line at once (Ray itself would
    retry for minutes); ``auto``, ``local`` and ``ray://`` addresses are left to Ray."""
    if address is None or address in ("auto", "local") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(
            f"--address {address}: give auto, HOST:PORT (the head's GCS port, 6379) or ray://HOST:10001."
        )
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise UsageError(
            f"--address {address}: no Ray cluster answers there ({err.strerror or err}); start its head "
            "(ray start --head) or pass the address `ray status` shows, or leave --address out for a local Ray."
        ) from None


def _runtime_env() -> dict[str, Any] | None:
    """The driver's other auditor settings (and the API key) from its environment, for the
    workers, so every process audits alike; None when there is none (Ray then reuses its
    workers from run to run: a new environment costs new worker processes)."""
    names = {variable for name, (variable, _) in SETTINGS.items() if name not in _RESOLVED}
    env = {name: value for name, value in os.environ.items() if name in names and value}
    return {"env_vars": env} if env else None


def _listed(files: Sequence[str], limit: int = 3) -> str:
    more = f" and {len(files) - limit} more" if len(files) > limit else ""
    return ", ".join(files[:limit]) + more
