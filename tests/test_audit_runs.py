"""Runs in the store: resume after an interrupt, re-audits and re-rendering a stored run."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.audit import Progress, audit, audit_async
from auditor.cli import cli
from auditor.llm import run_sync
from auditor.policy import load_policy
from auditor.store import Store
from tests.conftest import FIXTURES, ROOT

INPUTS = sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))


def ctrl_c(progress: Progress) -> None:
    if progress.answers_done == 3:
        signal.raise_signal(signal.SIGINT)  # what a user's Ctrl-C does to the running event loop


def crash(progress: Progress) -> None:
    if progress.answers_done == 3:
        raise OSError("disk full")


@pytest.mark.parametrize(("stop", "raised"), [(ctrl_c, KeyboardInterrupt), (crash, OSError)])
def test_interrupted_run_is_marked_and_resumes_without_redoing_finished_answers(
    tmp_path: Path, stop: Callable[[Progress], None], raised: type[BaseException]
) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    policy = load_policy("strict")
    with pytest.raises(raised):
        audit(INPUTS, policy=policy, db_url=db, on_progress=stop)
    with Store(db) as store:
        (row,) = store.list_runs()
        assert row.status == "interrupted" and row.answers_saved >= 3
        saved = row.answers_saved
    result, fresh = run_sync(lambda: audit_async(INPUTS, policy=policy, db_url=db))
    assert result.run.id == row.id  # the same run, continued
    assert len(fresh) == len(result.answers) - saved  # finished answers were not redone
    uninterrupted = audit(INPUTS, policy=policy, store=False)
    assert [a.model_dump(exclude={"generated_at"}) for a in result.answers] == [
        a.model_dump(exclude={"generated_at"}) for a in uninterrupted.answers
    ]
    assert result.summary == uninterrupted.summary
    with Store(db) as store:
        (row,) = store.list_runs()
        assert row.status == "finished" and row.answers_saved == len(result.answers)


def test_re_auditing_the_same_traces_stores_each_trace_once(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    first = audit(INPUTS[:2], db_url=db)
    second = audit(INPUTS[:2], db_url=db)
    assert first.run.id != second.run.id
    with Store(db) as store:
        from sqlalchemy import func, select

        from auditor.store._schema import TraceRecord

        with store.engine.connect() as conn:
            traces = conn.scalar(select(func.count()).select_from(TraceRecord))
    assert traces == sum(i.traces for i in first.run.inputs)


def test_stored_run_re_renders_the_same_report(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    runner = CliRunner()
    live = tmp_path / "live.html"
    out = runner.invoke(
        cli, ["audit", *map(str, INPUTS[:3]), "--policy", "strict", "--db", db, "--report", str(live)]
    )
    assert out.exit_code == 0, out.output
    listed = runner.invoke(cli, ["runs", "--db", db])
    assert listed.exit_code == 0 and "strict" in listed.output
    with Store(db) as store:
        run_id = store.list_runs()[0].id
    again = tmp_path / "again.html"
    out = runner.invoke(cli, ["report", "--run", run_id[:8], "-o", str(again), "--db", db])
    assert out.exit_code == 0, out.output
    assert again.read_text() == live.read_text()


def test_unknown_run_is_a_usage_error(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        cli,
        ["report", "--run", "nope", "-o", str(tmp_path / "x.html"), "--db", f"sqlite:///{tmp_path / 'r.db'}"],
    )
    assert out.exit_code == 2 and "no run" in out.output


def test_audit_shows_the_corrected_share_beside_the_raw_one_once_the_judge_is_calibrated(
    tmp_path: Path,
) -> None:
    from auditor.audit import calibrate

    dev = ROOT.parent / "shared" / "data" / "labelled" / "dev.jsonl"
    if not dev.exists():
        pytest.skip("the labelled dev set is not beside the project")
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(
        "".join(dev.read_text(encoding="utf-8").splitlines(keepends=True)[:80]), encoding="utf-8"
    )
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    before = audit(INPUTS, db_url=db)
    assert "corrected_unsupported" not in before.summary or before.summary["corrected_unsupported"] is None
    calibration = calibrate(labelled, judge="offline", db_url=db)
    after = audit(INPUTS, db_url=db, resume=False)
    corrected = after.summary["corrected_unsupported"]
    assert corrected["calibration_id"] == calibration.id
    assert corrected["raw"] == after.summary["answers_with_unsupported_claim"]  # the raw figure stays
    assert corrected["status"] in ("corrected", "cannot_correct")
