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
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, func, select

import tests.test_store
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


def start_audit(tmp_path: Path, server: FakeOpenAI, db: str, *options: str) -> subprocess.Popen[bytes]:
    """``auditor audit`` on :data:`INPUTS` in a child process, one request at a time."""
    command = "from auditor.cli import main; main()"
    args = ["audit", *map(str, INPUTS), "--policy", "strict", "--judge", "openai:fake-judge"]
    args += ["--base-url", server.base_url, "--no-cascade", "--no-cache", "--db", db, *options]
    env = {**os.environ, "AUDITOR_RUN_LEASE": str(LEASE), "OPENAI_API_KEY": "sk-test"}
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
