"""The audit workers in-process: a trace whose audit cannot reach the judge is postponed, not lost;
one whose worker died after committing its audit is recorded, not audited again; the run and the
trace are marked done in one transaction."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

import tests.test_store
from auditor.llm import run_sync
from auditor.policy import load_policy
from auditor.run import audit, audit_async
from auditor.serve import create_app, serve_config
from auditor.serve._server import receivers
from auditor.serve._workers import AuditWorkers, json_lines
from auditor.store import FinishHook, Intake, Store, TraceAudit
from auditor.store._intake import MAX_ATTEMPTS, RETRY_BASE
from auditor.trace import BinaryRecords, SpanReceiver, get_adapter
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

PB = (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()
# SQLite and PostgreSQL stores, as the store tests make them.
pg_url, fresh_pg_url, db_url = tests.test_store.pg_url, tests.test_store.fresh_pg_url, tests.test_store.db_url


def test_an_unreachable_judge_postpones_the_audit_instead_of_recording_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_RUN_LEASE", "0.3")
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    reader = get_adapter("otlp-proto")
    assert isinstance(reader, SpanReceiver) and isinstance(reader, BinaryRecords)
    with Store(db) as store:
        intake = Intake(store)
        assert intake.receive(reader.receive(PB).spans) == 17
        config = serve_config(db_url=db, judge="openai:m", base_url="http://127.0.0.1:9/v1", quiet=0.01)
        workers = AuditWorkers(config, intake, load_policy()).start()
        try:
            time.sleep(1.5)  # several claims, each refused by the closed port
        finally:
            workers.stop()
        assert intake.audits() == [] and intake.pending() == 1


def test_a_worker_killed_between_its_committed_audit_and_the_done_mark_is_not_audited_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_RUN_LEASE", "0.3")
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    reader = get_adapter("otlp-proto")
    assert isinstance(reader, SpanReceiver) and isinstance(reader, BinaryRecords)
    with Store(db) as store:
        intake = Intake(store)
        intake.receive(reader.receive(PB).spans)
        # What a worker does up to its last step: claim, write the file, audit it into the store...
        held = intake.claim("dead", quiet=0.0, root_wait=600.0, lease=0.3)
        assert held is not None
        path = tmp_path / "claimed.otlp.jsonl"
        path.write_text("".join(line + "\n" for line in json_lines(held.records, reader)), encoding="utf-8")
        committed = audit([path], format="otlp-json", db_url=db)
        # ... and then it dies before `finish`: the trace is still pending once its lease runs out.
        assert intake.pending() == 1 and intake.audits() == []
        time.sleep(0.4)
        config = serve_config(db_url=db, quiet=0.01)
        workers = AuditWorkers(config, intake, load_policy()).start()
        try:
            deadline = time.monotonic() + 20
            while not intake.audits() and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            workers.stop()
        assert [(a.generation, a.run_id, a.error) for a in intake.audits()] == [(1, committed.run.id, None)]
        assert [r.id for r in store.list_runs(10)] == [committed.run.id]  # no second run
        assert intake.pending() == 0


def test_the_run_and_the_trace_are_marked_done_in_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_RUN_LEASE", "0.3")
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    reader = get_adapter("otlp-proto")
    assert isinstance(reader, SpanReceiver) and isinstance(reader, BinaryRecords)
    with Store(db) as store:
        intake = Intake(store)
        intake.receive(reader.receive(PB).spans)
        held = intake.claim("w", quiet=0.0, root_wait=600.0, lease=30.0)
        assert held is not None
        path = tmp_path / "claimed.otlp.jsonl"
        path.write_text("".join(line + "\n" for line in json_lines(held.records, reader)), encoding="utf-8")

        def dies_before_the_commit(session: Session, run_id: str) -> None:
            intake.finish_hook(held, "w")(session, run_id)
            raise RuntimeError("the process dies before the commit")

        def audit_with(hook: FinishHook) -> str:
            result, _ = run_sync(lambda: audit_async([path], format="otlp-json", db_url=db, finish_with=hook))
            return result.run.id

        with pytest.raises(RuntimeError, match="dies before the commit"):
            audit_with(dies_before_the_commit)
        # Neither half committed: the run is still open, the trace still pending.
        assert [r.status for r in store.list_runs(10)] == ["running"]
        assert intake.audits() == [] and intake.pending() == 1

        time.sleep(0.4)  # the open run's lease runs out: the next audit resumes it
        recorded: list[bool] = []
        run_id = audit_with(intake.finish_hook(held, "w", recorded.append))
        assert recorded == [True]
        assert [(r.id, r.status) for r in store.list_runs(10)] == [(run_id, "finished")]
        assert [(a.generation, a.run_id) for a in intake.audits()] == [(1, run_id)]
        assert intake.pending() == 0


def audit_until(intake: Intake, done: Callable[[list[TraceAudit]], bool], workers: AuditWorkers) -> None:
    deadline = time.monotonic() + 60
    try:
        while not done(intake.audits()):
            if time.monotonic() > deadline:
                raise AssertionError(f"the audits never got there: {intake.audits()}")
            time.sleep(0.05)
    finally:
        workers.stop()


@pytest.mark.parametrize("failures", [2, 10])
def test_an_audit_whose_judge_calls_all_fail_is_recorded_and_retried_with_backoff(
    db_url: str, monkeypatch: pytest.MonkeyPatch, failures: int
) -> None:
    with Store(db_url, upgrade=True) as store:
        check_retries(store, db_url, monkeypatch, failures)


def check_retries(store: Store, db_url: str, monkeypatch: pytest.MonkeyPatch, failures: int) -> None:
    lease = 0.4  # short, so the backoff is quick; under 0.4 s a loaded machine let runs overlap
    monkeypatch.setenv("AUDITOR_RUN_LEASE", str(lease))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    reader = get_adapter("otlp-proto")
    assert isinstance(reader, SpanReceiver)
    intake = Intake(store)
    # A trace whose one claim the cascade leaves to the LLM judge (single_retrieval's it decides).
    intake.receive(reader.receive((FIXTURES / "changed_figure" / "openinference.otlp.pb").read_bytes()).spans)
    with FakeOpenAI() as judge:
        # The one judge call of an attempt fails after its four retries (the key check passes).
        for _ in range(failures * 5):
            judge.enqueue("500", retry_after=0)
        config = serve_config(db_url=db_url, judge="openai:m", base_url=judge.base_url, quiet=0.01)
        workers = AuditWorkers(config, intake, load_policy()).start()
        first_seen: list[str | None] = []

        def settled(audits: list[TraceAudit]) -> bool:
            if audits and not first_seen:
                first_seen.append(audits[0].error)
            return len(audits) == 1 and intake.pending() == 0

        audit_until(intake, settled, workers)
    runs = sorted(store.list_runs(20), key=lambda r: r.started_at)
    attempts = min(failures, MAX_ATTEMPTS)
    assert [r.status for r in runs[:attempts]] == ["failed"] * attempts
    # The waits double: RETRY_BASE leases before the second attempt, twice that before the third...
    gaps = [(b.started_at - a.started_at).total_seconds() for a, b in itertools.pairwise(runs)]
    for n, gap in enumerate(gaps):
        assert gap >= lease * RETRY_BASE * 2**n, gaps
    (final,) = intake.audits()
    assert first_seen and first_seen[0] is not None and "attempt 1 of 4" in first_seen[0]
    assert "every judge call failed (1 of 1" in first_seen[0]
    if failures < MAX_ATTEMPTS:
        assert [r.status for r in runs] == ["failed"] * failures + ["finished"]
        assert (final.run_id, final.error) == (runs[-1].id, None)
    else:  # bounded: the failure of the last attempt stands, and is shown
        assert len(runs) == MAX_ATTEMPTS and final.run_id == runs[-1].id
        assert final.error is not None and "attempt 4 of 4, given up" in final.error
        app = create_app(serve_config(db_url=db_url), store, intake, receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as client:
            (shown,) = client.get("/api/audits").json()["audits"]
        assert shown["error"] == final.error and shown["run_id"] == final.run_id
