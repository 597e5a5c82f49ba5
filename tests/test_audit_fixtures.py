"""The whole audit (offline judge) on the instrumentation fixtures, under policies/strict.toml."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.policy import load_policy
from auditor.results import AnswerOut, AuditResult
from auditor.run import audit
from tests.conftest import FIXTURES

ENCODINGS = ("openinference.otlp.jsonl", "openinference.otlp.pb", "openllmetry.otlp.jsonl", "runtree.json")


def audited(
    scenario: str, encoding: str = "openinference.otlp.jsonl", policy: str = "strict"
) -> list[AnswerOut]:
    return audit([FIXTURES / scenario / encoding], policy=load_policy(policy)).answers


def judged(answer: AnswerOut) -> list[tuple[str, str | None]]:
    return [(c.text, c.verdict) for c in answer.claims or [] if not c.screened]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fabricated_figure_is_absent(encoding: str) -> None:
    (answer,) = audited("fabricated_figure", encoding)
    verdicts = {text: verdict for text, verdict in judged(answer)}
    fabricated = [t for t in verdicts if "$15.00" in t]
    assert fabricated and all(verdicts[t] == "absent" for t in fabricated)
    assert answer.grounded is False


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_changed_figure_is_contradicted_with_the_tools_quote(encoding: str) -> None:
    (answer,) = audited("changed_figure", encoding)
    (claim,) = [c for c in answer.claims or [] if "$95.00" in c.text]
    assert claim.verdict == "contradicted"
    evidence = {e.evidence_id: e for e in answer.evidence}
    assert claim.citations and all(evidence[c.evidence_id].name == "get_refund" for c in claim.citations)
    assert any("80.00" in c.quote for c in claim.citations)
    assert answer.contradicted == 1 and answer.grounded is False


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_claim_resting_on_the_users_own_message_is_absent_and_names_it(encoding: str) -> None:
    (answer,) = audited("user_message_support", encoding)
    (claim,) = [c for c in answer.claims or [] if "$120" in c.text]
    assert claim.verdict == "absent"
    evidence = {e.evidence_id: e for e in answer.evidence}
    assert claim.inadmissible_support
    assert {evidence[i].kind.value for i in claim.inadmissible_support} == {"user_message"}
    assert all(evidence[i].admitted is False for i in claim.inadmissible_support)


def test_the_same_claim_is_supported_when_the_policy_admits_user_messages() -> None:
    (answer,) = audited("user_message_support", policy="permissive")
    (claim,) = [c for c in answer.claims or [] if "$120" in c.text]
    assert claim.verdict == "supported"


def test_superseded_document_does_not_support_and_the_current_one_contradicts() -> None:
    (answer,) = audited("document_metadata")
    (claim,) = [c for c in answer.claims or [] if "12-month" in c.text]
    assert claim.verdict == "contradicted"
    evidence = {e.evidence_id: e for e in answer.evidence}
    assert [evidence[i].metadata["status"] for i in claim.inadmissible_support] == ["superseded"]


def test_aggregated_claim_cites_both_reports() -> None:
    (answer,) = audited("combined_documents")
    (claim,) = [c for c in answer.claims or [] if c.text.startswith("Both reports")]
    assert claim.verdict == "supported"
    assert len({c.evidence_id for c in claim.citations}) == 2


def test_refusal_has_no_judged_claims_and_no_figures() -> None:
    (answer,) = audited("refusal")
    assert answer.refusal is True
    assert answer.groundedness is None and answer.grounded is None
    assert all(c.screened for c in answer.claims or [])


@pytest.mark.parametrize("scenario", ["multi_hop", "multi_turn", "sub_agent", "single_retrieval"])
def test_grounded_answers_are_grounded(scenario: str) -> None:
    answers = audited(scenario)
    assert answers and all(a.grounded for a in answers), [judged(a) for a in answers]


def test_quotes_are_real_spans_of_the_evidence_and_offsets_round_trip() -> None:
    for scenario in ("multi_hop", "changed_figure", "combined_documents", "document_metadata"):
        for answer in audited(scenario):
            evidence = {e.evidence_id: e.text for e in answer.evidence}
            for claim in answer.claims or []:
                assert answer.text[claim.start : claim.end] == claim.text
                for cite in claim.citations:
                    assert (
                        " ".join(cite.quote.split()).lower()
                        in " ".join(evidence[cite.evidence_id].split()).lower()
                    )


def test_audit_json_follows_the_contract(tmp_path: object) -> None:
    result = CliRunner().invoke(
        cli, ["audit", str(FIXTURES / "changed_figure" / "runtree.json"), "--policy", "strict", "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    AuditResult.model_validate(data)
    assert data["run"]["judge"]["kind"] == "offline" and data["run"]["judge"]["approximate"] is True
    assert data["run"]["policy"]["name"] == "strict" and len(data["run"]["policy"]["sha256"]) == 64
    claim = data["answers"][0]["claims"][0]
    for key in (
        "claim_id",
        "text",
        "start",
        "end",
        "screened",
        "screen_reason",
        "verdict",
        "citations",
        "inadmissible_support",
        "rationale",
        "unjudged_reason",
    ):
        assert key in claim
    assert {"refusal", "groundedness", "contradicted", "unjudged", "grounded"} <= set(data["answers"][0])
    assert data["summary"]["groundedness_rate"]["denominator"] >= 1


def test_evidence_json_has_no_claims_key() -> None:
    result = CliRunner().invoke(
        cli, ["evidence", str(FIXTURES / "multi_hop" / "runtree.json"), "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "claims" not in data["answers"][0] and data["run"]["judge"] is None


def test_a_claim_presenting_a_failed_tool_call_as_a_result_is_flagged() -> None:
    import asyncio

    from auditor.claims import decompose_answer
    from auditor.evidence import reconstruct
    from auditor.judges import OfflineJudge
    from auditor.pipeline import audit_answer
    from tests.tracebuilder import TraceBuilder, user

    b = TraceBuilder("t-error")
    b.tool(
        "t",
        "get_refund",
        0,
        1,
        {"order_id": "10042"},
        "Refund service error: order 10042 refund status unknown",
        error=True,
    )
    b.llm(
        "ans",
        2,
        3,
        [user("Was order 10042 refunded?")],
        output="The refund status of order 10042 is unknown.",
    )
    (answer,) = reconstruct([b.build()])
    audit = asyncio.run(
        audit_answer(answer, decompose_answer(answer), load_policy("default"), OfflineJudge())
    )
    (decision,) = [d for d in audit.decisions if d.source_class == "tool_error"]
    assert decision.admitted is False and "error" in decision.reason
    (verdict,) = audit.verdicts
    assert verdict.label.value == "absent"
    assert verdict.inadmissible_support == (decision.evidence_id,)  # flagged: it rests on a failed call
