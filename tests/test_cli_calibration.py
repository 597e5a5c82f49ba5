"""Which calibration corrects a run (``--calibration ID|none``), how it is named, and the warning
when its labelled data's domain (task types) does not cover the run's question types."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.calibration import domain_fit
from auditor.cli import cli
from auditor.run import audit, calibrate
from auditor.store import Store
from tests.conftest import FIXTURES

TRACE = FIXTURES / "changed_figure" / "openinference.otlp.jsonl"
TEXT = "Refunds are accepted within 30 days of purchase."


def labelled(tmp_path: Path, task_type: str = "QA", dataset: str = "RAGTruth") -> Path:
    rows = [
        {"id": "good", "question": "Refunds?", "sources": [{"id": "p", "text": TEXT}], "answer": TEXT},
        {
            "id": "bad",
            "question": "Refunds?",
            "sources": [{"id": "p", "text": TEXT}],
            "answer": "Refunds are accepted within 90 days of purchase.",
            "labels": [{"start": 28, "end": 35, "verdict": "contradicted"}],
        },
    ]
    path = tmp_path / f"{dataset}-{task_type}.jsonl"
    path.write_text(
        "".join(json.dumps({**r, "dataset": dataset, "task_type": task_type}) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "300"}).invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def labels_with_type(tmp_path: Path, question_type: str) -> Path:
    (answer,) = audit([TRACE], store=False).answers
    path = tmp_path / f"labels-{question_type}.jsonl"
    row = {"trace_id": answer.trace_id, "answerable": True, "question_type": question_type}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cal.db'}"


def test_a_calibration_records_its_name_datasets_and_task_types(tmp_path: Path, db: str) -> None:
    cal = calibrate(labelled(tmp_path), db_url=db, name="support dev set")
    assert cal.datasets == ["RAGTruth"] and cal.task_types == ["QA"]
    assert cal.label.startswith("support dev set (offline, ") and f"id {cal.id[:12]}" in cal.label
    unnamed = calibrate(labelled(tmp_path, "Summary"), db_url=db)
    assert unnamed.display_name == "RAGTruth-Summary.jsonl"
    with Store(db) as store:
        assert store.find_calibration(cal.id[:8]) == cal


def test_the_console_names_the_calibration_once_and_warns_outside_its_domain(tmp_path: Path, db: str) -> None:
    cal = calibrate(labelled(tmp_path), db_url=db, name="support dev set")
    report = tmp_path / "report.html"
    code, out, _ = invoke(
        "audit",
        str(TRACE),
        "--db",
        db,
        "--labels",
        str(labels_with_type(tmp_path, "billing")),
        "--report",
        str(report),
    )
    assert code == 0
    page = html.unescape(report.read_text(encoding="utf-8"))
    assert f"calibration support dev set (offline, {cal.created_at:%Y-%m-%d}" in page
    assert "Warning: support dev set was measured on task types QA" in page
    assert f"calibration support dev set (offline, {cal.created_at:%Y-%m-%d}" in out
    assert "calibration calibration" not in out
    assert (
        "warning: support dev set was measured on task types QA; datasets RAGTruth, not on this run's question types billing"
        in out
    )
    code, out, _ = invoke("audit", str(TRACE), "--db", db, "--labels", str(labels_with_type(tmp_path, "qa")))
    assert code == 0 and "warning: support dev set" not in out
    assert "support dev set covers this run's question types (qa)" in out


def test_a_run_without_question_types_says_the_fit_is_unchecked(tmp_path: Path, db: str) -> None:
    calibrate(labelled(tmp_path), db_url=db, name="dev")
    code, out, _ = invoke("audit", str(TRACE), "--db", db)
    assert code == 0 and "this run records no question types, so its fit is unchecked" in out
    assert "warning: dev" not in out


def test_calibration_option_chooses_an_older_one_or_none(tmp_path: Path, db: str) -> None:
    older = calibrate(labelled(tmp_path), db_url=db, name="older")
    newer = calibrate(labelled(tmp_path, "Summary"), db_url=db, name="newer")
    _, out, _ = invoke("audit", str(TRACE), "--db", db)
    assert "calibration newer (" in out and "calibration older (" not in out
    _, out, _ = invoke("audit", str(TRACE), "--db", db, "--calibration", older.id[:10], "--json", "-")
    corrected = json.loads(out)["summary"]["corrected_unsupported"]
    assert corrected["calibration_id"] == older.id and corrected["calibration"].startswith("older (")
    _, out, _ = invoke("audit", str(TRACE), "--db", db, "--calibration", "none", "--json", "-")
    assert json.loads(out)["summary"].get("corrected_unsupported") is None
    assert newer.id != older.id


def test_a_bad_calibration_choice_is_one_line_before_any_work(tmp_path: Path, db: str) -> None:
    cal = calibrate(labelled(tmp_path), db_url=db, name="dev")
    code, _, err = invoke("audit", str(TRACE), "--db", db, "--calibration", "zzz")
    assert code == 2 and "--calibration zzz: no calibration with an id starting so" in err
    assert "dev (offline" in err and "Traceback" not in err
    with Store(db) as store:
        assert store.list_runs() == []  # refused before a run was opened
        store.save_calibration(
            cal.model_copy(
                update={
                    "id": "f" * 32,
                    "judge": cal.judge.model_copy(update={"kind": "openai", "model": "m"}),
                }
            )
        )
    code, _, err = invoke("audit", str(TRACE), "--db", db, "--calibration", "fff")
    assert code == 2 and "measured judge openai:m, not this run's offline" in err
    code, _, err = invoke("audit", str(TRACE), "--no-store", "--calibration", cal.id)
    assert code == 2 and "drop --no-store" in err


def test_domain_fit_reads_older_calibrations_from_their_segments(tmp_path: Path, db: str) -> None:
    cal = calibrate(labelled(tmp_path), db_url=db)
    old = cal.model_copy(update={"datasets": [], "task_types": []})  # stored before they were recorded
    assert old.domain == (["RAGTruth"], ["QA"])
    summary = {"by_question_type": [{"name": "Data2txt"}, {"name": "unspecified"}]}
    fits, note = domain_fit(old, summary)
    assert fits is False and "not on this run's question types Data2txt" in note
    assert domain_fit(old, {"by_question_type": [{"name": "QA"}]})[0] is True


def test_calibrations_lists_ids_names_and_domains(tmp_path: Path, db: str) -> None:
    code, _, err = invoke("calibrations", "--db", db)
    assert code == 2 and "No store at" in err  # it only reads: a missing store is not created
    Store(db).close()
    code, out, _ = invoke("calibrations", "--db", db)
    assert code == 0 and "No calibrations stored yet" in out
    older = calibrate(labelled(tmp_path), db_url=db, name="older")
    newer = calibrate(labelled(tmp_path, "Summary", "HaluEval"), db_url=db)
    code, out, _ = invoke("calibrations", "--db", db)
    assert code == 0
    assert out.index(newer.id) < out.index(older.id)  # newest first
    assert "older" in out and "RAGTruth-QA.jsonl" not in out and "HaluEval-Summary.jsonl" in out
    assert "datasets HaluEval · task types Summary" in out
    code, out, _ = invoke("calibrations", "--json", "--db", db)
    assert [c["id"] for c in json.loads(out)] == [newer.id, older.id]
