"""``auditor policy diff`` with a judge: which verdicts change, the evidence responsible, the figures."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from auditor.cli.policy import policy_group
from auditor.policy import load_policy
from auditor.run import compare_policies
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

USER_STATED = FIXTURES / "user_message_support" / "runtree.json"
CLAIM = "You paid $120 for the extended warranty on March 3"


def invoke(*args: str | Path) -> str:
    result = CliRunner().invoke(policy_group, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_claim_resting_on_the_users_message_changes_verdict() -> None:
    result = compare_policies([USER_STATED], load_policy("default"), load_policy("permissive"))
    (change,) = result.verdicts.changes
    assert (change.claim, change.a, change.b) == (CLAIM, "absent", "supported")
    # the evidence responsible: the user's message, which changed side and which both verdicts name
    (item,) = change.evidence
    assert item.kind == "user_message" and item.cited
    assert (item.admitted_a, item.admitted_b) == (False, True)
    assert "rule evidence.user_messages" in item.reason_a and item.reason_b.startswith("admitted")
    figures = {f.name: f for f in result.verdicts.figures}
    assert (figures["groundedness_rate"].a.value, figures["groundedness_rate"].b.value) == (0.0, 1.0)
    assert figures["groundedness_rate"].change == 1.0
    assert figures["answers_with_unsupported_claim"].change == -1.0
    assert result.verdicts.claims_compared == 1 and result.verdicts.judge.kind == "offline"


def test_no_verdict_changes_between_a_policy_and_itself() -> None:
    result = compare_policies([USER_STATED], load_policy("default"), load_policy("default"))
    assert result.verdicts.changes == () and result.evidence.answers == ()
    assert all(f.change == 0.0 for f in result.verdicts.figures if f.change is not None)


def test_the_command_prints_the_verdict_change_and_the_figures() -> None:
    out = invoke("diff", "default", "permissive", USER_STATED)
    assert "verdicts that change" in out and "1 of 1 claim verdict(s) change" in out
    assert "absent" in out and "supported" in out and "excluded -> admitted" in out
    assert "groundedness rate: 0.0% (0/1) -> 100.0% (1/1) (+100.0 points)" in out
    assert "evidence item(s) change side" in out  # the evidence diff is still there


def test_json_keeps_the_evidence_diff_and_adds_the_verdicts() -> None:
    data = json.loads(invoke("diff", "default", "permissive", USER_STATED, "--json"))
    assert {"a", "b", "a_sha256", "b_sha256", "answers_compared", "items_compared", "answers"} <= set(data)
    (change,) = data["verdicts"]["changes"]
    assert change["claim"] == CLAIM and (change["a"], change["b"]) == ("absent", "supported")
    assert change["evidence"][0]["kind"] == "user_message"
    names = [f["name"] for f in data["verdicts"]["figures"]]
    assert names == ["groundedness_rate", "answers_with_unsupported_claim", "answer_pass_rate"]


def test_an_llm_judge_through_the_fake_server() -> None:
    with FakeOpenAI(offline_judge=True) as server:
        data = json.loads(
            invoke(
                "diff",
                "default",
                "permissive",
                USER_STATED,
                "--judge",
                "openai:fake",
                "--base-url",
                server.base_url,
                "--json",
            )
        )
        # judged under default; under permissive the cascade may settle the claim offline (its score)
        assert server.by_kind["judge"] >= 1
    assert data["verdicts"]["judge"]["kind"] == "openai" and data["verdicts"]["judge"]["model"] == "fake"
    (change,) = data["verdicts"]["changes"]
    assert (change["a"], change["b"]) == ("absent", "supported")
