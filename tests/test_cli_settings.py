"""Every command reads every option it has through the one settings table (``auditor.settings``):
an ``AUDITOR_*`` variable means the same to each of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

TRACE = FIXTURES / "document_metadata" / "runtree.json"


def invoke(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": "400", **env}).invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def labelled(tmp_path: Path) -> str:
    path = tmp_path / "labelled.jsonl"
    record = {
        "id": "r1",
        "question": "Refund?",
        "sources": [{"id": "d", "text": "Refunded $80."}],
        "answer": "Refunded $80.",
    }
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return str(path)


def commands(tmp_path: Path, *names: str) -> list[list[str]]:
    db = ["--db", f"sqlite:///{tmp_path / 'runs.db'}"]
    every = {
        "evidence": ["evidence", str(TRACE)],
        "audit": ["audit", str(TRACE), *db],
        "gate": ["gate", str(TRACE), *db],
        "calibrate": ["calibrate", labelled(tmp_path), *db],
    }
    return [every[n] for n in names]


@pytest.mark.parametrize("command", ["evidence", "audit", "gate", "calibrate"])
def test_auditor_policy_is_read_by_every_command_with_a_policy(tmp_path: Path, command: str) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[thresholds]\nrelease_pass_rate = 3\n", encoding="utf-8")
    (args,) = commands(tmp_path, command)
    code, _, err = invoke(args, {"AUDITOR_POLICY": str(broken)})
    assert code == 2 and str(broken) in err and "release_pass_rate" in err


def test_auditor_policy_chooses_the_policy_of_evidence() -> None:
    code, out, _ = invoke(["evidence", str(TRACE), "--json", "-"], {"AUDITOR_POLICY": "strict"})
    assert code == 0 and json.loads(out)["run"]["policy"]["name"] == "strict"
    code, out, _ = invoke(
        ["evidence", str(TRACE), "--json", "-", "--policy", "permissive"], {"AUDITOR_POLICY": "strict"}
    )
    assert code == 0 and json.loads(out)["run"]["policy"]["name"] == "permissive"  # the flag wins


@pytest.mark.parametrize("command", ["audit", "gate", "calibrate"])
def test_auditor_judge_and_base_url_are_read_by_every_judging_command(tmp_path: Path, command: str) -> None:
    (args,) = commands(tmp_path, command)
    code, _, err = invoke(args, {"AUDITOR_JUDGE": "nonsense"})
    assert code == 2 and "Unknown judge 'nonsense'" in err
    with FakeOpenAI() as dead:
        url = dead.base_url  # closed once the server stops
    code, _, err = invoke(args, {"AUDITOR_JUDGE": "openai:m", "AUDITOR_BASE_URL": url})
    assert code == 2 and f"Cannot reach the LLM server at {url}" in err


def test_auditor_db_url_is_read_by_the_store_commands(tmp_path: Path) -> None:
    db = tmp_path / "env.db"
    env = {"AUDITOR_DB_URL": f"sqlite:///{db}"}
    code, _, err = invoke(["audit", str(TRACE)], env)
    assert code == 0 and db.exists(), err
    code, out, _ = invoke(["runs"], env)
    assert code == 0 and "runtree.json" in out
    code, out, _ = invoke(["db", "current"], env)
    assert code == 0 and "(head)" in out
