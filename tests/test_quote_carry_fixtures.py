"""A correct judge's verdicts on the ingest fixtures are unchanged by the check that quotes carry the claim.

The offline judge and the fake LLM judge (through the real ``openai`` client: its lexical rule, and
its verdicts taken from the offline judge) quote what their verdicts rest on, so the check demotes
none of their ``supported`` or ``contradicted`` verdicts; the dishonest judges that call everything
supported are demoted on the same files (see ``tests/test_audit_llm.py`` for the gate).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.policy import load_policy
from auditor.results import AuditResult
from auditor.run import audit
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

INPUTS = sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))


def judged(result: AuditResult) -> list[tuple[str, str | None, list[str]]]:
    return [
        (c.text, c.verdict, c.judge_errors) for a in result.answers for c in a.claims or [] if not c.screened
    ]


def run(tmp_path: Path, server: FakeOpenAI | None) -> AuditResult:
    return audit(
        INPUTS,
        policy=load_policy("strict"),
        judge="offline" if server is None else "openai:fake-judge",
        base_url=None if server is None else server.base_url,
        cascade=False,
        db_url=f"sqlite:///{tmp_path / 'runs.db'}",
    )


@pytest.mark.parametrize("mode", ["offline", "fake-lexical", "fake-offline-verdicts"])
def test_a_correct_judges_verdicts_are_not_demoted(tmp_path: Path, mode: str) -> None:
    if mode == "offline":
        claims = judged(run(tmp_path, None))
    else:
        with FakeOpenAI(offline_judge=mode == "fake-offline-verdicts") as server:
            claims = judged(run(tmp_path, server))
        assert server.by_kind["judge"] > 0
    assert len(INPUTS) >= 10
    verdicts = [v for _, v, _ in claims]
    assert verdicts.count("supported") >= 3  # the lexical rule supports only claims whose words all appear
    if mode != "fake-lexical":
        assert verdicts.count("supported") >= 9 and verdicts.count("contradicted") >= 2
    assert [c for c in claims if "quote_does_not_support" in c[2]] == []


def test_the_always_supported_judge_is_demoted_on_the_same_files(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.always_supported_unrelated_quote = True
        claims = judged(run(tmp_path, server))
    demoted = [c for c in claims if "quote_does_not_support" in c[2]]
    assert demoted and all(v == "absent" for _, v, _ in demoted)
    assert not any("$95.00" in text and verdict == "supported" for text, verdict, _ in claims)
