"""A ``supported`` verdict whose quote states another status, price or event date of the claim's
thing disagrees with it (:func:`auditor.judges.verify._quotes._against`, reading the values with
:mod:`auditor.judges.reading._values`, the reading conflicts between items use).

"Order 1042 was refunded" quoted for "Order 1042 is paid" holds the claim's thing and no figure
of it to miss, so neither the presence check nor the rival-figure check stopped it; "The X200
costs $59" quoted for "The X200 costs $49" was only demoted to ``absent``. Each is now
``contradicted`` (certain: the same thing, the same attribute, another value, and never the
claim's), with the judge error ``quote_disagrees``; for every judge, so end to end through a
scripted judge on the real ``openai`` client too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.evidence import Evidence, EvidenceKind
from auditor.gate import GateRun, run_gate
from auditor.judges import Citation, ClaimVerdict, Label, UnjudgedReason, verify_quotes
from auditor.llm import run_sync
from auditor.policy import load_policy
from auditor.run import audit_async
from tests.support.fake_openai import FakeOpenAI

ORDERS = "Order 1042 was refunded on March 3. Returns are free within 30 days."
CATALOGUE = "The X200 costs $59. Shipping takes two days."
SHIPPING = "Order 1042 ships on March 28. Tracking is sent by email."
RECORD = '{"order_id": 1042, "status": "refunded", "ship_date": "2026-03-28"}'
BLENDER = "Order 1042 was refunded. The blender arrived damaged."
TEXTS = {"orders": ORDERS, "catalogue": CATALOGUE, "shipping": SHIPPING, "record": RECORD, "blender": BLENDER}
ITEMS = {
    k: Evidence(evidence_id=k, kind=EvidenceKind.TOOL_RESULT, name="tool", text=v, trace_id="t1")
    for k, v in TEXTS.items()
}


def check(claim: str, evidence_id: str, quote: str) -> ClaimVerdict:
    assert quote in ITEMS[evidence_id].text  # a real quote, every time
    verdict = ClaimVerdict(
        claim_id="c1", label=Label.SUPPORTED, citations=(Citation(evidence_id=evidence_id, quote=quote),)
    )
    return verify_quotes(verdict, ITEMS, claim_text=claim)


@pytest.mark.parametrize(
    ("claim", "evidence_id", "quote", "said"),
    [
        ("Order 1042 is paid.", "orders", "Order 1042 was refunded on March 3.", "refunded"),
        ("Order 1042 is paid.", "orders", "Order 1042 was refunded", "refunded"),  # part of the sentence
        ("The X200 costs $49.", "catalogue", "The X200 costs $59.", "$59"),
        ("Order 1042 ships on March 24.", "shipping", "Order 1042 ships on March 28.", "March 28"),
        ("Order 1042 is paid.", "record", '"order_id": 1042, "status": "refunded"', "refunded"),
        ("Order 1042 ships on March 24.", "record", '"ship_date": "2026-03-28"', "2026-03-28"),
    ],
)
def test_a_quote_stating_another_value_contradicts(
    claim: str, evidence_id: str, quote: str, said: str
) -> None:
    verdict = check(claim, evidence_id, quote)
    assert verdict.label is Label.CONTRADICTED
    assert verdict.judge_errors == ("quote_disagrees",)
    assert verdict.citations == (Citation(evidence_id=evidence_id, quote=quote),)
    assert f"the quote says {said} where the claim says" in (verdict.rationale or "")
    # the pipeline verifies every verdict again: the turned verdict stays contradicted
    again = verify_quotes(verdict, ITEMS, claim_text=claim)
    assert again.label is Label.CONTRADICTED and again.citations == verdict.citations


def test_another_value_of_a_claim_saying_more_is_unjudged() -> None:
    """The sentence names the order but not the blender: perhaps another payment; fail closed."""
    verdict = check("Order 1042 for the blender is paid.", "blender", "Order 1042 was refunded. The blender")
    assert verdict.label is Label.UNJUDGED
    assert verdict.unjudged_reason is UnjudgedReason.QUOTE_DISAGREES
    assert verdict.judge_errors == ("quote_disagrees",)


@pytest.mark.parametrize(
    ("claim", "evidence_id", "quote"),
    [
        ("Order 1042 was refunded.", "orders", "Order 1042 was refunded on March 3."),
        ("The X200 costs $59.", "catalogue", "The X200 costs $59."),
        ("Order 1042 ships on March 28.", "shipping", "Order 1042 ships on March 28."),
        ("Order 1042 is refunded.", "record", '"order_id": 1042, "status": "refunded"'),
        # "not paid" is at odds with "paid" only: "refunded" is not paid either
        ("Order 1042 is not paid.", "orders", "Order 1042 was refunded on March 3."),
    ],
)
def test_a_quote_stating_the_claims_value_keeps_its_support(claim: str, evidence_id: str, quote: str) -> None:
    verdict = check(claim, evidence_id, quote)
    assert verdict.label is Label.SUPPORTED and verdict.judge_errors == ()


def test_the_same_status_of_another_thing_is_no_disagreement() -> None:
    items = {
        "two": Evidence(
            evidence_id="two",
            kind=EvidenceKind.TOOL_RESULT,
            name="tool",
            text="Order 1043 was refunded. Order 1042 is paid.",
            trace_id="t1",
        )
    }
    verdict = ClaimVerdict(
        claim_id="c1",
        label=Label.SUPPORTED,
        citations=(Citation(evidence_id="two", quote="Order 1043 was refunded. Order 1042 is paid."),),
    )
    kept = verify_quotes(verdict, items, claim_text="Order 1042 is paid.")
    assert kept.label is Label.SUPPORTED and kept.judge_errors == ()


# -- end to end: a scripted judge through the real openai client, and the gate --------------------

WRONG = [
    ("status", "Order 1042 is paid.", ORDERS),
    ("price", "The X200 costs $49.", CATALOGUE),
    ("date", "Order 1042 ships on March 24.", SHIPPING),
]
RIGHT = [
    ("status", "Order 1042 was refunded.", ORDERS),
    ("price", "The X200 costs $59.", CATALOGUE),
    ("date", "Order 1042 ships on March 28.", SHIPPING),
]


def record(rid: str, answer: str, text: str) -> dict[str, object]:
    return {
        "id": rid,
        "question": "What about it?",
        "sources": [{"id": f"{rid}-doc", "text": text}],
        "answer": answer,
    }


def gate(tmp_path: Path, records: list[tuple[str, str, str]]) -> GateRun:
    path = tmp_path / "records.jsonl"
    lines = [json.dumps(record(*r)) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with FakeOpenAI() as judge:
        # every claim supported, quoting the real sentence sharing the most words with it
        judge.always_supported_closest_quote = True
        gated = run_gate(
            [path],
            load_policy(None),
            judge="openai:fake-judge",
            base_url=judge.base_url,
            format="records",
            db_url=f"sqlite:///{tmp_path / 'runs.db'}",
        )
    assert judge.by_kind["judge"] > 0  # the verdicts came through the real openai client
    return gated


def test_a_judge_quoting_another_status_price_or_date_fails_the_gate(tmp_path: Path) -> None:
    gated = gate(tmp_path, WRONG)
    claims = {a.trace_id: [c for c in a.claims or [] if c.verdict] for a in gated.result.answers}
    assert sorted(claims) == ["date", "price", "status"]
    for rid, (claim,) in claims.items():
        assert claim.verdict == "contradicted" and claim.settled_by == "llm", rid
        assert claim.judge_errors == ["quote_disagrees"], rid
        assert claim.citations, rid
    assert not any(a.grounded for a in gated.result.answers)
    assert gated.result.summary["quote_disagreements"] == len(WRONG)
    assert not gated.decision.passed


def test_a_judge_quoting_the_same_value_is_unchanged(tmp_path: Path) -> None:
    """The same scripted judge on right answers: its quotes state the claims' values (no cascade,
    so that the offline judge settles none of them)."""
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(record(*r)) for r in RIGHT) + "\n", encoding="utf-8")
    with FakeOpenAI() as judge:
        judge.always_supported_closest_quote = True
        result, _ = run_sync(
            lambda: audit_async(
                [path],
                judge="openai:fake-judge",
                base_url=judge.base_url,
                cascade=False,
                cache=False,
                format="records",
                store=False,
            )
        )
    assert judge.by_kind["judge"] == len(RIGHT)
    claims = [c for a in result.answers for c in a.claims or [] if c.verdict]
    assert len(claims) == len(RIGHT)
    for claim in claims:
        assert claim.verdict == "supported" and claim.settled_by == "llm" and not claim.judge_errors
    assert all(a.grounded for a in result.answers)
    assert result.summary["quote_disagreements"] == 0
