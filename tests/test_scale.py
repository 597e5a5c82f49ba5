"""``--engine ray``: the same audit on a real local Ray cluster (``ray.init(num_cpus=2)``).

One cluster serves every Ray test of the session (``ray_cluster``, tests/conftest.py). The tests
show what issue 17 asks: the same answers, verdicts, problems and summary as one process (SQLite and
PostgreSQL); a worker process killed for real (SIGKILL) and the audit still complete, each answer
stored once; a task that fails for good names its traces and leaves the run to resume; a second
run makes no LLM call (counted at the fake server); the cluster-wide rate limit holds across
workers (requests per second counted at the server); without Ray, one line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select

import tests.test_store
from auditor.errors import ShardError
from auditor.policy import load_policy
from auditor.results import AuditResult
from auditor.run import audit
from auditor.store import Store
from auditor.store._schema import AnswerRecord, RunRecord
from auditor.trace import read_traces
from tests.conftest import FIXTURES, ROOT
from tests.support.fake_openai import FakeOpenAI

pg_url = tests.test_store.pg_url  # the PostgreSQL fixtures, shared with the store tests
fresh_pg_url = tests.test_store.fresh_pg_url

INPUTS = [FIXTURES, ROOT / "examples" / "traces"]
EXAMPLES = [ROOT / "examples" / "traces"]
LLM = {"judge": "openai:fake-judge", "cascade": False}


def on_ray(paths: list[Path], db: str, **options: Any) -> AuditResult:
    from auditor.scale import audit_on_ray

    return audit_on_ray(paths, policy=load_policy("strict"), db_url=db, **options)


def single(paths: list[Path], db: str, **options: Any) -> AuditResult:
    return audit(paths, policy=load_policy("strict"), db_url=db, **options)


def same_audit(left: AuditResult, right: AuditResult) -> None:
    """Answer for answer (order, evidence, claims, verdicts), problems, inputs and summary alike."""
    assert [a.answer_id for a in left.answers] == [a.answer_id for a in right.answers]
    for a, b in zip(left.answers, right.answers, strict=True):
        assert a.model_dump(mode="json") == b.model_dump(mode="json"), a.answer_id
    assert left.run.problems == right.run.problems
    assert left.run.inputs == right.run.inputs
    assert left.run.policy == right.run.policy and left.run.judge == right.run.judge
    assert left.summary == right.summary


def stored_rows(db: str, run_id: str) -> tuple[int, int]:
    """Answer rows of the run, and distinct answer ids among them."""
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            rows = conn.scalar(select(func.count()).where(AnswerRecord.run_id == run_id))
            distinct = conn.scalar(
                select(func.count(func.distinct(AnswerRecord.answer_id))).where(AnswerRecord.run_id == run_id)
            )
        return int(rows or 0), int(distinct or 0)
    finally:
        engine.dispose()


def latest_run_answers(db: str) -> int:
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            run_id = conn.scalar(select(RunRecord.id).order_by(RunRecord.started_at.desc()).limit(1))
            if run_id is None:
                return 0
            return int(conn.scalar(select(func.count()).where(AnswerRecord.run_id == run_id)) or 0)
    except Exception:  # the schema is still being made
        return 0
    finally:
        engine.dispose()


def shard_workers() -> list[int]:
    """The pids of Ray worker processes running a shard task now (Ray titles them ``ray::audit_shard``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(b"ray::audit_shard"):
            found.append(int(entry.name))
    return found


def in_thread(call: Callable[[], AuditResult]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = call()
        except BaseException as err:
            out["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def kill_a_worker_once_saving(db: str, thread: threading.Thread, timeout: float = 90) -> int:
    """SIGKILL the shard worker once the run holds an answer; its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and thread.is_alive():
        pids = shard_workers()
        if pids and latest_run_answers(db) >= 1:
            os.kill(pids[0], signal.SIGKILL)
            return pids[0]
        time.sleep(0.05)
    pytest.fail("the shard task never saved an answer while running")


# -- the same audit ----------------------------------------------------------------------------------


@pytest.mark.ray
def test_the_cluster_gives_the_single_process_audit(ray_cluster: Any, tmp_path: Path) -> None:
    expected = single(INPUTS, f"sqlite:///{tmp_path / 'one.db'}")
    db = f"sqlite:///{tmp_path / 'ray.db'}"
    result = on_ray(INPUTS, db, workers=2)
    assert len(result.answers) >= 30 and result.run.problems  # the fixtures hold problems too
    same_audit(result, expected)
    with Store(f"sqlite:///{tmp_path / 'one.db'}") as store:
        kept = store.load_traces(expected.run.id)
    with Store(db) as store:
        assert store.run_status(result.run.id) == "finished"
        same_audit(store.load_run(result.run.id), result)  # the stored run is the result
        # The shards kept their traces at their places in the input: a re-audit reads them so.
        assert store.load_traces(result.run.id) == kept
    assert stored_rows(db, result.run.id) == (len(result.answers), len(result.answers))


@pytest.mark.ray
def test_the_cluster_audit_on_postgresql(ray_cluster: Any, fresh_pg_url: str, tmp_path: Path) -> None:
    Store(fresh_pg_url, upgrade=True).close()  # PostgreSQL is migrated on purpose
    expected = single(EXAMPLES, f"sqlite:///{tmp_path / 'one.db'}")
    result = on_ray(EXAMPLES, fresh_pg_url, workers=2)
    same_audit(result, expected)
    assert stored_rows(fresh_pg_url, result.run.id) == (len(result.answers), len(result.answers))


@pytest.mark.ray
def test_the_command_line_engine_option(ray_cluster: Any, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from auditor.cli import cli

    db = f"sqlite:///{tmp_path / 'ray.db'}"
    args = ["audit", str(EXAMPLES[0]), "--policy", "strict", "--db", db, "--json", "-"]
    local = CliRunner().invoke(cli, args)
    clustered = CliRunner().invoke(cli, [*args, "--engine", "ray", "--workers", "2"])
    assert clustered.exit_code == local.exit_code, clustered.output
    shown, expected = json.loads(clustered.stdout), json.loads(local.stdout)
    assert shown["answers"] == expected["answers"] and shown["summary"] == expected["summary"]
    refused = CliRunner().invoke(cli, [*args, "--engine", "ray", "--trace-id", "abc"])
    assert refused.exit_code == 2 and "--trace-id selects one trace" in refused.output


@pytest.mark.ray
def test_a_stored_run_is_reaudited_on_the_cluster_as_in_one_process(ray_cluster: Any, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from auditor.cli import cli
    from auditor.run import reaudit
    from auditor.scale import reaudit_on_ray

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    source = on_ray(INPUTS, db, workers=2)  # under the strict policy, its traces kept by the shards
    expected = reaudit(source.run.id, policy=load_policy("default"), db_url=db)
    result = reaudit_on_ray(source.run.id[:12], policy=load_policy("default"), db_url=db, workers=2)
    assert result.run.policy and result.run.policy.name == "default"
    same_audit(result, expected)
    with Store(db) as store:
        assert store.reaudit_of(result.run.id) == source.run.id
    shown = CliRunner().invoke(
        cli, ["reaudit", "--run", source.run.id[:12], "--db", db, "--engine", "ray", "--json", "-"]
    )
    # 4: the fixtures hold traces with model calls and no answer (tests/fixtures/unanswered/)
    assert shown.exit_code == 4, shown.output
    assert json.loads(shown.stdout)["run"]["unanswered_traces"] == source.run.unanswered_traces > 0
    assert json.loads(shown.stdout)["summary"] == source.summary  # its own policy, as stored


# -- failures ------------------------------------------------------------------------------------


@pytest.mark.ray
def test_a_killed_worker_is_retried_and_nothing_is_stored_twice(ray_cluster: Any, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ray.db'}"
    with FakeOpenAI(latency=0.3) as server:
        options = {**LLM, "base_url": server.base_url, "cache": False, "concurrency": 1}
        expected = single(EXAMPLES, f"sqlite:///{tmp_path / 'one.db'}", **options)
        alone = server.requests
        thread, out = in_thread(lambda: on_ray(EXAMPLES, db, workers=1, **options))
        killed = kill_a_worker_once_saving(db, thread)
        thread.join(120)
        on_cluster = server.requests - alone
    assert "error" not in out, out.get("error")
    result: AuditResult = out["result"]
    assert killed not in shard_workers()
    same_audit(result, expected)
    # The retried task re-audited only what was not committed (what the killed worker asked
    # after its last save is asked again). The run's usage is what its saves carried: every call
    # but those lost with the killed worker after its last save, never fewer than one process's.
    assert alone <= on_cluster < 2 * alone
    assert result.run.usage is not None and expected.run.usage is not None
    used = result.run.usage["llm"]
    assert expected.run.usage["llm"]["calls"] == alone
    assert alone <= used["calls"] <= on_cluster
    assert used["attempts"] == used["calls"] and used["by_kind"] == {"judge": used["calls"]}
    assert stored_rows(db, result.run.id) == (len(result.answers), len(result.answers))


@pytest.mark.ray
def test_a_shard_that_fails_for_good_names_its_traces_and_a_rerun_resumes(
    ray_cluster: Any, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'ray.db'}"
    with FakeOpenAI(latency=0.3) as server:
        options = {**LLM, "base_url": server.base_url, "cache": False, "concurrency": 1}
        thread, out = in_thread(lambda: on_ray(EXAMPLES, db, workers=1, max_retries=0, **options))
        kill_a_worker_once_saving(db, thread)
        thread.join(120)
        error = out.get("error")
        assert isinstance(error, ShardError), out
        assert "run the same command again to resume" in str(error)
        with Store(db) as store:
            (run,) = store.list_runs()
            assert store.run_status(run.id) == "interrupted"
            saved = store.finished_answer_ids(run.id)
            problems = store.load_run(run.id).run.problems
        assert 1 <= len(saved) < 6
        not_audited = {p.trace_id for p in problems if p.reason.startswith("not audited")}
        assert not_audited == {t.trace_id for t in read_traces(EXAMPLES).traces}  # the one shard's
        calls = server.requests
        resumed = on_ray(EXAMPLES, db, workers=1, **options)  # the same command again
        assert resumed.run.id == run.id
        assert server.requests - calls == len(resumed.answers) - len(saved)  # only what was missing
    assert stored_rows(db, run.id) == (len(resumed.answers), len(resumed.answers))


# -- the LLM budget and the cache ----------------------------------------------------------------------


@pytest.mark.ray
def test_a_second_run_makes_no_llm_call_on_any_worker(ray_cluster: Any, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ray.db'}"
    with FakeOpenAI() as server:
        options = {**LLM, "base_url": server.base_url}
        first = on_ray(INPUTS, db, workers=2, **options)
        calls = server.requests
        assert calls >= 20 and first.run.usage and first.run.usage["llm"]["calls"] == calls
        second = on_ray(INPUTS, db, workers=2, **options)
        assert server.requests == calls  # every verdict came from the store's cache
    assert second.run.id != first.run.id
    assert second.run.usage and second.run.usage["llm"]["calls"] == 0
    looked_up = first.run.usage["cache"]["hits"] + first.run.usage["cache"]["misses"]
    assert second.run.usage["cache"] == {"hits": looked_up, "misses": 0}
    verdicts = [[(c.claim_id, c.verdict) for c in a.claims or []] for a in first.answers]
    assert [[(c.claim_id, c.verdict) for c in a.claims or []] for a in second.answers] == verdicts
    settled = {c.settled_by for a in second.answers for c in a.claims or [] if c.verdict is not None}
    assert settled == {"cache"}


@pytest.mark.ray
def test_the_rate_limit_holds_across_workers(ray_cluster: Any, tmp_path: Path) -> None:
    rate = 6.0  # requests per second for the whole cluster; the bucket's burst is 6 too
    with FakeOpenAI() as server:
        options = {**LLM, "base_url": server.base_url, "cache": False, "concurrency": 8}
        started = time.monotonic()
        result = on_ray(INPUTS, f"sqlite:///{tmp_path / 'ray.db'}", workers=2, rate_limit=rate, **options)
        elapsed = time.monotonic() - started
        sent = server.requests
        busiest = server.most_in_window(1.0)
    assert result.summary["unjudged"] == 0
    assert sent >= 30  # enough to exceed the rate many times over without the budget
    assert busiest <= rate + 6, f"{busiest} requests within one second"
    assert elapsed >= (sent - 6) / rate  # the bucket paced them


# -- without Ray ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_without_ray_the_engine_is_one_line(tmp_path: Path) -> None:
    script = "import sys; sys.modules['ray'] = None\nfrom auditor.cli import main\nmain()\n"
    args = ["audit", str(EXAMPLES[0]), "--engine", "ray", "--db", f"sqlite:///{tmp_path / 'x.db'}"]
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "Error: --engine ray needs Ray: pip install 'trace-auditor[ray]'"
    ]
    assert not (tmp_path / "x.db").exists()  # nothing was opened


# -- idempotent saves ------------------------------------------------------------------------------------


def test_a_save_if_absent_leaves_the_stored_answer_alone(tmp_path: Path) -> None:
    from tests.test_store import answer, run_info

    with Store(f"sqlite:///{tmp_path / 's.db'}") as store:
        run_id = store.begin_run(run_info())
        store.save_answer(run_id, answer("a1"))
        changed = answer("a1").model_copy(update={"question": "changed?"})
        store.save_answer(run_id, changed, if_absent=True)
        store.save_answer(run_id, answer("a2"), if_absent=True)
        loaded = store.load_run(run_id)
    assert [a.answer_id for a in loaded.answers] == ["a1", "a2"]
    assert loaded.answers[0].question != "changed?"  # the retry's copy was not written
    assert stored_rows(f"sqlite:///{tmp_path / 's.db'}", run_id) == (2, 2)
