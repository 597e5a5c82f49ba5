"""A run's liveness does not depend on its process exiting cleanly.

Real ``auditor audit`` processes against the fake OpenAI server (slowed by ``latency``): one killed
with SIGKILL mid-audit is resumed by the next audit once its lease runs out, without asking the
model again about the answers it finished and without a duplicate answer; SIGTERM marks the run
``interrupted`` at once; a run whose owner is alive is never taken over. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, create_engine, func, select, update

import tests.test_store
from auditor.cli import cli
from auditor.llm import run_sync
from auditor.policy import load_policy
from auditor.run import audit, audit_async
from auditor.store import Store
from auditor.store._schema import AnswerRecord, RunRecord
from tests.support.fake_openai import FakeOpenAI
from tests.test_audit_runs import INPUTS

pg_url = tests.test_store.pg_url  # the PostgreSQL fixtures, shared with the store tests
fresh_pg_url = tests.test_store.fresh_pg_url

LEASE = 1.0  # seconds: short, so a killed run is abandoned quickly
JUDGE = {"judge": "openai:fake-judge", "cascade": False, "cache": False, "concurrency": 1}


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    if request.param == "postgresql":
        url = str(request.getfixturevalue("fresh_pg_url"))
    Store(url, upgrade=True).close()  # PostgreSQL is migrated on purpose, before any audit
    yield url


def start_audit(
    tmp_path: Path, server: FakeOpenAI, db: str, *options: str, lease: float = LEASE
) -> subprocess.Popen[bytes]:
    """``auditor audit`` on :data:`INPUTS` in a child process, one request at a time."""
    command = "from auditor.cli import main; main()"
    args = ["audit", *map(str, INPUTS), "--policy", "strict", "--judge", "openai:fake-judge"]
    args += ["--base-url", server.base_url, "--no-cascade", "--no-cache", "--db", db, *options]
    env = {**os.environ, "AUDITOR_RUN_LEASE": str(lease), "OPENAI_API_KEY": "sk-test"}
    with (tmp_path / "child.out").open("wb") as out, (tmp_path / "child.err").open("wb") as err:
        return subprocess.Popen([sys.executable, "-c", command, *args], stdout=out, stderr=err, env=env)


def wait_for(condition: Callable[[], bool], child: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            pytest.fail(
                f"the child audit ended ({child.returncode}) or stalled before the test could stop it"
            )
        time.sleep(0.02)


def answers_asked_about(bodies: list[dict[str, Any]], answer_ids: Iterable[str]) -> set[str]:
    """The answers these requests carry claims of (claim ids start with their answer's id)."""
    sent = json.dumps(bodies)
    return {answer_id for answer_id in answer_ids if answer_id in sent}


def answer_rows(engine: Engine) -> int:
    """Answers committed in the store, as another connection sees them."""
    with engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(AnswerRecord)) or 0)


def only_run(db: str) -> tuple[RunRecord, int]:
    """The store's one run and its number of answer rows."""
    with Store(db) as store, store.engine.connect() as conn:
        (run,) = conn.execute(select(RunRecord)).all()
        rows = conn.scalar(
            select(func.count()).select_from(AnswerRecord).where(AnswerRecord.run_id == run.id)
        )
    return run, int(rows or 0)


def test_a_killed_audit_is_resumed_without_asking_again_or_duplicating_answers(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(latency=0.3) as server:
        child = start_audit(tmp_path, server, db_url, "--concurrency", "1")
        # Three answers saved (committed by the run's writer, which may trail the next request by a
        # few milliseconds), the fourth in flight.
        counter = create_engine(db_url)
        try:
            wait_for(lambda: server.requests >= 4 and answer_rows(counter) >= 3, child)
        finally:
            counter.dispose()
        child.send_signal(signal.SIGKILL)  # no handler, no cleanup: only the lease tells
        assert child.wait(timeout=30) == -signal.SIGKILL
        killed, _ = only_run(db_url)
        assert killed.status == "running"
        with Store(db_url) as store:
            saved = store.finished_answer_ids(killed.id)
        assert len(saved) >= 3
        time.sleep(LEASE * 1.5)  # the lease runs out
        server.latency = 0.0
        asked_before = len(server.bodies)
        monkeypatch.setenv("AUDITOR_RUN_LEASE", str(LEASE))
        result, fresh = run_sync(
            lambda: audit_async(
                INPUTS, policy=load_policy("strict"), base_url=server.base_url, db_url=db_url, **JUDGE
            )
        )
        asked = answers_asked_about(server.bodies[asked_before:], [a.answer_id for a in result.answers])
    assert result.run.id == killed.id  # the same run, continued
    assert asked and not asked & saved  # no call for an answer finished before the kill
    assert len(fresh) == len(result.answers) - len(saved)
    run, rows = only_run(db_url)
    assert run.status == "finished" and rows == len(result.answers) == 13  # every answer once


def test_sigterm_marks_the_run_interrupted_at_once(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with FakeOpenAI(latency=0.3) as server:
        child = start_audit(tmp_path, server, db, "--concurrency", "1")
        wait_for(lambda: server.requests >= 3, child)
        child.terminate()  # what `kill PID`, systemd or a container stop sends
        assert child.wait(timeout=30) == 130  # the Ctrl-C exit (128 + SIGINT), with the resume command
        stopped, rows = only_run(db)
        assert stopped.status == "interrupted" and rows >= 2
        assert "Traceback" not in (tmp_path / "child.err").read_text(encoding="utf-8")
        server.latency = 0.0
        result = audit(INPUTS, policy=load_policy("strict"), base_url=server.base_url, db_url=db, **JUDGE)
    assert result.run.id == stopped.id  # resumed at once: no lease to wait for


def test_a_live_run_is_not_taken_over_by_a_second_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with FakeOpenAI(latency=2.5) as server:  # each answer takes longer than the lease
        child = start_audit(tmp_path, server, db, "--concurrency", "16")
        wait_for(lambda: server.requests >= 1, child)
        time.sleep(LEASE * 1.5)  # past the lease, with no answer saved meanwhile
        live, _ = only_run(db)
        assert live.heartbeat_at is not None
        assert (datetime.now(UTC) - live.heartbeat_at).total_seconds() < LEASE  # renewed by its timer
        monkeypatch.setenv("AUDITOR_RUN_LEASE", str(LEASE))
        second = audit(
            INPUTS,
            policy=load_policy("strict"),
            base_url=server.base_url,
            db_url=db,
            **{**JUDGE, "concurrency": 16},
        )
        assert child.wait(timeout=60) == 0, (tmp_path / "child.err").read_text(encoding="utf-8")
    assert second.run.id != live.id
    with Store(db) as store:
        runs = {row.id: row for row in store.list_runs()}
    assert runs[live.id].status == "finished" and runs[live.id].answers_saved == len(second.answers)
    assert runs[second.run.id].status == "finished"


LONG_LEASE = 600.0  # seconds: nothing in these tests waits for it to run out


def test_a_killed_audit_is_listed_interrupted_and_resumed_at_once_on_its_host(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(latency=0.3) as server:
        child = start_audit(tmp_path, server, db_url, "--concurrency", "1", lease=LONG_LEASE)
        counter = create_engine(db_url)
        try:
            wait_for(lambda: answer_rows(counter) >= 2, child)
        finally:
            counter.dispose()
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
        killed, _ = only_run(db_url)
        assert killed.status == "running" and killed.owner.split(":")[1] == str(child.pid)
        with Store(db_url) as store:
            (listed,) = store.list_runs()
        assert listed.status == "interrupted"  # its process is gone: no need to wait 600 s
        server.latency = 0.0
        monkeypatch.setenv("AUDITOR_RUN_LEASE", str(LONG_LEASE))
        result = audit(INPUTS, policy=load_policy("strict"), base_url=server.base_url, db_url=db_url, **JUDGE)
    assert result.run.id == killed.id and result.run.superseded == []  # resumed, well inside the lease
    run, rows = only_run(db_url)
    assert run.status == "finished" and rows == len(result.answers) == 13


def dead_pid() -> int:
    """The process id of a process that has exited (and been reaped)."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)
    return gone.pid


def test_a_lapsed_or_dead_owner_is_listed_interrupted_and_a_live_one_running(db_url: str) -> None:
    first = audit(INPUTS[:1], policy=load_policy("strict"), db_url=db_url)
    host = socket.gethostname()
    cases = {
        f"elsewhere:{os.getpid()}:a": (datetime.now(UTC), "running"),  # another host, inside its lease
        f"elsewhere:{os.getpid()}:b": (datetime.now(UTC) - timedelta(hours=2), "interrupted"),  # lapsed
        f"{host}:{dead_pid()}:c": (datetime.now(UTC), "interrupted"),  # this host, process gone
        f"{host}:{os.getpid()}:d": (datetime.now(UTC), "running"),  # this process: alive
    }
    for owner, (beat, expected) in cases.items():
        with Store(db_url) as store, store.engine.begin() as conn:
            conn.execute(
                update(RunRecord)
                .where(RunRecord.id == first.run.id)
                .values(status="running", owner=owner, heartbeat_at=beat, lease_seconds=LONG_LEASE)
            )
        with Store(db_url) as store:
            (row,) = store.list_runs()
        assert row.status == expected, owner


def test_a_rerun_that_finishes_beside_a_dead_owners_run_says_it_superseded_it(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_HOME", str(tmp_path / "home"))
    first = audit(INPUTS[:2], policy=load_policy("strict"), db_url=db_url)
    owner = f"{socket.gethostname()}:{dead_pid()}:x"
    with Store(db_url) as store, store.engine.begin() as conn:
        conn.execute(
            update(RunRecord)
            .where(RunRecord.id == first.run.id)
            .values(status="running", owner=owner, heartbeat_at=datetime.now(UTC), lease_seconds=LONG_LEASE)
        )
    paths = [str(p) for p in INPUTS[:2]]
    result = CliRunner().invoke(cli, ["audit", *paths, "--policy", "strict", "--db", db_url, "--no-resume"])
    assert result.exit_code == 0, result.output
    assert (
        f"Run {first.run.id} was left running by a process that is gone: marked superseded" in result.output
    )
    with Store(db_url) as store:
        runs = {row.id: row.status for row in store.list_runs()}
    assert runs.pop(first.run.id) == "superseded" and list(runs.values()) == ["finished"]
    # A superseded run is not resumed: the next audit starts a run of its own.
    again = audit(INPUTS[:2], policy=load_policy("strict"), db_url=db_url)
    assert again.run.id not in {first.run.id, *runs} and again.run.superseded == []
