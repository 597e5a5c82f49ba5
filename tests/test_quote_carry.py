"""A quote must carry the claim: :func:`auditor.judges.verify_quotes` beyond "the quote is in the item".

Each case gives a verdict whose quotes are all really in their items; what is checked is whether
they could state the claim (supported) or rival it (contradicted), with the offline judge's
normalisation of numbers, dates, units and entities.
"""

from __future__ import annotations

import pytest

from auditor.evidence import Evidence, EvidenceKind
from auditor.judges import Citation, ClaimVerdict, Label, verify_quotes

REFUND_JSON = (
    '{"refund": {"id": "RF-311", "amount": "80.00", "currency": "USD", "approved_at": "2026-03-12"}}'
)
POLICY = (
    "Items can be returned within 14 days of delivery. Gift cards are not refundable. "
    "The X200 Blender carries a 24-month limited warranty. Shipping is free above $50."
)
ARTICLE = (
    "Chris Copeland of the Indiana Pacers left a New York nightclub early Wednesday. "
    "He was stabbed outside the club shortly before 4 a.m."
)


def item(evidence_id: str, text: str) -> Evidence:
    return Evidence(
        evidence_id=evidence_id, kind=EvidenceKind.TOOL_RESULT, name="tool", text=text, trace_id="trace-1"
    )


ITEMS = {
    e.evidence_id: e
    for e in (
        item("refund", REFUND_JSON),
        item("policy", POLICY),
        item("article", ARTICLE),
        item("report-a", "Report A: the average delivery time in Q1 was 3.2 days."),
        item("report-b", "Report B found that deliveries in Q1 took 3.2 days on average."),
        item("order", '{"order": {"id": "10042", "customer": "ACME", "total": "$240.00"}}'),
    )
}


def check(claim: str, label: Label, *quotes: tuple[str, str], common: bool = False) -> ClaimVerdict:
    verdict = ClaimVerdict(
        claim_id="c1",
        label=label,
        citations=tuple(Citation(evidence_id=e, quote=q) for e, q in quotes),
        rationale="the judge's reason",
        common_knowledge=common,
    )
    for e, q in quotes:  # every case is about carrying, never about a quote that is not there
        assert " ".join(q.split()).casefold() in " ".join(ITEMS[e].text.split()).casefold()
    return verify_quotes(verdict, ITEMS, claim_text=claim)


def kept(verdict: ClaimVerdict, label: Label) -> bool:
    return verdict.label is label and "quote_does_not_support" not in verdict.judge_errors


def demoted(verdict: ClaimVerdict, label: Label) -> bool:
    return (
        verdict.label is Label.ABSENT
        and "quote_does_not_support" in verdict.judge_errors
        and verdict.citations == ()
        and (verdict.rationale or "").startswith(f"demoted from {label.value}: ")
        and "the judge's reason" in (verdict.rationale or "")
    )


# -- supported: figures, dates, units ------------------------------------------------------------


@pytest.mark.parametrize(
    "claim", ["The refund was $80.00.", "The refund was 80 dollars.", "You were refunded 80 USD."]
)
def test_an_amount_in_another_spelling_is_carried(claim: str) -> None:
    assert kept(check(claim, Label.SUPPORTED, ("refund", '"amount": "80.00"')), Label.SUPPORTED)


def test_a_quote_without_the_claims_amount_is_demoted() -> None:
    verdict = check("The refund was $95.00.", Label.SUPPORTED, ("refund", '"currency": "USD"'))
    assert demoted(verdict, Label.SUPPORTED) and "95.00" in (verdict.rationale or "")


@pytest.mark.parametrize("claim", ["It was approved on March 12, 2026.", "It was approved on 12 March 2026."])
def test_a_date_in_another_format_is_carried(claim: str) -> None:
    assert kept(check(claim, Label.SUPPORTED, ("refund", '"approved_at": "2026-03-12"')), Label.SUPPORTED)


def test_another_day_does_not_carry_the_date() -> None:
    verdict = check(
        "It was approved on March 13, 2026.", Label.SUPPORTED, ("refund", '"approved_at": "2026-03-12"')
    )
    assert demoted(verdict, Label.SUPPORTED)


def test_units_are_converted_and_a_different_unit_is_not_the_same_figure() -> None:
    quote = ("policy", "Items can be returned within 14 days of delivery.")
    assert kept(
        check("Items can be returned within two weeks of delivery.", Label.SUPPORTED, quote), Label.SUPPORTED
    )
    assert demoted(
        check("Items can be returned within 14 hours of delivery.", Label.SUPPORTED, quote), Label.SUPPORTED
    )


def test_a_json_pair_states_its_key_path() -> None:
    """``"amount": "80.00"`` inside ``"refund"`` states a refund amount (the offline judge's reading)."""
    verdict = check("A refund of $80.00 was issued.", Label.SUPPORTED, ("refund", '"amount": "80.00"'))
    assert kept(verdict, Label.SUPPORTED)


# -- supported: entities, words, length ----------------------------------------------------------


def test_an_entity_named_nowhere_the_judge_cites_is_demoted() -> None:
    quote = ("article", "He was stabbed outside the club shortly before 4 a.m.")
    verdict = check("Thabo Sefolosha was stabbed outside the club.", Label.SUPPORTED, quote)
    assert demoted(verdict, Label.SUPPORTED) and "Sefolosha" in (verdict.rationale or "")


def test_an_entity_named_elsewhere_in_the_quoted_item_is_carried() -> None:
    """The quote says "he"; the article it comes from names Copeland (coreference is beyond a surface check)."""
    quote = ("article", "He was stabbed outside the club shortly before 4 a.m.")
    assert kept(check("Copeland was stabbed outside the club.", Label.SUPPORTED, quote), Label.SUPPORTED)


def test_a_real_but_unrelated_sentence_is_demoted() -> None:
    quote = ("policy", "Items can be returned within 14 days of delivery.")
    verdict = check("The X200 Blender carries a limited warranty.", Label.SUPPORTED, quote)
    assert demoted(verdict, Label.SUPPORTED) and "content words" in (verdict.rationale or "")


def test_a_quote_sharing_too_few_of_the_claims_words_is_demoted() -> None:
    """Half of the content words is the bar (``MIN_SHARE``): "warranty" alone does not carry the claim."""
    quote = ("policy", "The X200 Blender carries a 24-month limited warranty.")
    assert kept(check("The X200 carries a limited warranty.", Label.SUPPORTED, quote), Label.SUPPORTED)
    verdict = check(
        "X200 owners get free repairs and replacement parts under warranty.", Label.SUPPORTED, quote
    )
    assert demoted(verdict, Label.SUPPORTED)


@pytest.mark.parametrize("quote", ["P", "It", " x "])
def test_a_trivially_short_quote_is_demoted(quote: str) -> None:
    verdict = check("Items can be returned within 14 days.", Label.SUPPORTED, ("policy", quote))
    assert demoted(verdict, Label.SUPPORTED)


def test_a_claim_with_nothing_to_check_needs_its_words_quoted() -> None:
    quote = ("policy", "Gift cards are not refundable.")
    assert demoted(check("There is no passage provided.", Label.SUPPORTED, quote), Label.SUPPORTED)


# -- several quotes: aggregated and multi-hop claims ---------------------------------------------


def test_an_aggregated_claim_is_carried_by_its_quotes_together() -> None:
    claim = "Both reports say the average delivery time in Q1 was 3.2 days."
    a = ("report-a", "Report A: the average delivery time in Q1 was 3.2 days.")
    b = ("report-b", "Report B found that deliveries in Q1 took 3.2 days on average.")
    assert kept(check(claim, Label.SUPPORTED, a, b), Label.SUPPORTED)


def test_a_multi_hop_claim_needs_every_figure_in_some_quote() -> None:
    claim = "ACME paid $240.00 and was refunded $80.00."
    total = ("order", '"total": "$240.00"')
    customer = ("order", '"customer": "ACME"')
    amount = ("refund", '"amount": "80.00"')
    assert kept(check(claim, Label.SUPPORTED, total, customer, amount), Label.SUPPORTED)
    verdict = check(claim, Label.SUPPORTED, total, customer)
    assert demoted(verdict, Label.SUPPORTED) and "80.00" in (verdict.rationale or "")


# -- contradicted: a rival figure, date, entity, or the negation ---------------------------------


def test_a_rival_figure_carries_a_contradiction() -> None:
    verdict = check("The refund was $95.00.", Label.CONTRADICTED, ("refund", '"amount": "80.00"'))
    assert kept(verdict, Label.CONTRADICTED)


def test_a_rival_date_and_a_rival_duration_carry_a_contradiction() -> None:
    date = ("refund", '"approved_at": "2026-03-12"')
    assert kept(check("It was approved on 2026-03-15.", Label.CONTRADICTED, date), Label.CONTRADICTED)
    months = ("policy", "The X200 Blender carries a 24-month limited warranty.")
    assert kept(check("The X200 has a 12-month warranty.", Label.CONTRADICTED, months), Label.CONTRADICTED)


def test_a_rival_entity_carries_a_contradiction() -> None:
    quote = ("article", "Chris Copeland of the Indiana Pacers left a New York nightclub early Wednesday.")
    verdict = check("Chris Copeland of the Boston Celtics left the nightclub.", Label.CONTRADICTED, quote)
    assert kept(verdict, Label.CONTRADICTED)


def test_the_negation_carries_a_contradiction() -> None:
    quote = ("policy", "Gift cards are not refundable.")
    assert kept(check("Gift cards are refundable.", Label.CONTRADICTED, quote), Label.CONTRADICTED)


def test_a_quote_agreeing_with_the_claim_does_not_contradict_it() -> None:
    quote = ("policy", "Gift cards are not refundable.")
    assert demoted(
        check("Gift cards cannot be refunded, not refundable.", Label.CONTRADICTED, quote), Label.CONTRADICTED
    )
    same = ("refund", '"amount": "80.00"')
    assert demoted(check("The refund was $80.00.", Label.CONTRADICTED, same), Label.CONTRADICTED)


def test_an_unrelated_quote_does_not_contradict() -> None:
    quote = ("policy", "Shipping is free above $50.")
    assert demoted(check("Gift cards are refundable.", Label.CONTRADICTED, quote), Label.CONTRADICTED)


# -- what the check leaves alone -----------------------------------------------------------------


def test_absent_and_common_knowledge_verdicts_keep_their_handling() -> None:
    absent = check("Gift cards are refundable.", Label.ABSENT)
    assert absent.label is Label.ABSENT and absent.judge_errors == ()
    common = check(
        "Water boils at 100 degrees.", Label.SUPPORTED, ("policy", "Shipping is free above $50."), common=True
    )
    assert common.label is Label.SUPPORTED and common.common_knowledge and common.judge_errors == ()


def test_a_missing_quote_is_still_no_verified_quote() -> None:
    verdict = verify_quotes(
        ClaimVerdict(
            claim_id="c1", label=Label.SUPPORTED, citations=(Citation(evidence_id="policy", quote="nowhere"),)
        ),
        ITEMS,
        claim_text="Gift cards are refundable.",
    )
    assert verdict.label is Label.ABSENT and "no verified quote" in (verdict.rationale or "")
    assert "quote_does_not_support" not in verdict.judge_errors


# -- the offline judge quotes what carries the claim ---------------------------------------------


def test_the_offline_judge_quotes_the_figure_of_a_large_json_object() -> None:
    """Of an object with more matching pairs than it quotes, the offline judge quotes the pair
    stating the claim's figure and those adding its words, so its verdict survives the check."""
    from auditor.claims import Claim
    from auditor.judges import OfflineJudge

    pizza = ("style", "sizes", "oven", "delivery", "menu", "review", "dough", "sauce")
    pairs = {"name": "Pizza Barn", "city": "Goleta", "categories": "Pizza, Restaurants"}
    pairs |= {f"pizza_{k}": f"{k} pizza" for k in pizza} | {
        "pizza_oven": "wood-fired pizza oven",
        "stars": 4.5,
    }
    business = item("business", '{"business": ' + str(pairs).replace("'", '"') + "}")
    text = "Pizza Barn in Goleta bakes pizza in a wood-fired oven and is rated 4.5 stars."
    claim = Claim(claim_id="c1", answer_id="a1", text=text, start=0, end=len(text))
    [verdict] = OfflineJudge().judge_sync([claim], [business])
    assert verdict.label is Label.SUPPORTED
    assert '"stars": 4.5' in {c.quote for c in verdict.citations}
    assert verify_quotes(verdict, {"business": business}, claim_text=text) == verdict


def test_a_quote_s_characters_are_counted_without_any_kind_of_whitespace() -> None:
    from auditor.judges.verify._carry import read_quotes

    quote = "Refunds\u00a0take 14\tdays\x1c\u3000(\u2028paid)\n back"
    text = f"Note: {quote}."
    assert read_quotes([(quote, "e1", text)]).chars == sum(not c.isspace() for c in quote) == 27


def test_a_prose_window_and_a_quote_of_it_read_as_they_did_before_they_shared_one_reading() -> None:
    # lexical.stated serves the offline judge's prose windows and the quote check: each must read
    # as its own formula did (a window's key path and extra words were empty for prose).
    from auditor.judges.reading._lexical import compound_stems, content_stems, negated_stems, words
    from auditor.judges.reading._segments import segments_of
    from auditor.judges.verify import _carry

    texts = [
        POLICY,
        ARTICLE,
        "It is not. Rooms are clean, not cheap; no WiFi or take-out. The hotel doesn't allow pets.",
        "No. 74 is not only a number but a name (Smith-Jones). CamelCaseWords and snake_case_keys count.",
        "The fee isn\u2019t refundable \u2014 without exception. Non-members pay $5.50 (about 5 EUR).",
    ]
    for text in texts:
        for seg in segments_of("e1", text):
            body = seg.text
            assert seg.stems == frozenset(content_stems(body + "  ") | compound_stems(body))
            assert seg.negated == negated_stems(body) | negated_stems(" ".join(words(body)))
            said = _carry._said(body)
            assert said.stems == frozenset(content_stems(body) | compound_stems(body))
            assert said.negated == negated_stems(body) | negated_stems(" ".join(words(body)))
