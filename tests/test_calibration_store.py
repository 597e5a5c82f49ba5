"""Calibrations in the store: saved with the judge identity, the newest found again; on both databases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import inspect

import tests.test_store
from auditor.calibration import Calibration
from auditor.calibration._agreement import level_report
from auditor.judges import JudgeIdentity
from auditor.store import Store
from auditor.store._migrate import head_revision
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (fixtures)

store = tests.test_store.store  # the fixture, re-exported for pytest

JUDGE = JudgeIdentity(kind="openai", model="gpt-x", prompt_version="judge-3")


def make(id_: str, when: datetime, judge: JudgeIdentity = JUDGE) -> Calibration:
    report = level_report("answer", {}, resamples=10)
    return Calibration(
        id=id_,
        created_at=when,
        auditor_version="0.1.0",
        judge=judge,
        policy=None,
        decomposer="rules",
        labelled_path="ünï.jsonl",
        labelled_sha256="ab",
        records=3,
        claim=report,
        answer=report,
        notes=["n"],
    )


def test_calibrations_table_is_at_head(store: Store) -> None:
    assert store.revision() == head_revision()
    assert "calibrations" in inspect(store.engine).get_table_names()


def test_latest_calibration_by_judge_identity(store: Store) -> None:
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    assert store.latest_calibration(JUDGE) is None
    store.save_calibration(make("old", t0))
    newest = make("new", t0 + timedelta(days=1))
    store.save_calibration(newest)
    offline = JudgeIdentity(kind="offline", prompt_version="offline-1", approximate=True)
    store.save_calibration(make("off", t0 + timedelta(days=2), offline))
    assert store.latest_calibration(JUDGE) == newest
    assert store.latest_calibration(offline) == make("off", t0 + timedelta(days=2), offline)
    assert store.latest_calibration(JUDGE.model_copy(update={"model": "gpt-y"})) is None
    assert store.latest_calibration(JUDGE.model_copy(update={"prompt_version": None})) is None
