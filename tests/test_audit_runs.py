"""Runs in the store: resume after an interrupt, re-audits and re-rendering a stored run."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.errors import StoreError
from auditor.llm import run_sync
from auditor.policy import load_policy
from auditor.run import Progress, audit, audit_async
from auditor.store import Store
from auditor.trace import read_traces
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


def test_a_resumed_run_records_the_traces_its_first_process_died_before_committing(tmp_path: Path) -> None:
    # The traces are recorded on the run's writer thread, ahead of its answers: a process killed
    # before that commit leaves a run with no traces, which the resuming run records.
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    policy = load_policy("strict")
    with pytest.raises(KeyboardInterrupt):
        audit(INPUTS, policy=policy, db_url=db, on_progress=ctrl_c)
    with Store(db) as store:
        (row,) = store.list_runs()
        with store.engine.begin() as conn:
            from sqlalchemy import delete

            from auditor.store._schema import RunTraceRecord

            conn.execute(delete(RunTraceRecord).where(RunTraceRecord.run_id == row.id))
        with pytest.raises(StoreError, match="no traces kept"):
            store.load_traces(row.id)
    result, _ = run_sync(lambda: audit_async(INPUTS, policy=policy, db_url=db))
    assert result.run.id == row.id
    with Store(db) as store:
        kept = store.load_traces(row.id)
    assert [t.model_dump() for t in kept] == [t.model_dump() for t in read_traces(INPUTS).traces]


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
    db = f"sqlite:///{tmp_path / 'r.db'}"
    Store(db).close()  # a store that exists (`auditor report` never creates one)
    out = CliRunner().invoke(cli, ["report", "--run", "nope", "-o", str(tmp_path / "x.html"), "--db", db])
    assert out.exit_code == 2 and "no run" in out.output


@pytest.mark.slow
def test_audit_shows_the_corrected_share_beside_the_raw_one_once_the_judge_is_calibrated(
    tmp_path: Path,
) -> None:
    from auditor.run import calibrate

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


# --- outputs are checked before any work; zero matches are errors ------------------------------------


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    return lines[0]


@pytest.mark.parametrize(
    ("option", "where", "says"),
    [
        ("--report", "missing/report.html", "the folder {tmp}/missing does not exist; create it (mkdir -p"),
        ("--json", "missing/result.json", "the folder {tmp}/missing does not exist"),
        ("--json", ".", "is a folder; name a file inside it (e.g. {tmp}/result.json)"),
        ("--report", "notes.txt/report.html", "{tmp}/notes.txt is a file, not a folder"),
    ],
)
def test_an_unwritable_output_fails_before_anything_is_audited_or_stored(
    tmp_path: Path, option: str, where: str, says: str
) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    target = tmp_path / where
    code, out, err = invoke("audit", INPUTS[0], "--db", f"sqlite:///{tmp_path / 'runs.db'}", option, target)
    assert code == 2 and out == ""
    line = one_line_error(err)
    assert f"{option} {target}: " in line and says.format(tmp=tmp_path) in line
    assert not (tmp_path / "runs.db").exists()  # nothing audited, nothing stored


@pytest.mark.skipif(
    not Path("/proc/self").is_dir(), reason="needs /proc (a folder no one can create files in)"
)
def test_an_output_the_system_refuses_is_named_before_work(tmp_path: Path) -> None:
    code, _, err = invoke("audit", INPUTS[0], "--no-store", "--report", "/proc/auditor-report.html")
    assert code == 2 and "--report /proc/auditor-report.html: cannot write there (" in one_line_error(err)


def test_two_outputs_on_one_file_are_refused(tmp_path: Path) -> None:
    same = tmp_path / "out.json"
    code, _, err = invoke("audit", INPUTS[0], "--no-store", "--json", same, "--report", same)
    assert code == 2 and f"--report {same}: --json writes the same file" in one_line_error(err)
    assert not same.exists()  # the probe leaves no file behind


@pytest.mark.parametrize("command", ["evidence", "calibrate", "report"])
def test_every_command_checks_its_output_file_first(tmp_path: Path, command: str) -> None:
    target = tmp_path / "missing" / "out.json"
    db = ["--db", f"sqlite:///{tmp_path / 'runs.db'}"]
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text('{"id": "r1", "question": "q?", "sources": [], "answer": "A."}\n', encoding="utf-8")
    args = {
        "evidence": ["evidence", INPUTS[0], "--json", target],
        "calibrate": ["calibrate", labelled, "--json", target, *db],
        "report": ["report", "--run", "abc", "-o", target, *db],
    }[command]
    code, _, err = invoke(*args)
    assert code == 2 and "does not exist; create it" in one_line_error(err)
    assert not (tmp_path / "runs.db").exists()


def records_file(tmp_path: Path, *ids: str) -> Path:
    path = tmp_path / "records.jsonl"
    lines = [
        json.dumps(
            {
                "id": i,
                "question": "Refund?",
                "sources": [{"id": "d", "text": "Refunded $80."}],
                "answer": "Refunded $80.",
            }
        )
        for i in ids
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_trace_id_that_matches_nothing_is_an_error_naming_the_traces(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    code, out, err = invoke("audit", INPUTS[0], "--db", f"sqlite:///{db}", "--trace-id", "ffff0000")
    line = one_line_error(err)
    assert code == 2 and out == ""
    first = read_traces([INPUTS[0]]).traces[0].trace_id
    assert "--trace-id ffff0000: no trace has this id or prefix" in line and first in line
    assert not db.exists()
    code, out, err = invoke("evidence", INPUTS[0], "--trace-id", "ffff0000")
    assert code == 2 and first in one_line_error(err)


def test_an_ambiguous_trace_prefix_is_an_error_and_an_exact_id_wins(tmp_path: Path) -> None:
    path = records_file(tmp_path, "order-1", "order-12", "other")
    code, _, err = invoke("evidence", path, "--trace-id", "order")
    assert code == 2 and "the prefix matches 2 traces (order-1, order-12); give more of the id" in err
    code, out, _ = invoke("evidence", path, "--trace-id", "order-1")
    assert code == 0 and "1 answer(s) from" in out  # exact, although order-12 shares the prefix
    code, out, _ = invoke("evidence", path, "--trace-id", "OTH")
    assert code == 0 and "1 answer(s) from" in out


def test_labels_that_match_no_answer_are_a_warning_in_audit(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"answer_id": "not-an-answer", "answerable": true}\n', encoding="utf-8")
    code, _, err = invoke("audit", records_file(tmp_path, "r1"), "--no-store", "--labels", labels)
    assert code == 0
    assert f"warning: {labels}: none of its 1 label(s) matches an answer" in err
    labels.write_text(
        '{"trace_id": "r1", "answerable": true}\n{"answer_id": "not-an-answer", "answerable": true}\n',
        encoding="utf-8",
    )
    code, _, err = invoke("audit", records_file(tmp_path, "r1"), "--no-store", "--labels", labels)
    assert code == 0 and f"warning: {labels}: 1 label(s) match no answer." in err
