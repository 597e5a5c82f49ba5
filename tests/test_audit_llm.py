"""The whole audit with an LLM judge, through the real openai client against the local server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from auditor.audit import audit
from auditor.policy import load_policy
from auditor.results import AuditResult
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

INPUTS = [
    FIXTURES / s / "runtree.json" for s in ("changed_figure", "fabricated_figure", "multi_hop", "refusal")
]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(offline_judge=True) as s:
        yield s


def run(server: FakeOpenAI, tmp_path: Path, **options: Any) -> AuditResult:
    return audit(
        INPUTS,
        policy=load_policy("strict"),
        judge="openai:fake-judge",
        base_url=server.base_url,
        db_url=f"sqlite:///{tmp_path / 'runs.db'}",
        **options,
    )


@pytest.mark.parametrize(
    ("decomposer", "kinds"),
    [
        ("rules", {"judge"}),
        ("llm", {"decompose", "judge"}),
        ("fused", {"fused"}),
    ],
)
def test_each_mode_calls_the_server_and_records_usage(
    server: FakeOpenAI, tmp_path: Path, decomposer: str, kinds: set[str]
) -> None:
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
        a.model_dump(exclude={"claims"}) for a in second.answers
    ]


def comparable(result: AuditResult) -> list[dict[str, Any]]:
    """The answers with their claims and verdicts, ``settled_by`` aside (a hit says ``cache``)."""
    answers = [a.model_dump(mode="json") for a in result.answers]
    for answer in answers:
        for claim in answer["claims"] or []:
            claim.pop("settled_by", None)
    return answers


def cache_rows(tmp_path: Path) -> list[tuple[str, str]]:
    engine = create_engine(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        with engine.connect() as conn:
            return [
                (str(k), str(e))
                for k, e in conn.execute(text("select kind, extractor from decomposition_cache"))
            ]
    finally:
        engine.dispose()


@pytest.mark.parametrize(("decomposer", "cascade"), [("llm", True), ("llm", False), ("fused", False)])
def test_second_audit_makes_zero_calls_in_every_llm_mode(
    server: FakeOpenAI, tmp_path: Path, decomposer: str, cascade: bool
) -> None:
    first = run(server, tmp_path, resume=False, decomposer=decomposer, cascade=cascade)
    calls = server.requests
    assert calls > 0 and server.by_kind[decomposer if decomposer == "fused" else "decompose"] == len(
        first.answers
    )
    rows = cache_rows(tmp_path)
    kind = "fused" if decomposer == "fused" else "decompose"
    assert len(rows) == len(first.answers) and {k for k, _ in rows} == {
        kind
    }  # one row per answer, in the store
    second = run(server, tmp_path, resume=False, decomposer=decomposer, cascade=cascade)
    assert server.requests == calls  # no decomposition, no verdict, no fused call: all from the store
    assert second.run.usage is not None and second.run.usage["llm"]["calls"] == 0
    assert comparable(second) == comparable(first)
    assert any(c.verdict for a in second.answers for c in a.claims or [])
    assert {c.settled_by for a in second.answers for c in a.claims or [] if c.verdict} == {"cache"}


def test_a_failed_decomposition_is_not_cached(server: FakeOpenAI, tmp_path: Path) -> None:
    server.enqueue("length")  # the first request (a decomposition) is cut off: the whole answer is one claim
    first = run(server, tmp_path, resume=False, decomposer="llm", cascade=False)
    whole = [
        a for a in first.answers if a.claims and len(a.claims) == 1 and a.claims[0].text == a.text.strip()
    ]
    assert len(cache_rows(tmp_path)) == len(first.answers) - 1
    decompose_calls = server.by_kind["decompose"]
    second = run(server, tmp_path, resume=False, decomposer="llm", cascade=False)
    assert server.by_kind["decompose"] == decompose_calls + 1  # only the failed one is asked again
    assert len(cache_rows(tmp_path)) == len(first.answers)
    assert whole and all(len(a.claims or []) >= 1 for a in second.answers)
    calls = server.requests
    third = run(server, tmp_path, resume=False, decomposer="llm", cascade=False)
    assert server.requests == calls
    assert comparable(third) == comparable(second)


def test_no_cache_means_calls_again(server: FakeOpenAI, tmp_path: Path) -> None:
    run(server, tmp_path, resume=False, decomposer="fused", cache=False)
    calls = server.requests
    run(server, tmp_path, resume=False, decomposer="fused", cache=False)
    assert server.requests == 2 * calls and cache_rows(tmp_path) == []
