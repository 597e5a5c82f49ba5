"""The offline judge: every verdict path, verified quotes, the cascade's certainty rule, determinism.

Tool results and documents come from the fixture generator's in-memory data
(``tests/support/gen_traces.py``), so these are the texts the ingest fixtures carry.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from auditor.claims import Claim, ScreenReason
from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.judges import ClaimVerdict, Label, OfflineJudge, verify_quotes
from auditor.judges.offline._combiner import shipped
from auditor.judges.reading._windows import prepare as _prepare
from tests.support.gen_traces import KB_DOCS, format_docs_text, get_order_text, get_refund_text

JUDGE = OfflineJudge()


def evidence(
    evidence_id: str, text: str, kind: EvidenceKind = EvidenceKind.TOOL_RESULT, name: str | None = "tool"
) -> Evidence:
    return Evidence(evidence_id=evidence_id, kind=kind, name=name, text=text, trace_id="trace-1")


def claim(text: str, claim_id: str = "c1", screened: bool = False) -> Claim:
    return Claim(
        claim_id=claim_id,
        answer_id="a1",
        text=text,
        start=0,
        end=len(text),
        screened=screened,
        screen_reason=ScreenReason.PLEASANTRY if screened else None,
    )


def kb(doc_id: str) -> Evidence:
    doc = next(d for d in KB_DOCS if d["id"] == doc_id)
    return evidence(doc_id, doc["page_content"], EvidenceKind.RETRIEVED_DOCUMENT, "kb")


REFUND = evidence("ev-refund", get_refund_text("10042"), name="get_refund")
ORDER = evidence("ev-order", get_order_text("10042"), name="get_order")
USER = evidence(
    "ev-user",
    "I paid $120 on March 3 for the extended warranty on order 10042.",
    EvidenceKind.USER_MESSAGE,
    None,
)


def judge_one(text: str, admitted: list[Evidence], excluded: list[Evidence] | None = None) -> ClaimVerdict:
    [verdict] = JUDGE.judge_sync([claim(text)], admitted, excluded or [])
    return verdict


def assert_quotes_verified(verdict: ClaimVerdict, items: list[Evidence], claim_text: str) -> None:
    """Every citation survives quote verification (it is in its item and carries the claim) and is
    an exact substring of its item."""
    by_id = {e.evidence_id: e for e in items}
    assert verify_quotes(verdict, by_id, claim_text=claim_text) == verdict
    for citation in verdict.citations:
        assert citation.quote in by_id[citation.evidence_id].text


def test_supported_quotes_the_evidence_sentence_exactly() -> None:
    policy = kb("KB-1")
    verdict = judge_one("You can return an item within 30 days of delivery for a full refund.", [policy])
    assert verdict.label is Label.SUPPORTED
    assert verdict.settled_by == "offline"
    assert [c.evidence_id for c in verdict.citations] == ["KB-1"]
    assert "within 30 days of delivery" in verdict.citations[0].quote
    assert_quotes_verified(
        verdict, [policy], "You can return an item within 30 days of delivery for a full refund."
    )


def test_changed_figure_is_contradicted_quoting_the_tool_value() -> None:
    verdict = judge_one("Order 10042 was refunded $95.00 on 2026-03-12.", [REFUND])
    assert verdict.label is Label.CONTRADICTED
    assert verdict.citations[0].quote == '"amount": "$80.00"'
    assert verdict.rationale == "95.00 differs from 80.00 in get_refund"
    assert_quotes_verified(verdict, [REFUND], "Order 10042 was refunded $95.00 on 2026-03-12.")


def test_fabricated_figure_found_nowhere_is_absent() -> None:
    verdict = judge_one("ACME paid $240.00 for order 10042, including a $15.00 shipping fee.", [ORDER])
    assert verdict.label is Label.ABSENT
    assert verdict.citations == ()
    assert verdict.rationale is not None and "15.00 found nowhere" in verdict.rationale


def test_true_part_of_the_fabricated_answer_is_supported() -> None:
    verdict = judge_one("ACME paid $240.00 for order 10042.", [ORDER])
    assert verdict.label is Label.SUPPORTED
    assert {c.quote for c in verdict.citations} >= {'"total": "$240.00"', '"customer": "ACME"'}
    assert_quotes_verified(verdict, [ORDER], "ACME paid $240.00 for order 10042.")


def test_missing_entity_is_absent() -> None:
    verdict = judge_one("Order 10042 was placed by Globex.", [ORDER])
    assert verdict.label is Label.ABSENT
    assert verdict.rationale == "entity 'Globex' not found in admitted evidence"
    assert judge_one("Order 10042 was placed by ACME.", [ORDER]).label is Label.SUPPORTED


@pytest.mark.parametrize(
    ("claim_text", "evidence_text"),
    [
        ("Gift cards are not refundable.", "Gift cards are refundable within 14 days."),
        ("Gift cards are refundable.", "Gift cards are not refundable."),
    ],
)
def test_negation_flip_is_contradicted(claim_text: str, evidence_text: str) -> None:
    item = evidence("ev-policy", evidence_text)
    verdict = judge_one(claim_text, [item])
    assert verdict.label is Label.CONTRADICTED
    assert verdict.citations[0].quote == evidence_text
    assert_quotes_verified(verdict, [item], claim_text)


def test_an_item_with_the_other_polarity_does_not_shadow_an_item_stating_the_claim() -> None:
    # both items cover every word; the first one read says the opposite, the second says it as claimed
    tickets = evidence("ev-tickets", "Raffle tickets are included in the price of entry.")
    extras = evidence("ev-extras", "Raffle tickets are not included in the price of entry.")
    verdict = judge_one("Raffle tickets are not included in the price of entry.", [tickets, extras])
    assert verdict.label is Label.SUPPORTED
    assert [c.evidence_id for c in verdict.citations] == ["ev-extras"]
    assert verdict.conflicts  # the other item is kept as the other side, never silently outvoted


def test_agreeing_negation_in_a_json_false_is_support() -> None:
    item = evidence(
        "ev-biz",
        json.dumps(
            {
                "name": "Tinker's Burgers",
                "attributes": {"RestaurantsReservations": False, "OutdoorSeating": True},
            }
        ),
    )
    assert judge_one("The restaurant does not take reservations.", [item]).label is Label.SUPPORTED
    assert judge_one("Tinker's Burgers offers outdoor seating.", [item]).label is Label.SUPPORTED
    assert judge_one("Tinker's Burgers takes reservations.", [item]).label is Label.CONTRADICTED


def test_aggregated_claim_cites_two_items() -> None:
    reports = [kb("KB-12"), kb("KB-13")]
    verdict = judge_one("Both reports say the average delivery time in Q1 was 3.2 days.", reports)
    assert verdict.label is Label.SUPPORTED
    assert {c.evidence_id for c in verdict.citations} == {"KB-12", "KB-13"}
    assert_quotes_verified(verdict, reports, "Both reports say the average delivery time in Q1 was 3.2 days.")


def test_aggregated_claim_with_one_supporting_item_is_absent() -> None:
    verdict = judge_one(
        "Both reports say the average delivery time in Q1 was 3.2 days.", [kb("KB-12"), ORDER]
    )
    assert verdict.label is Label.ABSENT
    assert verdict.rationale is not None and "only one item" in verdict.rationale


def test_claim_resting_on_the_users_message_lists_it_as_inadmissible_support() -> None:
    verdict = judge_one("You paid $120 for the extended warranty on March 3.", [ORDER], [USER])
    assert verdict.label is Label.ABSENT
    assert verdict.inadmissible_support == ("ev-user",)
    assert verdict.citations == ()  # excluded evidence is never cited


def test_supported_claim_lists_no_inadmissible_support() -> None:
    verdict = judge_one("ACME paid $240.00 for order 10042.", [ORDER], [USER, evidence("x", ORDER.text)])
    assert verdict.label is Label.SUPPORTED
    assert verdict.inadmissible_support == ()


def test_json_key_value_pairs_match_a_prose_claim() -> None:
    item = evidence(
        "ev-json", '{"order_id": "10042", "amount": "80.00", "currency": "USD"}', name="get_refund"
    )
    verdict = judge_one("Order 10042 got a refund of $80.00.", [item])
    assert verdict.label is Label.SUPPORTED
    assert '"amount": "80.00"' in {c.quote for c in verdict.citations}
    assert_quotes_verified(verdict, [item], "Order 10042 got a refund of $80.00.")
    # "refund" is not in this item, so it is not clearly the same subject: absent, not contradicted
    other = judge_one("Order 10042 got a refund of $95.00.", [item])
    assert (other.label, other.rationale) == (Label.ABSENT, "95.00 found nowhere in admitted evidence")


@pytest.mark.parametrize(
    "claim_text",
    [
        "Order 10042 was refunded 80 dollars on March 12, 2026.",
        "Order 10042 was refunded 80.00 USD on 12 March 2026.",
        "Order 10042 was refunded $80 on 2026-03-12.",
    ],
)
def test_amounts_and_dates_are_normalised(claim_text: str) -> None:
    verdict = judge_one(claim_text, [REFUND])
    assert verdict.label is Label.SUPPORTED
    assert '"approved_at": "2026-03-12"' in {c.quote for c in verdict.citations}


def test_durations_number_words_and_thousands_separators() -> None:
    item = evidence("ev-doc", "Refunds are issued within two weeks. The blender has a 1200 W motor.")
    assert judge_one("Refunds are issued within 14 days.", [item]).label is Label.SUPPORTED
    assert judge_one("The blender has a 1,200 W motor.", [item]).label is Label.SUPPORTED
    assert judge_one("Refunds are issued within 10 days.", [item]).label is Label.CONTRADICTED


def test_a_date_that_differs_is_contradicted() -> None:
    verdict = judge_one("Order 10042 was refunded $80.00 on 2026-03-15.", [REFUND])
    assert verdict.label is Label.CONTRADICTED
    assert verdict.citations[0].quote == '"approved_at": "2026-03-12"'


def test_multi_hop_claim_is_supported_by_two_tool_results_together() -> None:
    verdict = judge_one(
        "ACME's order 10042 was refunded $80.00 (refund RF-311, approved on 2026-03-12).", [ORDER, REFUND]
    )
    assert verdict.label is Label.SUPPORTED
    assert {c.evidence_id for c in verdict.citations} == {"ev-order", "ev-refund"}
    assert_quotes_verified(
        verdict,
        [ORDER, REFUND],
        "ACME's order 10042 was refunded $80.00 (refund RF-311, approved on 2026-03-12).",
    )


def test_settle_answers_only_for_a_verbatim_statement() -> None:
    docs = evidence("ev-kb", format_docs_text([d for d in KB_DOCS if d["id"] == "KB-1"]), name="search_kb")
    verbatim = JUDGE.settle(claim("Items can be returned within 30 days of delivery."), [docs])
    assert verbatim is not None and verbatim.label is Label.SUPPORTED
    assert verbatim.citations[0].quote == "items can be returned within 30 days of delivery"
    assert_quotes_verified(verbatim, [docs], "Items can be returned within 30 days of delivery.")
    # a paraphrase the rules support with every content word in one window is settled too
    paraphrase = "You can return an item within 30 days of delivery."
    assert judge_one(paraphrase, [docs]).label is Label.SUPPORTED
    [score] = JUDGE.scores([claim(paraphrase)], [docs])
    settled = JUDGE.settle(claim(paraphrase), [docs])
    assert score.score >= shipped().supported and settled is not None and settled.label is Label.SUPPORTED
    assert_quotes_verified(settled, [docs], paraphrase)
    # absence and contradiction are never certain
    assert JUDGE.settle(claim("Items can be returned within two weeks."), [docs]) is None
    assert JUDGE.settle(claim("Order 10042 was refunded $95.00."), [REFUND]) is None


def test_settle_refuses_short_negated_or_screened_claims() -> None:
    item = evidence("ev-neg", "It is not true that gift cards can be refunded in store.")
    assert JUDGE.settle(claim("gift cards can be refunded in store"), [item]) is None
    assert JUDGE.settle(claim("not true"), [item]) is None
    plain = evidence("ev-plain", "Gift cards can be refunded in store.")
    assert JUDGE.settle(claim("Gift cards can be refunded in store."), [plain]) is not None
    assert JUDGE.settle(claim("Gift cards can be refunded in store.", screened=True), [plain]) is None


def test_identity_says_approximate_and_common_knowledge_is_never_marked() -> None:
    assert JUDGE.identity.kind == "offline"
    assert JUDGE.identity.model is None
    assert JUDGE.identity.approximate is True
    answer = Answer(
        answer_id="a1",
        trace_id="trace-1",
        span_id="s1",
        text="Water boils at 100 degrees Celsius.",
        generated_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    claims = [claim(answer.text), claim("Thanks!", "c2", screened=True)]
    verdicts = asyncio.run(JUDGE.judge(answer, claims, [ORDER], [], allow_common_knowledge=True))
    assert [v.claim_id for v in verdicts] == ["c1"]  # screened claims get no verdict
    assert verdicts[0].label is Label.ABSENT
    assert verdicts[0].common_knowledge is False


def test_no_admitted_evidence_is_absent() -> None:
    verdict = judge_one("Order 10042 was refunded $80.00.", [], [REFUND])
    assert verdict.label is Label.ABSENT
    assert verdict.inadmissible_support == ("ev-refund",)


def test_verdicts_are_deterministic() -> None:
    items = [ORDER, REFUND, kb("KB-1"), kb("KB-12"), kb("KB-13"), USER]
    texts = [
        "Order 10042 was refunded $95.00.",
        "ACME paid $240.00 for order 10042.",
        "Both reports say the average delivery time in Q1 was 3.2 days.",
        "Gift cards are refundable.",
        "Order 10042 was placed by Globex.",
        "Items can be returned within 30 days of delivery.",
    ]
    claims = [claim(t, f"c{i}") for i, t in enumerate(texts)]
    first = JUDGE.judge_sync(claims, items[:5], items[5:])
    _prepare.cache_clear()
    second = OfflineJudge().judge_sync(claims, items[:5], items[5:])
    assert first == second
    # "Gift cards are refundable." covers a third of its words: undecided, not absent
    assert {v.label for v in first} == {Label.SUPPORTED, Label.CONTRADICTED, Label.ABSENT, Label.UNJUDGED}
    for verdict, text in zip(first, texts, strict=True):
        assert_quotes_verified(verdict, items, text)
