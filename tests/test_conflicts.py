"""Conflicting admitted sources: found by each judge, both sides verified, settled by ``on_conflict``.

One scenario throughout, the bundled demo's: a 2024 warranty page says 12 months, the 2026 edition
says 24, both admitted; the answer repeats the 2024 figure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.claims import decompose_answer
from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.gate import run_gate
from auditor.judges import (
    Citation,
    ClaimVerdict,
    ConflictQuote,
    Label,
    LLMJudge,
    OfflineJudge,
    settle_conflict,
    verify_conflicts,
    verify_quotes,
)
from auditor.llm import LLMClient
from auditor.pipeline import AnswerAudit, audit_answer
from auditor.policy import Policy, load_policy, parse_policy
from auditor.run import audit
from auditor.store import Store
from tests.conftest import ROOT
from tests.support.fake_openai import FakeOpenAI

OLD = "Warranty policy (2024 edition): the X200 Blender carries a 12-month limited warranty."
NEW = "Warranty policy (2026 edition): the X200 Blender carries a 24-month warranty covering the motor and blades."
CLAIM = "The X200 Blender carries a 12-month limited warranty."
DEMO = ROOT / "examples" / "traces" / "warranty-superseded.otlp.jsonl.gz"


def doc(evidence_id: str, text: str, **metadata: str) -> Evidence:
    return Evidence(
        evidence_id=evidence_id,
        kind=EvidenceKind.RETRIEVED_DOCUMENT,
        name="kb",
        text=text,
        metadata=dict(metadata),
        trace_id="t1",
    )


def answer(*evidence: Evidence, text: str = CLAIM) -> Answer:
    return Answer(
        answer_id="a1",
        trace_id="t1",
        span_id="s1",
        text=text,
        question="What warranty does the X200 come with?",
        generated_at=datetime(2026, 3, 1, tzinfo=UTC),
        evidence=evidence,
    )


def policy(on_conflict: str = "flag", *, allowed: bool = False, date_key: str | None = None) -> Policy:
    reject = f'reject_if = {{ date_key = "{date_key}" }}\n' if date_key else ""
    return parse_policy(
        f'name = "t"\n[evidence]\non_conflict = "{on_conflict}"\n'
        f"[thresholds]\nconflicts_allowed = {str(allowed).lower()}\n"
        f'[[sources]]\nname = "docs"\nadmit = true\nkinds = ["retrieved_document"]\n{reject}'
    )


def judged(a: Answer, p: Policy) -> AnswerAudit:
    return asyncio.run(audit_answer(a, decompose_answer(a), p, OfflineJudge()))


def dated() -> Answer:
    return answer(doc("old", OLD, updated_at="2024-02-01"), doc("new", NEW, updated_at="2026-02-10"))


# --- finding conflicts --------------------------------------------------------------------------------


def test_the_offline_judge_keeps_both_sides() -> None:
    a = dated()
    (verdict,) = OfflineJudge().judge_sync(decompose_answer(a).judgeable, a.evidence)
    assert verdict.label is Label.SUPPORTED and [c.evidence_id for c in verdict.citations] == ["old"]
    assert [(c.evidence_id, c.stance) for c in verdict.conflicts] == [
        ("old", "supports"),
        ("new", "contradicts"),
    ]
    assert "24-month" in verdict.conflicts[1].quote


def test_agreeing_items_and_other_products_are_no_conflict() -> None:
    same = answer(doc("old", OLD), doc("copy", "The X200 Blender: 12-month limited warranty on all parts."))
    other = answer(doc("old", OLD), doc("z", "The Z90 Juicer carries a 24-month limited warranty."))
    for a in (same, other):
        (verdict,) = OfflineJudge().judge_sync(decompose_answer(a).judgeable, a.evidence)
        assert verdict.label is Label.SUPPORTED and verdict.conflicts == ()


def test_the_cascade_does_not_settle_a_conflict() -> None:
    a = dated()
    (claim,) = decompose_answer(a).judgeable
    assert OfflineJudge().settle(claim, [a.evidence[0]]) is not None  # verbatim in the 2024 page
    assert OfflineJudge().settle(claim, a.evidence) is None  # but the 2026 page disagrees: the LLM decides


# --- both sides verified like any quote -----------------------------------------------------------------


def conflicted(contradicting_quote: str) -> ClaimVerdict:
    return ClaimVerdict(
        claim_id="a1:c0",
        label=Label.SUPPORTED,
        citations=(Citation(evidence_id="old", quote=OLD),),
        conflicts=(
            ConflictQuote(evidence_id="old", quote=OLD, stance="supports"),
            ConflictQuote(evidence_id="new", quote=contradicting_quote, stance="contradicts"),
        ),
    )


@pytest.mark.parametrize(
    ("quote", "error"),
    [
        ("the X200 carries a 36-month warranty", "quote not found"),  # not in the item
        ("Warranty policy (2026 edition)", "quote_does_not_support"),  # in the item, but no rival figure
    ],
)
def test_a_side_whose_quote_fails_drops_the_conflict(quote: str, error: str) -> None:
    by_id = {e.evidence_id: e for e in dated().evidence}

    def check(v: ClaimVerdict) -> ClaimVerdict:
        return verify_quotes(v, by_id, claim_text=CLAIM)

    kept = verify_conflicts(conflicted(NEW), check)
    assert [c.stance for c in kept.conflicts] == ["supports", "contradicts"]
    dropped = verify_conflicts(conflicted(quote), check)
    assert dropped.conflicts == () and dropped.label is Label.SUPPORTED
    assert any(error in e for e in dropped.judge_errors)
    assert any(
        "conflict dropped: no verified quote on the contradicting side" in e for e in dropped.judge_errors
    )


# --- on_conflict ----------------------------------------------------------------------------------------


def test_flag_keeps_the_verdict_and_the_answer_cannot_pass() -> None:
    audit_ = judged(dated(), policy("flag"))
    (verdict,) = audit_.verdicts
    assert verdict.label is Label.SUPPORTED and verdict.conflict_resolution == "flag"
    assert audit_.figures.groundedness == 1.0 and audit_.figures.grounded is False
    assert (audit_.figures.conflicted, audit_.figures.flagged) == (1, 1)
    assert judged(dated(), policy("flag", allowed=True)).figures.grounded is True


def test_contradicted_makes_the_claim_contradicted_citing_the_other_side() -> None:
    (verdict,) = judged(dated(), policy("contradicted")).verdicts
    assert verdict.label is Label.CONTRADICTED and verdict.conflict_resolution == "contradicted"
    assert [c.evidence_id for c in verdict.citations] == ["new"]
    assert len(verdict.conflicts) == 2  # both sides are still shown


def test_prefer_newest_follows_the_newer_item() -> None:
    (newer_contradicts,) = judged(dated(), policy("prefer_newest")).verdicts
    assert newer_contradicts.label is Label.CONTRADICTED
    assert newer_contradicts.conflict_resolution == "prefer_newest"
    assert "2026-02-10 against 2024-02-01" in (newer_contradicts.rationale or "")
    swapped = answer(doc("old", OLD, updated_at="2026-02-10"), doc("new", NEW, updated_at="2024-02-01"))
    audit_ = judged(swapped, policy("prefer_newest"))
    assert audit_.verdicts[0].label is Label.SUPPORTED and audit_.figures.grounded is True


@pytest.mark.parametrize(
    ("evidence", "why"),
    [
        ((doc("old", OLD, updated_at="2024-02-01"), doc("new", NEW)), "new has no date"),
        (
            (doc("old", OLD, updated_at="2026-02-10"), doc("new", NEW, updated_at="2026-02-10")),
            "dated 2026-02-10",
        ),
        (
            (doc("old", OLD, updated_at="last spring"), doc("new", NEW, updated_at="2026-02-10")),
            "old has no date",
        ),
    ],
)
def test_prefer_newest_falls_back_to_flag(evidence: tuple[Evidence, ...], why: str) -> None:
    audit_ = judged(answer(*evidence), policy("prefer_newest"))
    (verdict,) = audit_.verdicts
    assert verdict.label is Label.SUPPORTED and verdict.conflict_resolution == "flag"
    assert "prefer_newest fell back to flag" in (verdict.rationale or "") and why in (verdict.rationale or "")
    assert audit_.figures.grounded is False


def test_prefer_newest_reads_the_freshness_date_key_of_the_class() -> None:
    a = answer(doc("old", OLD, published="2026-02-10"), doc("new", NEW, published="2024-02-01"))
    (verdict,) = judged(a, policy("prefer_newest", date_key="published")).verdicts
    assert verdict.label is Label.SUPPORTED and verdict.conflict_resolution == "prefer_newest"
    (fallback,) = judged(a, policy("prefer_newest")).verdicts  # no updated_at on either
    assert fallback.conflict_resolution == "flag"


def test_settle_conflict_leaves_a_verdict_without_one_alone() -> None:
    plain = ClaimVerdict(
        claim_id="c", label=Label.SUPPORTED, citations=(Citation(evidence_id="old", quote=OLD),)
    )
    assert settle_conflict(plain, "contradicted", {}) == plain


# --- the LLM judge, the fused call and the cascade, through the fake server ------------------------------


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


REFUND_A = "Refund window: 30 days for blenders."
REFUND_B = "Refund window: 14 days for blenders."
REFUND_CLAIM = "The refund window for blenders is 30 days."


def test_the_llm_judge_cites_the_other_side_and_it_is_verified(server: FakeOpenAI) -> None:
    a = answer(doc("a", REFUND_A), doc("b", REFUND_B), text=REFUND_CLAIM)
    judge = LLMJudge(LLMClient("fake", base_url=server.base_url, api_key="k"))

    async def go() -> AnswerAudit:
        try:
            return await audit_answer(a, decompose_answer(a), policy(), judge)
        finally:
            await judge.client.aclose()

    (verdict,) = asyncio.run(go()).verdicts
    assert verdict.label is Label.SUPPORTED and verdict.settled_by == "llm"
    assert [(c.evidence_id, c.stance) for c in verdict.conflicts] == [("a", "supports"), ("b", "contradicts")]
    assert verdict.conflict_resolution == "flag"
    body = server.bodies[-1]
    assert "conflicting" in str(body["response_format"]) and "conflicting" in body["messages"][0]["content"]


@pytest.mark.parametrize(("decomposer", "cascade"), [("rules", True), ("rules", False), ("fused", False)])
def test_every_llm_mode_shows_the_demo_conflict(decomposer: str, cascade: bool) -> None:
    with FakeOpenAI(offline_judge=True) as srv:
        result = audit(
            [DEMO],
            judge="openai:fake",
            base_url=srv.base_url,
            store=False,
            cache=False,
            cascade=cascade,
            decomposer=decomposer,  # type: ignore[arg-type]
        )
    (claim,) = [c for a in result.answers for c in a.claims or [] if not c.screened]
    assert claim.verdict == "supported" and claim.conflict_resolution == "flag"
    assert {c.stance for c in claim.conflicts} == {"supports", "contradicts"}
    assert result.answers[0].grounded is False


# --- the demo, the gate and the store -------------------------------------------------------------------


def test_the_demo_shows_the_conflict_and_the_summary_counts_it() -> None:
    result = audit(sorted((ROOT / "examples" / "traces").iterdir()), store=False)
    conflicted_claims = [c for a in result.answers for c in a.claims or [] if c.conflicts]
    assert [c.text for c in conflicted_claims] == ["The X200 Blender carries a 12-month limited warranty"]
    figures = result.summary["conflicts"]
    assert figures["claims_with_conflict"]["numerator"] == 1 and figures["flagged"] == 1
    assert (  # both over the answers with a claim; the unsupported rate leaves the undecided ones out
        figures["answers_with_conflict"]["denominator"]
        == result.summary["answers_with_unsupported_claim"]["denominator"]
        + result.summary["undecided_answers"]
    )
    (segment,) = [s for s in result.summary["by_source_class"] if s["claims_with_conflict"]["numerator"]]
    assert segment["name"] == "retrieved-documents" and segment["answers_with_conflict"]["numerator"] == 1


def test_the_gate_fails_a_flagged_conflict_unless_the_policy_allows_it(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'gate.db'}"
    base = load_policy("default")
    for allowed in (False, True):
        thresholds = base.thresholds.model_copy(
            update={"release_pass_rate": 1.0, "conflicts_allowed": allowed}
        )
        run = run_gate([DEMO], base.model_copy(update={"thresholds": thresholds}), db_url=db)
        (case,) = run.decision.answers
        assert run.decision.passed is allowed and case.status == ("passed" if allowed else "failed")
        if not allowed:
            assert case.conflicted == ("The X200 Blender carries a 12-month limited warranty",)
            assert "on admitted sources that disagree" in case.reasons[0]


def test_conflicts_survive_the_store(tmp_path: Path) -> None:
    original = audit([DEMO], store=False)
    with Store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        loaded = store.load_run(store.save_result(original))
    assert loaded == original
    (claim,) = loaded.answers[0].claims or []
    assert len(claim.conflicts) == 2 and claim.conflict_resolution == "flag"
