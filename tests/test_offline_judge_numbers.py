"""Quantity normalisation used by the offline judge: equal facts compare equal, others do not."""

from __future__ import annotations

import random

import pytest

from auditor.judges.reading._entities import entities
from auditor.judges.reading._lexical import negated_stems
from auditor.judges.reading._numbers import comparable, extract, matches
from auditor.judges.reading._segments import json_pairs, segments_of


def one(text: str) -> object:
    found = extract(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("$80", "80.00 USD"),
        ("$80.00", "80 dollars"),
        ("March 3, 2025", "2025-03-03"),
        ("3 March 2025", "2025-03-03"),
        ("14 days", "two weeks"),
        ("1,200 units", "1200 units"),
        ("11 am", "11:00"),
        ("5 pm", "17:0"),
        ("24-month warranty", "24 months"),
        ("2 years", "24 months"),
        ("45%", "45 percent"),
        ("$1.2 million", "$1,200,000"),
    ],
)
def test_equal_quantities_match(a: str, b: str) -> None:
    qa, qb = extract(a)[0], extract(b)[0]
    assert matches(qa, qb) and matches(qb, qa)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("$80", "$95"),
        ("March 3, 2025", "2025-03-04"),
        ("14 days", "three weeks"),
        ("$80", "80 EUR"),
        ("45%", "54%"),
        ("11 am", "11 pm"),
    ],
)
def test_different_quantities_of_one_kind_conflict(a: str, b: str) -> None:
    qa, qb = extract(a)[0], extract(b)[0]
    assert not matches(qa, qb)
    assert comparable(qa, qb)


def test_a_date_without_a_year_matches_any_year_and_a_year_matches_a_date() -> None:
    assert matches(extract("on March 3")[0], extract("2026-03-03")[0])
    assert matches(extract("in 2026")[0], extract("2026-03-03")[0])
    assert not comparable(extract("on March 3")[0], extract("in 2026")[0])


def test_codes_and_ids_are_entities_not_numbers() -> None:
    assert extract("refund RF-311 for the X200") == []
    assert entities("ACME's order 10042 got refund RF-311 for the X200 from Example Appliances.") == [
        "ACME",
        "RF-311",
        "X200",
        "Example",
        "Appliances",
    ]
    assert entities("The 12-month warranty costs 5 USD.") == ["USD"]  # quantities are stripped by the judge


def test_json_pairs_keep_key_paths_and_exact_offsets() -> None:
    text = '{"refund": {"amount": "$80.00", "ok": true}, "tags": ["a", 2]}'
    pairs = json_pairs(text)
    assert pairs is not None
    assert [(path, text[s:e]) for path, s, e, _, _ in pairs] == [
        (("refund", "amount"), '"amount": "$80.00"'),
        (("refund", "ok"), '"ok": true'),
        (("tags",), '"a"'),
        (("tags",), "2"),
    ]
    assert json_pairs("[KB-1] Returns policy: within 30 days.") is None
    for segment in segments_of("e", text):
        for s, e in segment.spans:
            assert text[s:e] in segment.text


def test_negation_scope_ends_at_a_clause_boundary() -> None:
    assert negated_stems("He was not restrained and hit a mailbox") == {"restrain"}
    assert negated_stems("They do not have WiFi") == {"wifi"}
    assert negated_stems("Refunds are issued promptly") == frozenset()


DIGIT_FREE = [
    "Refunds are paid within two weeks of delivery, in March or April, by 5 pm at the latest.".replace(
        "5", "five"
    ),
    "The fee is a few dollars ($, USD, EUR) and half an hour; a fortnight in May and June.",
    "It opens at nine am and closes at six p.m. on weekdays, from April to May, and in March of this year.",
    "Prices rose by a third, twenty percent per cent, a thousand and one nights, a dozen eggs.",
    "Between the first and the second of May, one reviewer said the three courses took an hour.",
    "Ünïcödé café: a week; two-thirds; twenty-five years; a million reasons; the 2nd".replace("2", "two"),
]


@pytest.mark.parametrize("text", DIGIT_FREE)
@pytest.mark.parametrize("evidence", [False, True])
def test_a_text_without_a_digit_reads_as_with_every_pattern(
    text: str, evidence: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    from auditor.judges.reading import _numbers

    fast = _numbers.extract(text, evidence=evidence)
    monkeypatch.setattr(_numbers, "_DIGIT", re.compile(""))  # every pattern, as before the shortcut
    _numbers.clear_cache()  # read again, not from the cache
    assert fast == _numbers.extract(text, evidence=evidence)
    for kind, pattern in _numbers._PATTERNS:
        if kind != "words":  # the shortcut's premise: only the number words match without a digit
            assert pattern.search(text) is None, kind


def _generated_texts(count: int, seed: int) -> list[str]:
    """Sentences built from the pieces every pattern reads (dates, clocks, amounts, number words,
    durations) and plain words, in random order, with and without non-ASCII letters."""
    rng = random.Random(seed)
    pieces = (  # noqa: SIM905 (a word list reads better as prose)
        "2025-03-04 3/4/2025 12/31/99 April 18-26 March 3, 2025 3rd of May June 2024 may Sept. 9 Dec 1st "
        "11:30 9am 6 p.m. 10 AM $80.00 US$5 USD 1,200 EUR 3 \u20ac4 \u00a35 40% 12 percent 3 million 2 bn "
        "one two-thirds twenty-five a dozen eggs half an hour an hour a fortnight a year ago decade days "
        "km 5km 24-month 10 kg of 1.5 litres store 12 RF-311 X200 - / : the refund is paid within and "
        "\u0131 \u017fix \u212a caf\u00e9 seconds minutes weeks jan. oct 2nd 1st amounts pm am"
    ).split()
    texts = []
    for _ in range(count):
        words = [rng.choice(pieces) for _ in range(rng.randint(1, 14))]
        texts.append(rng.choice([" ", ", ", " - "]).join(words))
    return texts


@pytest.mark.slow
@pytest.mark.parametrize("evidence", [False, True])
def test_ruling_patterns_out_by_substring_changes_no_reading(
    evidence: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.judges.reading import _numbers

    texts = _generated_texts(3000, seed=14) + DIGIT_FREE
    fast = [_numbers.extract(text, evidence=evidence) for text in texts]
    ruled_out = sum(len(_numbers._candidates(t, _numbers._PATTERNS)) < len(_numbers._PATTERNS) for t in texts)
    assert ruled_out > 1000  # the shortcut is taken on most of them
    monkeypatch.setattr(_numbers, "_candidates", lambda text, patterns: patterns)  # every pattern
    _numbers.clear_cache()
    assert fast == [_numbers.extract(text, evidence=evidence) for text in texts]


def test_a_cached_reading_is_a_fresh_list_of_the_same_quantities() -> None:
    from auditor.judges.reading import _numbers

    first = _numbers.extract("A fee of $12.00 applies within 14 days.")
    first.clear()  # a caller's list is its own
    again = _numbers.extract("A fee of $12.00 applies within 14 days.")
    assert [(q.kind, q.value) for q in again] == [("money", 12.0), ("measure", 14.0)]


def test_a_sentence_start_is_what_the_regex_over_the_text_before_found() -> None:
    import re

    from auditor.judges.reading._entities import _TOKEN, opens_sentence

    rng = random.Random(7)
    pieces = (  # noqa: SIM905 (a word list reads better as prose)
        "Dr. the A-1 X200 \u2019s 's ( \u201cBig\u201d \u2014 \u2013 - : ; ! ? 5km 2.5GB U.S. NASA Paris\u2019s "
        "\u00a0 \t \n Apple's RF-311 iPhone Mr. ok Lyon"
    ).split(" ")
    texts = [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(1000)]
    starts = [(t, m.start()) for t in texts for m in _TOKEN.finditer(t)]
    by_regex = [
        not t[:i].strip() or bool(re.search('[.!?:;\\-\u2013\u2014("\u201c]\\s*$', t[:i])) for t, i in starts
    ]
    assert 1000 < sum(by_regex) < len(starts) - 1000  # both answers are tested often
    assert [opens_sentence(t, i) for t, i in starts] == by_regex


# Issue 28, item 3: one date or number in any common form, in prose or inside a JSON tool result.
DATE_FORMS = ["24 March 2026", "March 24", "2026-03-24", "March 24, 2026", "24th of March"]


@pytest.mark.parametrize("a", DATE_FORMS)
@pytest.mark.parametrize("b", DATE_FORMS)
def test_one_date_in_every_form_matches(a: str, b: str) -> None:
    (qa,), (qb,) = extract(a), extract(b)
    assert (qa.month, qa.day) == (qb.month, qb.day) == (3, 24)
    assert matches(qa, qb) and matches(qb, qa)
    assert not matches(qa, extract("2026-03-25")[0])


@pytest.mark.parametrize(("a", "b"), [("1,250.0", "1250"), ("1,250", "1250.00"), ("1250", "1,250.0")])
def test_thousands_separators_and_trailing_zeros_match(a: str, b: str) -> None:
    (qa,), (qb,) = extract(a), extract(b)
    assert matches(qa, qb) and matches(qb, qa)
    assert not matches(qa, extract("1,205.0")[0])


def _judged(claim_text: str, tool_text: str) -> tuple[str, list[str]]:
    from tests.test_offline_judge import evidence, judge_one

    verdict = judge_one(claim_text, [evidence("ev-tool", tool_text, name="get_order")])
    return verdict.label.value, [c.quote for c in verdict.citations]


DELIVERY = '{"order_id": "10042", "status": "delivered", "delivered_on": "2026-03-24"}'


@pytest.mark.parametrize("when", ["March 24", "24 March 2026", "2026-03-24", "March 24, 2026"])
def test_a_date_inside_a_json_tool_result_supports_every_form(when: str) -> None:
    label, quotes = _judged(f"Order 10042 was delivered on {when}.", DELIVERY)
    assert label == "supported" and '"delivered_on": "2026-03-24"' in quotes
    label, quotes = _judged(f"Order 10042 was delivered on {when.replace('24', '25')}.", DELIVERY)
    assert label == "contradicted" and quotes == ['"delivered_on": "2026-03-24"']


@pytest.mark.parametrize(
    ("written", "stored"), [("1,250.0", "1250"), ("1250", '"1,250.0"'), ("1,250", "1250.0")]
)
def test_a_number_inside_a_json_tool_result_supports_every_form(written: str, stored: str) -> None:
    label, quotes = _judged(
        f"The ACME account balance is {written}.", f'{{"account": "ACME", "balance": {stored}}}'
    )
    assert label == "supported" and f'"balance": {stored}' in quotes


def test_json_pairs_report_an_empty_list_as_its_key_holding_none() -> None:
    text = '{"invoice_id": "INV-7", "payments": [ ], "lines": [{"sku": "A"}], "tags": []}'
    pairs = json_pairs(text)
    assert pairs is not None
    assert [(path, text[s:e], text[vs:ve]) for path, s, e, vs, ve in pairs] == [
        (("invoice_id",), '"invoice_id": "INV-7"', '"INV-7"'),
        (("payments",), '"payments": [ ]', "[ ]"),
        (("lines", "sku"), '"sku": "A"', '"A"'),
        (("tags",), '"tags": []', "[]"),
    ]
    assert json_pairs('{"a": [1, 2], "b": [[]]}') == [
        (("a",), 7, 8, 7, 8),
        (("a",), 10, 11, 10, 11),
    ]  # only an empty list directly under a key says "none"; a list holding one does not


INVOICE = '{"invoice_id": "INV-7", "customer": "ACME", "payments": []}'


@pytest.mark.parametrize(
    "claim_text", ["Nothing has been paid on invoice INV-7.", "No payments have been made on invoice INV-7."]
)
def test_an_empty_list_supports_nothing_paid(claim_text: str) -> None:
    assert _judged(claim_text, INVOICE) == ("supported", ['"invoice_id": "INV-7"', '"payments": []'])


def test_an_empty_list_contradicts_a_payment() -> None:
    # before the empty list was read, the invoice id alone made this "supported" (a near miss)
    assert _judged("Invoice INV-7 has been paid.", INVOICE) == ("contradicted", ['"payments": []'])
