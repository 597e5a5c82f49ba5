"""The audit workers in-process: a trace whose audit cannot reach the judge is postponed, not lost;
one whose worker died after committing its audit is recorded, not audited again; the run and the
trace are marked done in one transaction."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from auditor.llm import run_sync
from auditor.policy import load_policy
from auditor.run import audit, audit_async
from auditor.serve import serve_config
from auditor.serve._workers import AuditWorkers
from auditor.store import FinishHook, Intake, Store
from auditor.trace import SpanReceiver, get_adapter
from tests.conftest import FIXTURES

PB = (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()


def test_an_unreachable_judge_postpones_the_audit_instead_of_recording_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_RUN_LEASE", "0.3")
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    reader = get_adapter("otlp-proto")
    assert isinstance(reader, SpanReceiver)
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
    assert isinstance(reader, SpanReceiver)
    with Store(db) as store:
        intake = Intake(store)
        intake.receive(reader.receive(PB).spans)
        # What a worker does up to its last step: claim, write the file, audit it into the store...
        held = intake.claim("dead", quiet=0.0, root_wait=600.0, lease=0.3)
        assert held is not None
        path = tmp_path / "claimed.otlp.jsonl"
        path.write_text("".join(record + "\n" for record in held.records), encoding="utf-8")
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
    assert isinstance(reader, SpanReceiver)
    with Store(db) as store:
        intake = Intake(store)
        intake.receive(reader.receive(PB).spans)
        held = intake.claim("w", quiet=0.0, root_wait=600.0, lease=30.0)
        assert held is not None
        path = tmp_path / "claimed.otlp.jsonl"
        path.write_text("".join(record + "\n" for record in held.records), encoding="utf-8")

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
