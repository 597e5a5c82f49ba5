"""Citations judged against what they cite, through the whole audit: misattribution, unresolved
markers, the extra judge calls a re-check costs, and the figures in the JSON, console, report,
store and gate."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.claims import Claim, RuleExtractor
from auditor.cli import cli
from auditor.evidence import Answer, Evidence
from auditor.gate import run_gate
from auditor.gate._gate import decide
from auditor.judges import ClaimVerdict, Judge, OfflineJudge
from auditor.metrics import Summary
from auditor.pipeline import audit_all, audit_out, find_answers
from auditor.policy import Policy, Thresholds, parse_policy
from auditor.report import render_report
from auditor.results import AuditResult, ClaimOut
from auditor.run import audit
from auditor.store import Store
from tests.support.fake_openai import FakeOpenAI

WARRANTY = "The X200 carries a 24-month limited warranty."
SHIPPING = "Shipping is free on orders over $50."
SOURCES = [
    {"id": "KB-101", "text": WARRANTY, "metadata": {"url": "https://help.acme.com/x200/warranty"}},
    {"id": "KB-102", "text": SHIPPING},
    {"id": "KB-100", "text": SHIPPING, "metadata": {"status": "superseded"}},
]
#: One record per outcome; the sources are the one retrieval each answer saw, in this order.
RECORDS = {
    # supported by KB-101 (position 1), but the marker names position 2, KB-102: misattributed
    "misattributed": "The X200 carries a 24-month limited warranty [2].",
    # the verified quote comes from the cited item: supported where it says, no re-check
    "cited": "Shipping is free on orders over $50 [KB-102].",
    # the URL (another scheme, a trailing slash) names KB-101, which says it
    "by-url": "The X200 carries a 24-month limited warranty (source: http://help.acme.com/x200/warranty/).",
    # position 9 of a three-document retrieval: names nothing
    "unresolved": "Shipping is free on orders over $50 [9].",
    # KB-100 is superseded, so excluded: the marker names nothing admitted
    "excluded": "Shipping is free on orders over $50 [KB-100].",
    # absent wherever it is looked for: the cited item does not support it either
    "absent": "Returns are accepted within 90 days [1].",
}
POLICY = """
name = "citations-test"

[[sources]]
name = "kb"
admit = true
kinds = ["retrieved_document"]
reject_if = { statuses = ["superseded"] }
"""


def policy(**thresholds: float) -> Policy:
    extra = "\n[thresholds]\n" + "".join(f"{k} = {v}\n" for k, v in thresholds.items()) if thresholds else ""
    return parse_policy(POLICY + extra, "citations-test.toml")


def records_file(directory: Path) -> Path:
    path = directory / "cited.jsonl"
    rows = [
        {"id": key, "question": "About the X200?", "sources": SOURCES, "answer": text}
        for key, text in RECORDS.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cited_result(directory: Path) -> AuditResult:
    """The records audited with the offline judge, no store: used by the report's browser test too."""
    return audit([records_file(directory)], policy=policy(), format="records", store=False)


def claim_of(result: AuditResult, key: str) -> ClaimOut:
    answer = next(a for a in result.answers if a.trace_id == key)
    (claim,) = [c for c in answer.claims or [] if not c.screened]
    return claim


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    return cited_result(tmp_path_factory.mktemp("cited"))


def outcome(claim: ClaimOut) -> tuple[str | None, bool | None, bool, str | None]:
    (marker,) = claim.citation_markers
    return claim.verdict, marker.supports, claim.misattributed, marker.resolved_by


EXPECTED = {
    "misattributed": ("supported", False, True, "position"),
    "cited": ("supported", True, False, "id"),
    "by-url": ("supported", True, False, "url"),
    "unresolved": ("supported", None, False, None),
    "excluded": ("supported", None, False, "id"),
    "absent": ("absent", False, False, "position"),
}


@pytest.mark.parametrize("key", list(RECORDS))
def test_each_claim_is_judged_against_what_its_marker_cites(result: AuditResult, key: str) -> None:
    assert outcome(claim_of(result, key)) == EXPECTED[key]


def test_markers_keep_their_resolution_and_reasons(result: AuditResult) -> None:
    wrong = claim_of(result, "misattributed").citation_markers[0]
    answer = next(a for a in result.answers if a.trace_id == "misattributed")
    ids = {e.document_id: e.evidence_id for e in answer.evidence}
    assert wrong.marker == "[2]" and wrong.evidence_ids == [ids["KB-102"]]
    assert (
        wrong.reason
        == f"supported by {ids['KB-101']}, but the cited item does not state it (re-checked alone)"
    )
    unresolved = claim_of(result, "unresolved").citation_markers[0]
    assert unresolved.evidence_ids == []
    assert unresolved.reason == "the last retrieval before the answer returned 3 document(s); 9 names the 9th"
    excluded = claim_of(result, "excluded").citation_markers[0]
    answer = next(a for a in result.answers if a.trace_id == "excluded")
    superseded = next(e for e in answer.evidence if e.document_id == "KB-100")
    assert superseded.admitted is False and excluded.evidence_ids == [superseded.evidence_id]
    assert excluded.reason == f"cites only evidence the policy excludes ({superseded.evidence_id})"
    assert claim_of(result, "cited").markers == ["[KB-102]"]  # the marker strings are kept


def test_summary_counts_coverage_support_and_misattribution(result: AuditResult) -> None:
    figures = Summary.model_validate(result.summary).citations
    assert figures is not None
    assert (figures.coverage.numerator, figures.coverage.denominator) == (6, 6)
    assert (figures.support.numerator, figures.support.denominator) == (2, 6)  # cited, by-url
    assert (figures.misattribution.numerator, figures.misattribution.denominator) == (1, 6)
    assert figures.unresolved == 2


class CountingJudge:
    """The offline judge, counting the claims of each call (a call is an LLM request for an LLM judge)."""

    def __init__(self) -> None:
        self.inner = OfflineJudge()
        self.identity = self.inner.identity
        self.calls: list[list[str]] = []

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        self.calls.append([c.text for c in claims])
        return await self.inner.judge(answer, claims, admitted, excluded, allow_common_knowledge)


def test_only_a_claim_supported_by_other_items_costs_a_re_check(tmp_path: Path) -> None:
    chosen = policy()
    _, answers = find_answers([records_file(tmp_path)], "records", chosen)
    judge = CountingJudge()
    counted: Judge = judge
    audits = asyncio.run(audit_all(answers, chosen, RuleExtractor(), counted))
    assert len(judge.calls) == len(RECORDS) + 1  # one judgement per answer, one re-check
    # the misattributed and the by-url answers, then the re-check of the first alone
    assert judge.calls.count(["The X200 carries a 24-month limited warranty"]) == 3
    misattributed = next(a for a in audits if a.answer.trace_id == "misattributed")
    assert audit_out(misattributed).claims is not None
    assert next(iter(misattributed.citations.values())).misattributed


def test_the_llm_judge_re_checks_through_the_server(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        llm = audit(
            [records_file(tmp_path)],
            policy=policy(),
            format="records",
            judge="openai:fake-judge",
            base_url=server.base_url,
            cascade=False,
            cache=False,
            store=False,
        )
        assert server.by_kind["judge"] == len(RECORDS) + 1  # the misattributed claim, re-checked once
    for key, expected in EXPECTED.items():
        assert outcome(claim_of(llm, key)) == expected, key
    assert claim_of(llm, "misattributed").settled_by == "llm"


def test_the_gate_requires_citation_support_only_when_the_policy_says_so(tmp_path: Path) -> None:
    path = records_file(tmp_path)
    plain = run_gate([path], policy(release_pass_rate=0.0), format="records")
    assert "citation_support" not in [c.name for c in plain.decision.checks]
    assert plain.decision.passed
    strict = run_gate([path], policy(release_pass_rate=0.0, min_citation_support=0.5), format="records")
    (check,) = [c for c in strict.decision.checks if c.name == "citation_support"]
    assert not check.passed and not strict.decision.passed
    assert check.detail.startswith(
        "citation support 33.3% (2/6 markers), required >= 50.0%; misattributed 1 of 6"
    )
    lenient = run_gate([path], policy(release_pass_rate=0.0, min_citation_support=0.3), format="records")
    assert lenient.decision.passed


def test_a_citation_threshold_with_no_marker_to_measure_fails() -> None:
    summary = Summary.model_validate(
        {
            "answers": 0,
            "refusals": 0,
            "answer_rate": {"numerator": 0, "denominator": 0, "value": None},
            "claims": 0,
            "screened": 0,
            "judged_claims": 0,
            "supported": 0,
            "contradicted": 0,
            "absent": 0,
            "unjudged": 0,
            "common_knowledge": 0,
            "groundedness_rate": {"numerator": 0, "denominator": 0, "value": None},
            "contradiction_rate": {"numerator": 0, "denominator": 0, "value": None},
            "answers_with_unsupported_claim": {"numerator": 0, "denominator": 0, "value": None},
            "answer_pass_rate": {"numerator": 0, "denominator": 0, "value": None},
        }
    )
    decision = decide(summary, [], Thresholds(min_citation_support=0.1))
    (check,) = [c for c in decision.checks if c.name == "citation_support"]
    assert not check.passed and check.observed is None
    assert check.detail.endswith("no judged claim carries a citation marker")


def test_the_store_keeps_markers_and_their_checks(result: AuditResult, tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        loaded = store.load_run(store.save_result(result))
    assert loaded == result
    assert claim_of(loaded, "misattributed").misattributed


def test_the_console_shows_each_marker_and_the_figures(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text(POLICY, encoding="utf-8")
    args = [
        "audit",
        str(records_file(tmp_path)),
        "--format",
        "records",
        "--no-store",
        "--policy",
        str(policy_file),
    ]
    out = CliRunner().invoke(cli, args, catch_exceptions=False)
    text = " ".join(out.output.split())
    assert "marker [2] -> ev_" in text and ": does not support it (supported by ev_" in text
    assert "misattributed: supported, but not by the item its marker cites" in text
    assert "marker [9] -> nothing: undecided (the last retrieval before the answer returned 3" in text
    assert "citations: coverage 100.0% (6/6) judged claims with a marker; support 33.3% (2/6)" in text
    assert "misattributed 16.7% (1/6) claims with a marker" in text


def test_the_report_shows_what_each_marker_resolves_to(result: AuditResult) -> None:
    from tests.test_report import page_data

    html = render_report(result)
    # the answers travel as the page's JSON; its script draws markers and callouts (browser tests)
    claims = [c for a in page_data(html)["answers"] for c in a["claims"]]
    markers = [m for c in claims for m in c.get("markers", [])]
    assert len(markers) == len(RECORDS) and sum(bool(c.get("mis")) for c in claims) == 1
    assert any(m["marker"] == "[2]" for m in markers)
    assert {m["outcome"] for m in markers} == {"does not support", "supports", "unresolved"}
    assert 'data-filter="misattributed"' in html
    assert "Misattribution" in html and "1 / 6" in html
