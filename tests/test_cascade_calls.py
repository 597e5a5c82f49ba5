"""The cascade saves LLM calls: counted at the local server, through the real openai client.

A claim ``settle()`` decides costs no call; whatever it does not decide goes to the LLM, in one call
per answer; an answer whose claims are all settled makes no call at all. The saved calls are in the
run's usage (``cascade.answers_without_call``, ``cascade.calls_saved_per_answer``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.run import audit
from auditor.trace import FORMAT
from tests.support.fake_openai import FakeOpenAI, fenced_blocks

SOURCE = (
    "The Lisbon office opens at 9 am on weekdays. Parking is free for visitors in the north garage. "
    "Refunds are paid to the original card within 14 days."
)
SETTLED = "The Lisbon office opens at 9 am on weekdays. Parking is free for visitors in the north garage."
MIXED = "Refunds are paid to the original card within 14 days. Refunds are also paid in cash at 40 kiosks."


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(offline_judge=True) as s:
        yield s


def records(tmp_path: Path, answers: list[str]) -> Path:
    path = tmp_path / "records.jsonl"
    rows = [
        {"id": f"r{i}", "question": "Office?", "sources": [{"id": "kb", "text": SOURCE}], "answer": a}
        for i, a in enumerate(answers)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(server: FakeOpenAI, path: Path, cascade: bool) -> dict[str, object]:
    result = audit(
        [path],
        judge="openai:fake-judge",
        base_url=server.base_url,
        cascade=cascade,
        cache=False,
        format=FORMAT,
        store=False,
    )
    assert result.run.usage is not None
    return result.run.usage


def test_an_answer_whose_claims_are_all_settled_makes_no_call(server: FakeOpenAI, tmp_path: Path) -> None:
    usage = run(server, records(tmp_path, [SETTLED]), cascade=True)
    assert server.requests == 0  # counted at the server: nothing reached it
    cascade = usage["cascade"]
    assert isinstance(cascade, dict)
    assert (cascade["claims"], cascade["settled_offline"], cascade["llm_calls"]) == (2, 2, 0)
    assert cascade["answers_without_call"] == 1 and cascade["calls_saved_per_answer"] == 1.0


def test_only_the_undecided_claims_go_to_the_llm(server: FakeOpenAI, tmp_path: Path) -> None:
    path = records(tmp_path, [SETTLED, MIXED])
    usage = run(server, path, cascade=True)
    assert server.requests == 1  # one call, for the answer with a claim settle() does not decide
    prompt = "\n".join(str(m["content"]) for m in server.bodies[-1]["messages"])
    sent = [text for kind, _, text in fenced_blocks(prompt) if kind == "CLAIM"]
    assert sent == ["Refunds are also paid in cash at 40 kiosks"]  # the settled claim of MIXED stays home
    cascade = usage["cascade"]
    assert isinstance(cascade, dict)
    assert cascade["settled_offline"] == 3 and cascade["settled_llm"] == 1
    assert cascade["answers_without_call"] == 1 and cascade["calls_saved_per_answer"] == 0.5
    run(server, path, cascade=False)
    assert server.requests == 1 + 2  # without the cascade: one call per answer


def test_the_console_reports_the_calls_saved(server: FakeOpenAI, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from auditor.cli import cli

    path = records(tmp_path, [SETTLED, MIXED])
    args = ["audit", str(path), "--format", "records", "--judge", "openai:fake-judge"]
    args += ["--base-url", server.base_url, "--no-cache", "--no-store"]
    result = CliRunner(env={"COLUMNS": "300"}).invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert server.requests == 1
    line = "cascade: 3 of 4 claim(s) settled without a call; 1 of 2 answer(s) needed no LLM call"
    assert f"{line} (0.50 calls saved per answer)" in result.stderr


def test_a_near_copy_with_an_added_word_goes_to_the_llm(server: FakeOpenAI, tmp_path: Path) -> None:
    # "of purchase": every other word is the source's (the score-only settle() took it, at 0.58),
    # but the source does not say when the 14 days start
    near = "Refunds are paid to the original card within 14 days of purchase."
    usage = run(server, records(tmp_path, [near]), cascade=True)
    assert server.requests == 1
    prompt = "\n".join(str(m["content"]) for m in server.bodies[-1]["messages"])
    assert [text for kind, _, text in fenced_blocks(prompt) if kind == "CLAIM"] == [near.rstrip(".")]
    cascade = usage["cascade"]
    assert isinstance(cascade, dict) and cascade["settled_offline"] == 0


def test_an_answer_with_a_copied_sentence_a_paraphrase_and_a_changed_figure(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    # the benchmark's LLM set: the copy settles offline; the paraphrase and the changed figure (never
    # a certain contradiction) go to the LLM, so the answer still costs its one call, with fewer claims
    answer = (
        "Refunds are paid to the original card within 14 days. "
        "Visitors can leave their car in the north garage at no cost. "
        "The Lisbon office opens at 8 am on weekdays."
    )
    usage = run(server, records(tmp_path, [answer]), cascade=True)
    assert server.requests == 1
    prompt = "\n".join(str(m["content"]) for m in server.bodies[-1]["messages"])
    sent = [text for kind, _, text in fenced_blocks(prompt) if kind == "CLAIM"]
    assert sent == [
        "Visitors can leave their car in the north garage at no cost",
        "The Lisbon office opens at 8 am on weekdays",
    ]
    cascade = usage["cascade"]
    assert isinstance(cascade, dict)
    assert (cascade["settled_offline"], cascade["settled_llm"], cascade["calls_saved_per_answer"]) == (
        1,
        2,
        0.0,
    )
