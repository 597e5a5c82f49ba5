"""LLM usage in the report, and the price table the estimated cost comes from (``AUDITOR_LLM_PRICES``).

The audit runs through the real openai client against the local fake server; the report shows what
the run record holds: calls, prompt and completion tokens, cache hits and the estimated cost.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.errors import UsageError
from auditor.llm import price_table
from auditor.policy import load_policy
from auditor.report import render_report
from auditor.results import AuditResult
from auditor.run import audit
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

INPUTS = [FIXTURES / s / "runtree.json" for s in ("changed_figure", "multi_hop")]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(offline_judge=True) as s:
        yield s


def run(server: FakeOpenAI, tmp_path: Path) -> AuditResult:
    return audit(
        INPUTS,
        policy=load_policy("strict"),
        judge="openai:fake-judge",
        base_url=server.base_url,
        db_url=f"sqlite:///{tmp_path / 'runs.db'}",
        cascade=False,
    )


def panel(html: str) -> str:
    found = re.search(r'<div class="panel" id="llm-usage">(.*?)</div>', html, re.S)
    assert found, "no LLM usage panel"
    return re.sub(r"<[^>]+>", " ", found.group(1))


def test_the_report_shows_calls_tokens_cache_and_the_cost_from_the_users_prices(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_LLM_PRICES", "fake-judge=1000/2000")
    result = run(server, tmp_path)
    assert result.run.usage is not None
    llm = result.run.usage["llm"]
    assert llm["calls"] == server.requests > 0
    expected = (llm["prompt_tokens"] * 1000 + llm["completion_tokens"] * 2000) / 1_000_000
    assert llm["cost_usd"] == pytest.approx(expected) and expected > 0
    text = " ".join(panel(render_report(result)).split())
    assert f"Calls {llm['calls']} {llm['calls']} succeeded · 0 failed" in text
    assert f"Prompt tokens {llm['prompt_tokens']:,}" in text
    assert f"Completion tokens {llm['completion_tokens']:,}" in text
    cache = result.run.usage["cache"]
    assert f"verdicts {cache['hits']} hits / {cache['misses']} misses" in text
    assert f"Estimated cost ${expected:.4f}" in text


def test_a_model_missing_from_the_price_table_costs_unknown_not_zero(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AUDITOR_LLM_PRICES", raising=False)
    result = run(server, tmp_path)
    assert result.run.usage is not None and result.run.usage["llm"]["cost_usd"] is None
    text = " ".join(panel(render_report(result)).split())
    assert "Estimated cost unknown" in text and "set AUDITOR_LLM_PRICES" in text


def test_an_offline_run_has_no_usage_panel(server: FakeOpenAI, tmp_path: Path) -> None:
    result = audit(INPUTS, policy=load_policy("strict"), store=False)
    assert 'id="llm-usage"' not in render_report(result)


def test_price_table_entries_add_and_override_models() -> None:
    table = price_table(" my-model=0/0 , gpt-4.1-mini=1.5/3")
    assert table["my-model"] == (0.0, 0.0) and table["gpt-4.1-mini"] == (1.5, 3.0)
    assert table["gpt-4o"] == price_table(None)["gpt-4o"]  # the built-in entries stay


@pytest.mark.parametrize("bad", ["gpt-4o", "gpt-4o=1", "=1/2", "m=a/b", "m=-1/2", "m=nan/1"])
def test_a_malformed_price_names_the_variable_and_the_entry(bad: str) -> None:
    with pytest.raises(UsageError, match=r"^AUDITOR_LLM_PRICES: .* is not MODEL=PROMPT/COMPLETION"):
        price_table(f"ok=1/2,{bad}")


def test_the_console_summary_prints_tokens_cache_hits_and_the_cost(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from auditor.cli import cli

    args = ["audit", *map(str, INPUTS), "--policy", "strict", "--db", f"sqlite:///{tmp_path / 'r.db'}"]
    args += ["--judge", "openai:fake-judge", "--base-url", server.base_url, "--no-cascade"]
    priced = CliRunner(env={"COLUMNS": "400", "AUDITOR_LLM_PRICES": "fake-judge=1000/2000"}).invoke(cli, args)
    assert priced.exit_code in (0, 3), priced.output
    line = next(x for x in priced.stderr.splitlines() if x.startswith("LLM tokens: "))
    assert re.fullmatch(
        r"LLM tokens: [\d,]+ prompt \([\d,]+ cached\), [\d,]+ completion; \d+ cache hit\(s\); "
        r"estimated cost \$\d+\.\d{4}",
        line,
    ), line
    bad = CliRunner(env={"AUDITOR_LLM_PRICES": "fake-judge"}).invoke(cli, args)
    assert bad.exit_code == 2
    assert "AUDITOR_LLM_PRICES: 'fake-judge' is not MODEL=PROMPT/COMPLETION" in bad.stderr
    assert "Traceback" not in bad.output
