"""The audit workers in-process: a trace whose audit cannot reach the judge is postponed, not lost."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from auditor.policy import load_policy
from auditor.serve import serve_config
from auditor.serve._workers import AuditWorkers
from auditor.store import Intake, Store
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
