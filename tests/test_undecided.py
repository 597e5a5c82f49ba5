"""The "cannot tell" path end to end: an undecided answer in the JSON result, console, report and gate.

The LLM judge through the real openai client against the local server: the server refuses one
answer's call, so that answer's claims are ``unjudged`` (reason ``refused``) and none is decided
unsupported: the answer is undecided. It must leave the unsupported rate's denominator, be counted
("the judge could not decide 1 answer") everywhere the figures are shown, and fail the gate closed.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import cli
from tests.support.fake_openai import FakeOpenAI

SOURCE = "The Lisbon office opens at 9 am on weekdays. Parking is free for visitors in the north garage."


def records(tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    rows = [
        {"id": "decided", "question": "Hours?", "sources": [{"id": "kb", "text": SOURCE}], "answer": SOURCE},
        {
            "id": "refused",
            "question": "Parking?",
            "sources": [{"id": "kb", "text": SOURCE}],
            "answer": SOURCE,
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner(env={"COLUMNS": "300"}).invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def test_an_undecided_answer_is_counted_out_of_the_rate_and_fails_the_gate(tmp_path: Path) -> None:
    path = records(tmp_path)
    common = ["--format", "records", "--judge", "openai:fake-judge", "--no-cascade", "--no-cache"]
    with FakeOpenAI() as server:
        server.enqueue("ok")
        server.enqueue("refuse")
        out_json, report = tmp_path / "result.json", tmp_path / "report.html"
        code, stdout = invoke(
            "audit", str(path), *common, "--base-url", server.base_url, "--concurrency", "1",
            "--no-store", "--json", str(out_json), "--report", str(report),
        )  # fmt: skip
        assert code == 3, stdout  # ran, but some claims could not be judged
        summary = json.loads(out_json.read_text(encoding="utf-8"))["summary"]
        assert summary["undecided_answers"] == 1
        assert summary["unjudged_by_reason"] == {"refused": 2}
        rate = summary["answers_with_unsupported_claim"]
        assert (rate["numerator"], rate["denominator"]) == (0, 1)  # the undecided answer is out
        assert summary["answer_pass_rate"]["numerator"] == 1  # and it is not grounded
        assert "the judge could not decide 1 answer(s)" in stdout
        html = report.read_text(encoding="utf-8")
        assert "The judge could not decide <strong>1</strong> answer (" in html

        # the gate (cascade on): a claim no source states goes to the LLM, which refuses it
        unstated = tmp_path / "unstated.jsonl"
        row = {
            "id": "u",
            "question": "Refunds?",
            "sources": [{"id": "kb", "text": SOURCE}],
            "answer": "Refunds take 3 weeks.",
        }
        unstated.write_text(json.dumps(row) + "\n", encoding="utf-8")
        server.enqueue("refuse")
        code, stdout = invoke(
            "gate", str(unstated), "--format", "records", "--judge", "openai:fake-judge",
            "--base-url", server.base_url, "--db", f"sqlite:///{tmp_path / 'gate.db'}",
        )  # fmt: skip
    assert code == 1, stdout
    assert (
        "FAIL  answers the judge could not decide 1, with an unjudged claim 1 (of 1 answers with a claim"
        in stdout
    )
    assert "unjudged claims by reason: refused 1" in stdout
    assert "answers the judge could not decide 1" in stdout.split("groundedness rate", 1)[1]
