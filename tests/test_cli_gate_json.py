"""``auditor gate --json``: the decision as JSON on stdout, with the same exit status as the text."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import cli
from tests.conftest import FIXTURES

PASSING = ["single_retrieval", "multi_hop", "multi_turn", "sub_agent", "combined_documents"]


def gate(*names: str, extra: tuple[str, ...] = ()) -> tuple[int, str]:
    files = [str(FIXTURES / name / "runtree.json") for name in names]
    result = CliRunner().invoke(cli, ["gate", *files, "--json", *extra])
    return result.exit_code, result.stdout


def test_gate_json_passing_and_failing(tmp_path: Path) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'g.db'}")
    code, out = gate(*PASSING, extra=db)
    assert code == 0
    document = json.loads(out)  # stdout is the document alone
    assert document["passed"] is True and document["run_id"]
    assert document["policy"]["sha256"] and document["judge"]["kind"] == "offline"
    assert {c["name"] for c in document["checks"]} and all(c["passed"] for c in document["checks"])
    assert document["summary"]["answers"] == len(document["answers"])
    code, out = gate(*PASSING, "changed_figure", extra=db)
    assert code == 1
    document = json.loads(out)
    assert document["passed"] is False
    failed = [a for a in document["answers"] if a["status"] == "failed"]
    assert failed and any("$95.00" in text for a in failed for text in a["contradicted"])
    assert not all(c["passed"] for c in document["checks"])
