"""The whole audit with an LLM judge, through the real openai client against the local server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auditor.audit import audit
from auditor.policy import load_policy
from auditor.results import AuditResult
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

INPUTS = [FIXTURES / s / "runtree.json" for s in ("changed_figure", "fabricated_figure", "multi_hop", "refusal")]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(offline_judge=True) as s:
        yield s


def run(server: FakeOpenAI, tmp_path: Path, **options: Any) -> AuditResult:
    return audit(INPUTS, policy=load_policy("strict"), judge="openai:fake-judge", base_url=server.base_url,
                 db_url=f"sqlite:///{tmp_path / 'runs.db'}", **options)


@pytest.mark.parametrize(("decomposer", "kinds"), [
    ("rules", {"judge"}), ("llm", {"decompose", "judge"}), ("fused", {"fused"}),
])
def test_each_mode_calls_the_server_and_records_usage(server: FakeOpenAI, tmp_path: Path, decomposer: str,
                                                      kinds: set[str]) -> None:
    result = run(server, tmp_path, decomposer=decomposer, cascade=False)
    assert set(server.by_kind) == kinds
    assert result.run.usage is not None and result.run.judge is not None
    usage = result.run.usage["llm"]
    assert usage["calls"] == server.requests and usage["prompt_tokens"] > 0
    assert result.run.judge.kind == "openai" and result.run.judge.model == "fake-judge"
    changed = next(a for a in result.answers if "$95.00" in a.text)
    assert changed.grounded is False


def test_second_audit_of_the_same_traces_makes_no_calls(server: FakeOpenAI, tmp_path: Path) -> None:
    first = run(server, tmp_path, resume=False)
    calls = server.requests
    assert calls > 0
    second = run(server, tmp_path, resume=False)
    assert server.requests == calls  # every verdict came from the cache in the store
    assert second.run.usage is not None and second.run.usage["cache"]["misses"] == 0
    assert [a.model_dump(exclude={"claims"}) for a in first.answers] == [
        a.model_dump(exclude={"claims"}) for a in second.answers]
