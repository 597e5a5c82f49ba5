"""``auditor policy`` commands, and the shipped policies on the real instrumentation fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.policy import policy_group
from auditor.errors import PolicyError, UsageError
from auditor.evidence import Answer, EvidenceKind, reconstruct
from auditor.policy import explain, load_policy
from auditor.trace import read_traces

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TRACE_FILES = ["runtree.json", "openinference.otlp.jsonl", "openinference.otlp.pb", "openllmetry.otlp.jsonl"]


def answers_of(scenario: str, file: str) -> list[Answer]:
    return reconstruct(read_traces([FIXTURES / scenario / file]).traces)


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(policy_group, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


# --- the fixtures: superseded documents and the user's own words --------------------------------------


@pytest.mark.parametrize("file", TRACE_FILES)
def test_strict_excludes_superseded_document_permissive_admits_it(file: str) -> None:
    (answer,) = answers_of("document_metadata", file)
    superseded = [e for e in answer.evidence if e.metadata.get("status") == "superseded"]
    assert len(superseded) == 1
    for policy_name, admitted in (("strict", False), ("permissive", True)):
        (explained,) = explain(load_policy(policy_name), [answer])
        decisions = {i.evidence.evidence_id: i.decision for i in explained.items}
        decision = decisions[superseded[0].evidence_id]
        assert decision.admitted is admitted
        if not admitted:
            assert decision.rule == "kb-documents.reject_if.statuses"
            assert decision.reason == "excluded: status 'superseded' (rule kb-documents.reject_if.statuses)"
    # The current document is admitted under strict: it was 292 days old when the answer was generated.
    (explained,) = explain(load_policy("strict"), [answer])
    current = [i.decision for i in explained.items if i.evidence.metadata.get("status") == "current"]
    assert [d.admitted for d in current] == [True]


@pytest.mark.parametrize("file", TRACE_FILES)
def test_strict_excludes_the_users_own_message_permissive_admits_it(file: str) -> None:
    (answer,) = answers_of("user_message_support", file)
    messages = [e for e in answer.evidence if e.kind is EvidenceKind.USER_MESSAGE]
    earlier = [e for e in messages if not e.current_question]
    assert earlier and "$120" in earlier[0].text
    strict = {i.evidence.evidence_id: i.decision for i in explain(load_policy("strict"), [answer])[0].items}
    loose = {
        i.evidence.evidence_id: i.decision for i in explain(load_policy("permissive"), [answer])[0].items
    }
    for message in messages:
        assert strict[message.evidence_id].admitted is False
        assert (
            strict[message.evidence_id].reason
            == "excluded: the user's own message (rule evidence.user_messages)"
        )
        assert loose[message.evidence_id].admitted is True
    # The order lookup itself counts under both.
    tool = next(e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT)
    assert strict[tool.evidence_id].rule == "order-tools"
    assert loose[tool.evidence_id].admitted


# --- commands -----------------------------------------------------------------------------------------


def test_check_prints_name_version_and_hash() -> None:
    code, output = run("check", "strict")
    assert code == 0
    assert "name     strict" in output
    assert f"sha256   {load_policy('strict').sha256}" in output


def test_check_prints_warnings(tmp_path: Path) -> None:
    path = tmp_path / "nothing.toml"
    path.write_text('name = "nothing"\n', encoding="utf-8")
    result = CliRunner().invoke(policy_group, ["check", str(path)])
    assert result.exit_code == 0
    assert "warning: this policy admits nothing" in result.output


def test_check_raises_the_policy_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "p"\nsources = [{ name = "a", admit = true, kinds = ["nope"] }]\n', encoding="utf-8"
    )
    result = CliRunner().invoke(policy_group, ["check", str(path)])
    assert isinstance(result.exception, PolicyError)  # `auditor` turns it into exit 2 and one line
    assert f"{path}: invalid policy: sources[0].kinds[0]" in str(result.exception)


def test_schema_command_prints_the_json_schema() -> None:
    code, output = run("schema")
    assert code == 0
    assert json.loads(output)["title"] == "trace-auditor policy"


def test_explain_json_and_table() -> None:
    trace = FIXTURES / "document_metadata" / "runtree.json"
    code, output = run("explain", "strict", trace, "--json")
    assert code == 0
    data = json.loads(output)
    assert data["policy"]["sha256"] == load_policy("strict").sha256
    reasons = [item["reason"] for item in data["answers"][0]["evidence"]]
    assert "excluded: status 'superseded' (rule kb-documents.reject_if.statuses)" in reasons
    with pytest.raises(
        UsageError, match=r"--trace-id no-such-trace: no trace has this id or prefix; .* 1 trace"
    ):
        run("explain", "strict", trace, "--trace-id", "no-such-trace")
    code, output = run("explain", "strict", trace)
    assert "superseded" in output and "1 answer(s)." in output


def test_diff_lists_items_that_change_side() -> None:
    trace = FIXTURES / "user_message_support" / "runtree.json"
    code, output = run("diff", "strict", "permissive", trace, "--json")
    assert code == 0
    data = json.loads(output)
    (answer,) = data["answers"]
    kinds = sorted(change["evidence"]["kind"] for change in answer["changes"])
    assert kinds == ["model_output", "system_prompt", "user_message", "user_message"]
    code, output = run("diff", "strict", "strict", trace)
    assert "0 of 5 evidence item(s) change side, in 0 of 1 answer(s)." in output


def test_explain_with_an_unknown_trace_id_exits_2_naming_the_traces() -> None:
    from auditor.cli import cli

    trace = FIXTURES / "document_metadata" / "runtree.json"
    (known,) = {t.trace_id for t in read_traces([trace]).traces}
    result = CliRunner().invoke(
        cli, ["policy", "explain", "strict", str(trace), "--trace-id", "no-such-trace"]
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert (
        result.stderr.startswith("Error: --trace-id no-such-trace: no trace has this id")
        and known in result.stderr
    )
