"""Trace text never drives the terminal: escape sequences, C1 controls and bidi overrides in a trace
are shown, not obeyed, by every command (output, problems lists, error lines)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.text import json_printable, printable

# An OSC 52 clipboard write, a screen clear, a C1 CSI and a right-to-left override.
EVIL = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x9b31m\u202eevil"
# What must never reach the terminal raw (tab and newline are fine).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
VISIBLE = "␛]52;c;ZXZpbA==␇␛[2J\\x9b31m\\u202eevil"


def hostile_trace(tmp_path: Path) -> Path:
    """A records file (and file name) full of control sequences, with one bad line (a problem)."""
    record = {
        "id": "evil\x1b[2J-1",
        "question": f"When was order 10042 refunded {EVIL}?",
        "sources": [
            {
                "id": f"doc{EVIL}",
                "text": f"Order 10042 was refunded $80.00 on 2026-03-12. {EVIL}",
                "metadata": {"collection": f"kb{EVIL}"},
            }
        ],
        "answer": f"Order 10042 was refunded $80.00 on 2026-03-12. The order ships to Mars {EVIL}.",
    }
    path = tmp_path / "evil\x1b[2J.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n\x1b[2J not json\n", encoding="utf-8")
    return path


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def assert_safe(text: str) -> None:
    found = RAW.search(text)
    assert found is None, f"raw {found.group()!r} reached the terminal in {text[:200]!r}"
    assert "␛" in text  # the sequences are visible, not dropped


def test_printable_shows_every_kind_of_control_character() -> None:
    assert printable(EVIL) == VISIBLE
    assert printable("a\r\nb\tc\x7f") == "a␍␊b\tc␡"
    assert printable("a\r\nb\nc\rd", keep_newlines=True) == "a\nb\nc␍d"
    assert printable("plain text, “quotes” and ünïcode") == "plain text, “quotes” and ünïcode"


def test_json_printable_escapes_c1_and_bidi_but_keeps_the_data() -> None:
    document = json.dumps({"text": EVIL}, ensure_ascii=False)
    safe = json_printable(document)
    assert RAW.search(safe) is None
    assert json.loads(safe) == {"text": EVIL}


def test_evidence_output_and_problems_are_safe(tmp_path: Path) -> None:
    code, out, err = invoke("evidence", hostile_trace(tmp_path))
    assert code == 0
    assert_safe(out)
    assert VISIBLE in out  # the answer and the evidence, visibly
    assert_safe(err)
    assert "evil␛[2J.jsonl:2" in err and "not valid JSON" in err  # the problems list


def test_evidence_json_on_stdout_is_safe_and_unchanged_as_data(tmp_path: Path) -> None:
    code, out, _ = invoke("evidence", hostile_trace(tmp_path), "--json", "-")
    assert code == 0
    assert RAW.search(out) is None
    assert EVIL in json.loads(out)["answers"][0]["text"]


def test_audit_output_is_safe(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    code, out, err = invoke("audit", hostile_trace(tmp_path), "--db", db)
    assert code == 0, err
    assert_safe(out)
    assert "ships to Mars" in out and VISIBLE in out  # the unsupported claim
    assert RAW.search(err) is None  # progress, "stored" line, problems
    assert "evil␛[2J.jsonl:2" in err
    code, out, _ = invoke("audit", hostile_trace(tmp_path), "--db", db, "--json", "-")
    assert code == 0 and RAW.search(out) is None


def test_gate_output_is_safe(tmp_path: Path) -> None:
    code, out, err = invoke("gate", hostile_trace(tmp_path), "--db", f"sqlite:///{tmp_path / 'g.db'}")
    assert code == 1  # the made-up claim fails the gate
    assert_safe(out)
    assert "unsupported: The order ships to Mars" in out and VISIBLE in out
    assert RAW.search(err) is None


def test_policy_explain_and_diff_are_safe(tmp_path: Path) -> None:
    trace = hostile_trace(tmp_path)
    code, out, _ = invoke("policy", "explain", "default", trace)
    assert code == 0
    assert_safe(out)
    code, out, _ = invoke("policy", "diff", "default", "permissive", trace)
    assert code == 0
    assert_safe(out)
    code, out, _ = invoke("policy", "diff", "default", "permissive", trace, "--json")
    assert code == 0 and RAW.search(out) is None


def test_runs_list_is_safe(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    assert invoke("audit", hostile_trace(tmp_path), "--db", db)[0] == 0
    code, out, _ = invoke("runs", "--db", db)
    assert code == 0
    assert_safe(out)  # the input's file name


@pytest.mark.parametrize("command", ["evidence", "audit"])
def test_error_lines_quoting_trace_ids_are_safe(tmp_path: Path, command: str) -> None:
    code, out, err = invoke(command, hostile_trace(tmp_path), "--trace-id", "nothing-like-it")
    assert code == 2
    assert_safe(err)
    assert "evil␛[2j-1" in err  # the trace that does exist, named visibly
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in out + err
