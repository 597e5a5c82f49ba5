"""Rule-based claim decomposition: splitting, citations, screening, refusals."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from auditor.claims import (
    Claim,
    ClaimExtractor,
    Decomposition,
    RuleExtractor,
    ScreenReason,
    decompose_answer,
    decompose_text,
)
from auditor.evidence import Answer


def _texts(d: Decomposition, *, screened: bool | None = False) -> list[str]:
    return [c.text for c in d.claims if screened is None or c.screened == screened]


def _reason(d: Decomposition, text: str) -> ScreenReason | None:
    return next(c.screen_reason for c in d.claims if c.text == text)


def _check_invariants(answer_text: str, d: Decomposition) -> None:
    previous_end = 0
    for c in d.claims:
        assert answer_text[c.start : c.end] == c.text
        assert c.start >= previous_end, "claims overlap or are out of order"
        assert c.text == c.text.strip() and c.text
        assert c.screened == (c.screen_reason is not None)
        previous_end = c.end


def _answer(text: str, question: str | None = None, answer_id: str = "a1") -> Answer:
    return Answer(
        answer_id=answer_id,
        trace_id="t",
        span_id="s",
        question=question,
        text=text,
        generated_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_coordinated_clauses_split_into_atomic_claims() -> None:
    text = "The refund is $80 and it was issued on March 3."
    d = decompose_text("a1", text)
    _check_invariants(text, d)
    assert _texts(d) == ["The refund is $80", "it was issued on March 3"]
    assert [c.claim_id for c in d.claims] == ["a1:c0", "a1:c1"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The fee is $5; the tax is $1.", ["The fee is $5", "the tax is $1"]),
        ("It opens at 9, but it closes at 5.", ["It opens at 9", "it closes at 5"]),
        (
            "The shop has valet parking, while the garage is closed.",
            ["The shop has valet parking", "the garage is closed"],
        ),
        (
            "The plan costs $20, whereas the pro plan costs $35.",
            ["The plan costs $20", "the pro plan costs $35"],
        ),
        (
            "The restaurant is suitable for groups and takes reservations.",
            ["The restaurant is suitable for groups", "takes reservations"],
        ),
        (
            "Although the ambiance is casual, some reviewers called it upscale.",
            ["Although the ambiance is casual", "some reviewers called it upscale"],
        ),
        (
            "Combine beer and onions in a pot and bring it to a boil.",
            ["Combine beer and onions in a pot", "bring it to a boil"],
        ),
    ],
)
def test_connectors_split_when_both_sides_are_clauses(text: str, expected: list[str]) -> None:
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert _texts(d) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Orders 1, 2 and 3 shipped.",
        "The menu includes burgers, fries, and shakes.",
        "Press and hold the Power button for 10 seconds.",
        "Homer is credited with writing the Iliad and the Odyssey, two epic poems.",
        'The sign read "closed and locked" all week.',
        "The fee (tax and delivery included) is $12.",
        "Cook for 10 to 12 minutes, turning once.",
    ],
)
def test_lists_quotes_and_parentheses_stay_one_claim(text: str) -> None:
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert _texts(d) == [text.rstrip(".")]


def test_abbreviations_decimals_times_urls_do_not_split_sentences() -> None:
    text = (
        "Dr. Smith moved to the U.S. in 2010. The price rose 3.5% to $80.00 at 10:30 a.m. yesterday, "
        "e.g. before noon. See https://example.com/a.b?x=1.5 for the policy. Mr. J. Doe approved it."
    )
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert _texts(d, screened=None) == [
        "Dr. Smith moved to the U.S. in 2010",
        "The price rose 3.5% to $80.00 at 10:30 a.m. yesterday, e.g. before noon",
        "See https://example.com/a.b?x=1.5 for the policy",
        "Mr. J. Doe approved it",
    ]


def test_sentence_ends_after_abbreviation_when_a_sentence_opener_follows() -> None:
    text = "He moved to the U.S. The move took 3 weeks."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert _texts(d) == ["He moved to the U.S.", "The move took 3 weeks"]


def test_newlines_bullets_and_numbered_lines() -> None:
    text = (
        "Here are the steps:\n\n1. Preheat the grill to 200 C.\n2) Oil the grate.\n"
        "- Serve the brats hot.\n* Store leftovers for 2 days\nStep 5: Clean the grill."
    )
    d = decompose_text("a", text, "how to cook brats")
    _check_invariants(text, d)
    assert _texts(d) == [
        "Preheat the grill to 200 C",
        "Oil the grate",
        "Serve the brats hot",
        "Store leftovers for 2 days",
        "Clean the grill",
    ]
    assert d.claims[0].screened and d.claims[0].text == "Here are the steps"


def test_quoted_sentences_stay_inside_their_sentence() -> None:
    text = 'He said "It is fine. We go." Then he left at 5.'
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert _texts(d) == ['He said "It is fine. We go."', "Then he left at 5"]


def test_citation_markers_attach_to_the_claim_they_follow() -> None:
    text = "The refund was $80 [1], and it was issued on May 2 [doc-3]. The fee is $5 [KB-7]."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert [(c.text, c.citations) for c in d.claims] == [
        ("The refund was $80", ("[1]",)),
        ("it was issued on May 2", ("[doc-3]",)),
        ("The fee is $5", ("[KB-7]",)),
    ]


def test_marker_ending_the_sentence_attaches_to_every_claim_of_it() -> None:
    text = "The refund was $80 and it was issued on May 2. [2] Shipping is free (source: FAQ page)."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert [(c.text, c.citations) for c in d.claims] == [
        ("The refund was $80", ("[2]",)),
        ("it was issued on May 2", ("[2]",)),
        ("Shipping is free", ("(source: FAQ page)",)),
    ]


def test_urls_are_listed_as_citations_and_stay_in_the_text() -> None:
    text = "The policy at https://acme.example/refunds allows 30 days."
    d = decompose_text("a", text)
    assert d.claims[0].text == "The policy at https://acme.example/refunds allows 30 days"
    assert d.claims[0].citations == ("https://acme.example/refunds",)


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("I think that's right.", ScreenReason.HEDGE),
        ("It may vary.", ScreenReason.HEDGE),
        ("Let me know if you need anything else!", ScreenReason.OFFER_TO_HELP),
        ("Is there anything else I can help with?", ScreenReason.OFFER_TO_HELP),
        ("Feel free to reach out with more questions.", ScreenReason.OFFER_TO_HELP),
        ("Thanks for reaching out!", ScreenReason.PLEASANTRY),
        ("Great question!", ScreenReason.PLEASANTRY),
        ("I hope this helps.", ScreenReason.PLEASANTRY),
        ("That is a good point.", ScreenReason.VAGUE),
        ("It depends on the situation.", ScreenReason.HEDGE),
        ("Yes.", ScreenReason.VAGUE),
        ("I don't have that information.", ScreenReason.REFUSAL),
    ],
)
def test_each_screen_reason(sentence: str, reason: ScreenReason) -> None:
    text = f"{sentence} The refund was $80."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert [(c.screened, c.screen_reason) for c in d.claims] == [(True, reason), (False, None)]
    assert _texts(d) == ["The refund was $80"]


def test_hedged_sentence_with_a_fact_is_a_claim_with_the_hedge_cut_off() -> None:
    text = "I believe the refund was $80. It seems that the order shipped on May 2."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert _texts(d) == ["the refund was $80", "the order shipped on May 2"]


def test_source_lead_in_is_cut_off_the_claim() -> None:
    text = "Based on the provided passages, the store opens at 9 am."
    d = decompose_text("a", text)
    assert _texts(d) == ["the store opens at 9 am"]


def test_a_pleasantry_word_inside_a_fact_does_not_screen_it() -> None:
    text = "They have a good selection of vegetarian options. Sure, the refund was $80."
    d = decompose_text("a", text)
    assert _texts(d) == ["They have a good selection of vegetarian options", "the refund was $80"]


def test_question_restatement_is_screened() -> None:
    question = "When was the refund for order 10042 issued?"
    text = "You asked when the refund for order 10042 was issued. It was issued on March 3."
    d = decompose_text("a", text, question)
    _check_invariants(text, d)
    assert (
        _reason(d, "You asked when the refund for order 10042 was issued")
        is ScreenReason.QUESTION_RESTATEMENT
    )
    assert _texts(d) == ["It was issued on March 3"]


def test_restatement_cue_with_new_content_is_a_claim() -> None:
    question = "When was the refund for order 10042 issued?"
    text = "You asked about order 10042, which was refunded $80 on March 3."
    d = decompose_text("a", text, question)
    assert not d.claims[0].screened


def test_yes_no_answer_repeating_the_question_is_not_a_restatement() -> None:
    question = "Was the refund for order 10042 issued?"
    text = "The refund for order 10042 was issued."
    d = decompose_text("a", text, question)
    assert _texts(d) == ["The refund for order 10042 was issued"]


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, but I don't have that information.",
        "I'm unable to find any order under that name. Is there anything else I can help with?",
        "I cannot answer that based on the documents.",
        "There is no information about the warranty in the provided documents.",
        "Thanks for asking! The provided documents do not mention the warranty period.",
        "Unable to answer based on given passages.",
    ],
)
def test_full_refusal(text: str) -> None:
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert d.refusal
    assert d.judgeable == []
    assert any(c.screen_reason is ScreenReason.REFUSAL for c in d.claims)


def test_partial_refusal_is_not_a_refusal() -> None:
    text = "I couldn't find the invoice, but the refund of $80 was issued on March 3."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert not d.refusal
    assert _reason(d, "I couldn't find the invoice") is ScreenReason.REFUSAL
    assert _texts(d) == ["the refund of $80 was issued on March 3"]


def test_answer_of_only_pleasantries_is_not_a_refusal() -> None:
    d = decompose_text("a", "Thanks for reaching out! Let me know if you have questions.")
    assert not d.refusal and d.judgeable == [] and len(d.claims) == 2


def test_odd_text_never_raises_and_keeps_offsets() -> None:
    for text in [
        "",
        "   ",
        "...",
        "[1]",
        "\n\n- \n",
        "a",
        "$80.00",
        "x" * 5000,
        "((((",
        '"unbalanced.',
        "e.g.",
    ]:
        _check_invariants(text, decompose_text("a", text))


def test_sync_and_async_forms_agree_and_extractor_meets_the_protocol() -> None:
    answers = [
        _answer("The refund is $80 and it was issued on March 3.", answer_id=f"a{i}") for i in range(3)
    ]
    extractor: ClaimExtractor = RuleExtractor()
    assert extractor.name == "rules"
    got = asyncio.run(extractor.decompose(answers))
    assert got == [decompose_answer(a) for a in answers]
    assert [d.answer_id for d in got] == ["a0", "a1", "a2"]
    assert all(isinstance(c, Claim) and c.answer_id == d.answer_id for d in got for c in d.claims)
    assert got[0].extractor == "rules"


def test_decomposition_is_deterministic() -> None:
    text = "The refund is $80 [1] and it was issued on March 3. I hope this helps!"
    assert decompose_text("a", text) == decompose_text("a", text)


def test_aggregated_claim_stays_whole() -> None:
    text = "Both reports agree that the refund was $80 and it was issued on March 3."
    d = decompose_text("a", text)
    assert _texts(d) == [text.rstrip(".")]
    split = decompose_text("a", "The report says the refund was $80 and it was issued on March 3.")
    assert len(split.judgeable) == 2


def test_multi_number_and_source_markers() -> None:
    text = "The refund was $80 [1, 2]. It was issued on March 3 (Passage 2)."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert [(c.text, c.citations) for c in d.claims] == [
        ("The refund was $80", ("[1, 2]",)),
        ("It was issued on March 3", ("(Passage 2)",)),
    ]


def test_words_of_ascii_text_read_in_one_pass_are_the_tokens_read_one_by_one() -> None:
    import random

    from auditor.claims import _lexicon

    def one_by_one(text: str) -> list[str]:
        return [w.replace("\u2019", "'").lower().strip("'-") for w in _lexicon.WORD.findall(text)]

    rng = random.Random(20261201)
    pieces = [
        "Store",
        "It's",
        "don't",
        "-",
        "'",
        "A1",
        "12,5",
        "3.4%",
        "x-ray",
        "ABC",
        "q'",
        " ",
        "\n",
        ".",
        "Z",
    ]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
        assert _lexicon.words(text) == one_by_one(text), text
    assert (
        _lexicon.words("It\u2019s CAFÉ-time") == one_by_one("It\u2019s CAFÉ-time") == ["it's", "caf", "time"]
    )


def test_the_word_before_a_period_is_what_the_end_anchored_regex_finds() -> None:
    import random
    import re

    from auditor.claims._split import _word_before

    rng = random.Random(5)
    alphabet = "aAbZ.. .\n1\u00e9"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        line_start = rng.randint(0, len(text))
        end = rng.randint(line_start, len(text))
        found = re.search(r"(?:[A-Za-z]\.)*[A-Za-z]+$", text[line_start:end])
        assert _word_before(text, end, line_start) == (found.group() if found else None), (text, end)
    assert _word_before("He lives in the U.S", 19, 0) == "U.S"
