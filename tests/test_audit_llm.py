"""The whole audit with an LLM judge, through the real openai client against the local server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from auditor.policy import load_policy
from auditor.results import AuditResult
from auditor.run import audit
from tests.conftest import FIXTURES, ROOT
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


def audit_cli(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from auditor.cli import cli

    result = CliRunner(env={"COLUMNS": "400"}).invoke(
        cli,
        [
            "audit",
            *map(str, INPUTS),
            "--policy",
            "strict",
            "--db",
            f"sqlite:///{tmp_path / 'runs.db'}",
            *args,
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def stored_statuses(tmp_path: Path) -> list[str]:
    from auditor.store import Store

    if not (tmp_path / "runs.db").exists():
        return []
    with Store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        return [row.status for row in store.list_runs()]


def test_an_unreachable_endpoint_fails_before_any_work(tmp_path: Path) -> None:
    with FakeOpenAI() as dead:
        url = dead.base_url  # closed once the server stops
    code, out, err = audit_cli(tmp_path, "--judge", "openai:fake-judge", "--base-url", url)
    assert code == 2 and out == ""
    assert err.startswith(f"Error: Cannot reach the LLM server at {url} (") and "(Connection refused)" in err
    assert len(err.strip().splitlines()) == 1
    assert stored_statuses(tmp_path) == []  # no run was opened


def test_a_bad_key_fails_before_any_work(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.api_key = "the-right-key"
    monkeypatch.setenv("OPENAI_API_KEY", "a-wrong-key")
    code, _, err = audit_cli(tmp_path, "--judge", "openai:fake-judge", "--base-url", server.base_url)
    assert code == 2 and "rejected the API key (HTTP 401" in err
    assert server.requests == 0 and stored_statuses(tmp_path) == []


def test_a_missing_model_fails_before_any_work(server: FakeOpenAI, tmp_path: Path) -> None:
    server.models = ["fake-judge"]
    code, _, err = audit_cli(tmp_path, "--judge", "openai:no-such-model", "--base-url", server.base_url)
    assert code == 2 and "has no model 'no-such-model'" in err and "it lists fake-judge" in err
    # Not listed: a one-token completion decides (a listing may miss an alias); nothing was judged.
    assert server.by_kind == {"other": 1} and stored_statuses(tmp_path) == []


def test_when_every_call_fails_the_console_says_why_and_the_run_is_failed(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    for _ in range(100):
        server.enqueue("500", retry_after="0")  # fail every attempt, without backoff waits
    code, _, err = audit_cli(
        tmp_path, "--judge", "openai:fake-judge", "--base-url", server.base_url, "--no-cascade"
    )
    assert code == 3
    calls = server.by_kind["judge"] // 5  # five attempts per call (four retries)
    assert calls > 0
    assert re.search(
        rf"\d+ claim\(s\) unjudged: api_error \(HTTP 500 from {re.escape(server.base_url)}: internal error\)",
        err,
    ), err
    assert "0 claims judged" in err and f"{calls} LLM calls ({calls} failed)" in err  # progress, honestly
    assert f"LLM: 0 of {calls} call(s) succeeded ({calls * 5} HTTP attempts" in err
    assert "Every LLM call failed" in err
    assert stored_statuses(tmp_path) == ["failed"]


def test_a_run_with_some_failed_calls_is_finished_and_lists_the_reason(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    for _ in range(5):
        server.enqueue("500", retry_after="0")  # the first call fails all its attempts
    code, _, err = audit_cli(
        tmp_path,
        "--judge",
        "openai:fake-judge",
        "--base-url",
        server.base_url,
        "--no-cascade",
        "--concurrency",
        "1",
    )
    assert code == 3
    assert "unjudged: api_error (HTTP 500 from" in err and "Every LLM call failed" not in err
    assert re.search(r"LLM: (\d+) of (\d+) call\(s\) succeeded", err)
    assert stored_statuses(tmp_path) == ["finished"]


@pytest.mark.parametrize("switch", ["always_supported_tiny_quote", "always_supported_unrelated_quote"])
def test_a_judge_calling_everything_supported_with_real_quotes_fails_the_gate(
    tmp_path: Path, switch: str
) -> None:
    """examples/golden/ holds answers its evidence does not bear out (a figure changed, a claim
    resting on the user's message): quoting one character or an unrelated real sentence of the
    evidence no longer carries them through the gate."""
    from auditor.gate import run_gate
    from auditor.metrics import load_labels

    golden = ROOT / "examples" / "golden"
    with FakeOpenAI() as judge:
        setattr(judge, switch, True)
        gated = run_gate(
            [golden / "runs.json"],
            load_policy(ROOT / "examples" / "gate-policy.toml"),
            judge="openai:fake-judge",
            base_url=judge.base_url,
            labels=load_labels(golden / "labels.jsonl"),
            db_url=f"sqlite:///{tmp_path / 'runs.db'}",
        )
    assert judge.by_kind["judge"] > 0  # the verdicts came through the real openai client
    claims = [c for a in gated.result.answers for c in a.claims or [] if c.verdict]
    # the quote carries nothing, or lies only in a tool result's "(called as ...)" line (the
    # unrelated sentence is often that line): either way the verdict is demoted
    demoted = [
        c
        for c in claims
        if "quote_does_not_support" in c.judge_errors
        or any("only from the tool call" in e for e in c.judge_errors)
    ]
    assert demoted and all(c.verdict == "absent" and not c.citations for c in demoted)
    assert all((c.rationale or "").startswith("demoted from supported: ") for c in demoted)
    assert not any(
        c.verdict == "supported" and c.citations and all(len(q.quote) == 1 for q in c.citations)
        for c in claims
    )
    assert not gated.decision.passed


def test_a_resumed_run_counts_what_its_interrupted_attempt_spent(tmp_path: Path) -> None:
    # One process as on a Ray cluster: a run's usage is everything spent on it. The answers the
    # killed attempt saved carry their calls, so the resumed run reports the uninterrupted total.
    # (The latency keeps the judge behind the saves, so the attempt stops with calls still to make.)
    with FakeOpenAI(offline_judge=True, latency=0.3) as server:
        _resume_and_count(server, tmp_path)


def _resume_and_count(server: FakeOpenAI, tmp_path: Path) -> None:
    alone = run(server, tmp_path / "alone", cache=False, concurrency=1, cascade=False)
    assert alone.run.usage is not None
    calls_alone = alone.run.usage["llm"]["calls"]
    assert calls_alone == server.requests > 0

    def stop_after_one(progress: Any) -> None:
        if progress.answers_done == 1:
            raise OSError("disk full")

    before = server.requests
    with pytest.raises(OSError, match="disk full"):
        run(server, tmp_path, cache=False, concurrency=1, cascade=False, on_progress=stop_after_one)
    first_attempt = server.requests - before
    resumed = run(server, tmp_path, cache=False, concurrency=1, cascade=False)
    second_attempt = server.requests - before - first_attempt
    assert first_attempt > 0 and second_attempt > 0
    assert resumed.run.usage is not None
    used = resumed.run.usage["llm"]["calls"]
    # Calls the first attempt made after its last save are lost with it (as with a killed Ray
    # worker); every call its saved answers carried is counted.
    assert second_attempt < used and calls_alone <= used <= first_attempt + second_attempt
