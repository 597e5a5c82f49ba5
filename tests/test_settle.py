"""settle(), the cascade's certain subset: certain by a property of the claim and one evidence window.

The cases below are the classes that made the score-only settle() wrong on the train set (WiCE and
AttributionBench claims that copy the source but for one word or one figure): each one was settled
``supported`` before and must not be now. The positive cases keep what certainty still covers: a
claim stated verbatim, or every content word, figure and name of it in one sentence.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from auditor.judges import CascadeJudge, Label, OfflineJudge, verify_quotes
from auditor.judges.offline import _light as light_module
from auditor.judges.offline import _settle as settle_module
from auditor.judges.offline._combiner import neutral
from tests.test_offline_judge import claim, evidence

JUDGE = OfflineJudge()


def settle(text: str, *sources: str) -> object:
    return JUDGE.settle(claim(text), [evidence(f"e{i}", s) for i, s in enumerate(sources)])


def test_a_claim_stated_verbatim_is_settled_with_the_exact_span() -> None:
    source = "Parking is free for visitors   in the North garage. Refunds take 14 days."
    verdict = settle("Parking is free for visitors in the north garage.", source)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    assert [c.quote for c in verdict.citations] == ["Parking is free for visitors   in the North garage"]
    assert verdict.settled_by == "offline"


def test_every_word_figure_and_name_in_one_sentence_is_settled() -> None:
    source = "The guided tour of Bran Castle starts at the north gate at 10 am. Tickets cost $12."
    text = "At 10 am the guided tour of Bran Castle starts at the north gate."
    [ev] = [evidence("e0", source)]
    verdict = JUDGE.settle(claim(text), [ev])
    assert verdict is not None and verdict.label is Label.SUPPORTED
    checked = verify_quotes(verdict, {"e0": ev}, claim_text=text)
    assert checked.label is Label.SUPPORTED and not checked.judge_errors


@pytest.mark.parametrize(
    ("text", "source"),
    [
        # one content word the source does not state ("sings" for "written by")
        (
            "Neil Young sings 'Only Love Can Break Your Heart.'",
            '"Only Love Can Break Your Heart" is a song written by Neil Young.',
        ),
        # a figure stated less precisely by the source (a year for a full date)
        (
            "Belushi married Sandra Davenport on May 17, 1980.",
            "This will be Belushi's third divorce. He was previously married to Sandra Davenport from "
            "1980 to 1988 and Marjorie Bransfield from 1990 to 1992.",
        ),
        # a rival figure of the same kind in the same sentence ("2020 prize" beside "2018")
        (
            "Books published in English are eligible for the 2018 prize.",
            "Books published in English and bearing a copyright of 2018 or 2019 are eligible for the 2020 prize.",
        ),
        # the claim's words scattered across a page-long "sentence"
        (
            "The conference was held in San Diego, California.",
            "Highlights of the conference on rebooting computing " + "and many other topics " * 12 + "were "
            "presented; the next meeting was held at a hotel "
            + "with talks " * 10
            + "in San Diego, California",
        ),
        # too little to be certain of: fewer than MIN_STEMS content words (a guard: never settled)
        ("What's That Sound?", "What's That Sound? is a song."),
    ],
    ids=["one-word-missing", "date-less-precise", "rival-figure", "scattered", "short"],
)
def test_near_copies_are_not_certain(text: str, source: str) -> None:
    assert settle(text, source) is None


def test_nothing_is_certain_when_some_admitted_text_was_not_read() -> None:
    stated = "Refunds are paid to the original card within 14 days."
    filler = "Other matters are described at length here. " * 6000  # beyond ITEM_CHARS
    assert settle(stated, stated) is not None
    assert settle(stated, stated + " " + filler) is None


def test_another_admitted_item_that_disagrees_makes_it_uncertain() -> None:
    stated = "Refunds are paid to the original card within 14 days."
    assert settle(stated, stated, "Refunds are paid to the original card within 30 days.") is None


def test_absence_and_a_changed_figure_are_never_settled() -> None:
    source = "Refunds are paid to the original card within 14 days."
    assert settle("Refunds are paid to the original card within 30 days.", source) is None
    assert settle("The store opens a second branch in Porto next spring.", source) is None


def test_certainty_does_not_move_with_the_combiner() -> None:
    # the combiner is retrained for the judge's own decisions; what is certain stays certain
    text = "At 10 am the guided tour of Bran Castle starts at the north gate."
    ev = evidence("e0", "The guided tour of Bran Castle starts at the north gate at 10 am.")
    combiner = replace(neutral(), supported=1.0, unsupported=0.0)
    assert OfflineJudge(combiner).settle(claim(text), [ev]) == settle_module.settle(claim(text), [ev])
    assert settle_module.settle(claim(text), [ev]) is not None


def test_the_cascade_accepts_only_what_settle_is_certain_of() -> None:
    class NoLLM:
        identity = OfflineJudge.identity

    cascade = CascadeJudge(NoLLM())  # type: ignore[arg-type]
    ev = evidence("e0", "Store 3 in Lyon accepts returns within 12 days of delivery. Refunds go to the card.")
    copied = claim("Store 3 in Lyon accepts returns within 12 days of delivery.", "c1")
    paraphrase = claim("Refunds for store 3 are paid back to the card used for the purchase.", "c2")
    changed = claim("Store 3 in Lyon accepts returns within 15 days of delivery.", "c3")
    assert cascade.certain(copied, [ev]) is not None
    assert cascade.certain(paraphrase, [ev]) is None
    assert cascade.certain(changed, [ev]) is None


def test_the_verbatim_pattern_is_compiled_only_for_a_claim_found_in_an_item(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = settle_module._pattern

    def counting(core: str) -> re.Pattern[str]:
        calls.append(core)
        return real(core)

    monkeypatch.setattr(settle_module, "_pattern", counting)
    assert settle("Nothing like this sentence occurs anywhere.", "Refunds are paid within 14 days.") is None
    assert calls == []  # the cheap containment test ruled it out: no regular expression compiled
    assert settle("Refunds are paid within 14 days.", "Refunds are paid within 14 days.") is not None
    assert calls == []  # ASCII claim and item: the words are matched token by token (_ascii_span)
    assert settle("Refunds are paid within 14 days.", "Café refunds are paid within 14 days.") is not None
    assert calls == ["Refunds are paid within 14 days"]  # otherwise compiled, on a hit only


# --- presence words and JSON records (issue 13): the window need not repeat "offers", "available"

RECORD = (
    '{"name": "Taffy\'s Pizza", "city": "Santa Barbara", "attributes": '
    '{"RestaurantsTakeOut": true, "RestaurantsGoodForGroups": true, "RestaurantsDelivery": false, '
    '"OutdoorSeating": null, "BusinessParking": {"street": true, "garage": false, "valet": false}}}'
)


def certain(text: str, source: str) -> object:
    """What the cascade accepts: settle() and its quotes verified against the evidence."""
    ev = evidence("e0", source)
    return CascadeJudge(OfflineJudge()).certain(claim(text), [ev])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "Taffy's Pizza offers takeout",  # "offers" is in no pair: RestaurantsTakeOut states it
        "street parking is available",  # "available" likewise
        "is good for groups",  # two content words in a record: one boolean pair states them
        # a one-clause claim negating its presence word states the pair's false
        "valet parking is not available",
        "Taffy's Pizza does not offer delivery",
    ],
)
def test_a_record_states_a_claim_without_its_presence_words(text: str) -> None:
    verdict = certain(text, RECORD)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    assert verdict.citations and all(c.quote in RECORD for c in verdict.citations)


def test_prose_states_a_claim_without_its_presence_words() -> None:
    source = "Visitors get free parking in the north garage of the museum. Tickets cost $12."
    verdict = certain("Free parking is available in the museum's north garage.", source)
    assert verdict is not None and verdict.label is Label.SUPPORTED


@pytest.mark.parametrize(
    ("text", "source"),
    [
        # a null value states nothing ("not known" is not "yes")
        ("offers outdoor seating", RECORD),
        # the record says the opposite
        ("Taffy's Pizza offers delivery", RECORD),
        ("garage parking is available", RECORD),
        ("valet parking is available", RECORD),
        # two clauses: the record's pairs do not say which polarity goes with which
        ("There is no valet parking, but delivery is available", RECORD),
        # an entity the record lacks
        ("Pizza Mizza offers takeout", RECORD),
        # nothing but presence words: no claim to settle
        ("It offers various amenities", RECORD),
        # two content words are enough in a record, never in prose
        ("offers takeout", "Takeout is something we do every night of the week."),
        # negation in the same clause
        ("Free parking is available in the north garage.", "There is no free parking in the north garage."),
        # a rival figure of the same kind
        (
            "Free parking is available in the north garage for 2 hours.",
            "Visitors get free parking in the north garage for 3 hours.",
        ),
        # a missing entity in prose
        (
            "Free parking is available in the Louvre's north garage.",
            "Visitors get free parking in the north garage.",
        ),
    ],
    ids=[
        "null",
        "false",
        "false-nested",
        "true-negated",
        "two-clauses",
        "entity",
        "presence-only",
        "short-prose",
        "negation",
        "rival",
        "no-entity",
    ],
)
def test_presence_words_never_settle_what_the_window_does_not_state(text: str, source: str) -> None:
    assert certain(text, source) is None


# --- words that state nothing a window must hold; a record's pairs read one by one (issue 13, part 2)

STEPS = (
    "1 Preheat an outdoor grill for medium-high heat. 2 Place the bratwurst in a pot with the beer. "
    "3 Tap Reset phone, and then tap Erase everything. "
    "4 Grill the bratwurst on the preheated grill for 10 to 14 minutes, turning occasionally. "
    "The menu lists pizzas, salads and sandwiches."
)


@pytest.mark.parametrize(
    "text",
    [
        # a connective opening the claim links it to the answer before it
        "Meanwhile, grill the bratwurst on the preheated grill for 10 to 14 minutes",
        "In the meantime, preheat an outdoor grill for medium-high heat",
        "Finally tap Reset phone and Erase everything",
        "Next, tap Reset phone and erase everything",
        # "a variety of" quantifies what it lists
        "They offer a wide variety of pizzas, salads and sandwiches",
    ],
    ids=["meanwhile", "in-the-meantime", "finally", "next", "variety"],
)
def test_an_opening_connective_or_a_variety_of_need_not_be_in_the_window(text: str) -> None:
    verdict = certain(text, STEPS)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    assert all(c.quote in STEPS for c in verdict.citations)


@pytest.mark.parametrize(
    "text",
    [
        "Meanwhile, boil the bratwurst on the preheated grill for 10 to 14 minutes",  # one word changed
        "Meanwhile, grill the bratwurst on the preheated grill for 10 to 15 minutes",  # a figure changed
        "Finally, do not tap Reset phone and Erase everything",  # a negation
        "They offer a variety of pizzas, salads and burgers",  # "a variety of" excuses no listed item
        "Next year, preheat an outdoor grill for medium-high heat",  # "next" without its comma is a time
        "The bratwurst is grilled meanwhile for 10 to 14 minutes",  # a connective opens the claim only
        # a light word does not count towards the three content words prose needs
        "Therefore, preheat the grill",
    ],
    ids=["word", "figure", "negation", "listed-item", "next-year", "not-opening", "light-not-counted"],
)
def test_light_words_excuse_nothing_else(text: str) -> None:
    assert certain(text, STEPS) is None


DINER = (
    '{"name": "Tinker\'s Burgers", "city": "Summerland", "categories": "Burgers, Restaurants", '
    '"attributes": {"RestaurantsReservations": false, "RestaurantsTakeOut": true, "WiFi": "no", '
    '"RestaurantsGoodForGroups": true, "OutdoorSeating": null, '
    '"Ambience": {"classy": true, "divey": true, "romantic": false}}, '
    '"review_info": [{"review_text": "We came for the first time a month ago. We have become regulars."}, '
    '{"review_text": "The fries were soggy. The staff were friendly and fast."}]}'
)


@pytest.mark.parametrize(
    "text",
    [
        # "RestaurantsReservations": false negates "restaurant", a pair the claim is not about
        "The restaurant has a classy, divey ambience",
        # two clauses, each pair it is about with its own polarity
        "The restaurant does not offer WiFi, but takeout and good options for groups are available",
        # the words no attribute states, all in one sentence of one review
        "They have become regulars at the restaurant",
    ],
    ids=["not-about", "two-clauses", "one-review"],
)
def test_a_record_pair_the_claim_is_not_about_does_not_undo_it(text: str) -> None:
    verdict = certain(text, DINER)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    assert all(c.quote in DINER for c in verdict.citations)


@pytest.mark.parametrize(
    "text",
    [
        "The restaurant accepts reservations and offers takeout",  # a pair it is about says false
        "The restaurant offers WiFi, but takeout is not available",  # both pairs the other way
        "The restaurant has a romantic ambience",  # "romantic": false
        "The restaurant has outdoor seating",  # null: not known
        # "soggy" and "regulars" from two reviews: words gathered across reviews state nothing
        "Regulars say the fries are soggy at the restaurant",
        "Regulars say the fries were soggy",  # (settled before: every word is in the whole record)
    ],
    ids=["false-pair", "reversed", "false-nested", "null", "two-reviews", "two-reviews-no-pair"],
)
def test_a_record_claim_against_its_pairs_or_across_reviews_stays_unsettled(text: str) -> None:
    assert certain(text, DINER) is None


CAFE = (
    '{"name": "Taffy\'s Pizza", "attributes": {"WiFi": "paid", "RestaurantsTakeOut": true}, '
    '"review_info": [{"review_text": "Great pizza. We love the free delivery and the patio."}]}'
)


def test_a_review_word_does_not_stand_in_for_an_attributes_value() -> None:
    # "free" from a review, where the record's own WiFi pair says "paid" (settled before)
    assert certain("Taffy's Pizza offers free WiFi", CAFE) is None
    # what a review states with the record's name and an attribute the claim is not about stays certain
    verdict = certain("Taffy's Pizza has free delivery and a patio", CAFE)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    paid = certain("Taffy's Pizza offers paid WiFi and takeout", CAFE)
    assert paid is not None and paid.label is Label.SUPPORTED


def test_the_verbatim_search_without_a_compiled_pattern_finds_what_the_pattern_finds() -> None:
    import random

    rng = random.Random(20261201)
    pieces = ["a", "A", "ab", "aB", "b", "(a", "a.", "_a", "a_", "1", "a1", "-", "a-b", "'a'", "x", "ab)"]
    spaces = [" ", "  ", "\n", "\t", " \n "]
    compared = found = 0
    for _ in range(4000):
        tokens = [rng.choice(pieces) for _ in range(rng.randint(2, 12))]
        text = "".join(t + rng.choice(spaces) for t in tokens).strip()
        if rng.random() < 0.5:  # a claim taken from the text, its case and spacing changed
            i = rng.randrange(len(tokens) - 1)
            words = tokens[i : i + rng.randint(2, min(4, len(tokens) - i))]
            core = " ".join(w.upper() if rng.random() < 0.3 else w for w in words)
        else:
            core = " ".join(rng.choice(pieces) for _ in range(rng.randint(2, 4)))
        match = settle_module._pattern(core).search(text)
        assert settle_module._ascii_span(core, text) == (match.span() if match else None), (core, text)
        compared += 1
        found += match is not None
    assert compared == 4000 and found > 500  # both kinds of case were met


def test_a_claim_copied_from_its_source_is_settled_with_the_exact_span_quoted() -> None:
    text = "Note (Store 5 in Lyon accepts returns within 15 days of delivery). Fees apply."
    verdict = OfflineJudge().settle(
        claim("store 5 in  Lyon accepts returns within 15 days of delivery."), [evidence("policy", text)]
    )
    assert verdict is not None and verdict.label == Label.SUPPORTED
    assert verdict.citations[0].quote == "Store 5 in Lyon accepts returns within 15 days of delivery"


REVIEWED = (
    '{"name": "Goodland Kitchen", "city": "Goleta", "attributes": {"RestaurantsTakeOut": true, '
    '"BusinessParking": {"garage": false, "lot": true}}, '
    '"review_info": [{"review_text": "Very friendly service and a great lunch menu. The chips were stale."}, '
    '{"review_text": "The salads are huge. We waited an hour for a table."}]}'
)
NEWS = (
    "Antic and Sefolosha interfered with officers trying to establish a crime scene, WABC reported. "
    "The club shut down immediately after the incident, the spokesperson said."
)


@pytest.mark.parametrize(
    ("text", "source"),
    [
        # a citation marker: its word and its number cite the source's numbered step
        ("Lightly oil the grate (step 4)", "1 Preheat the grill. 2 When hot, lightly oil grate. 3 Serve."),
        ("Preheat an outdoor grill for medium-high heat (step 1)", STEPS),
        ("Grill the bratwurst for 10 to 14 minutes, turning occasionally (Passage 2, step 4)", STEPS),
        # an attribution to the record's reviews, the words stated in one review
        ("According to customer reviews, the service is friendly", REVIEWED),
        ("One customer mentioned that the salads are huge", REVIEWED),
        ("Goodland Kitchen has a parking lot for its customers", REVIEWED),
        # a hedge only weakens what the window states
        ("Antic and Sefolosha allegedly interfered with officers trying to establish a crime scene", NEWS),
    ],
    ids=[
        "step",
        "step-1",
        "passage-and-step",
        "according-to-reviews",
        "one-customer",
        "for-customers",
        "hedge",
    ],
)
def test_a_citation_marker_an_attribution_to_reviews_or_a_hedge_need_not_be_in_the_window(
    text: str, source: str
) -> None:
    verdict = certain(text, source)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    assert all(c.quote in source for c in verdict.citations)


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("Lightly brush the grate (step 2)", "1 Preheat the grill. 2 When hot, lightly oil grate. 3 Serve."),
        ("Grill the bratwurst for 10 to 15 minutes (step 4)", STEPS),  # a figure changed
        ("Grill the bratwurst for 10 to 14 minutes (step 4)", "Grill the sausages for 10 to 14 minutes."),
        ("According to customer reviews, the service is slow", REVIEWED),  # not what a review says
        # the words of two reviews: an attribution excuses its own words only
        ("One customer mentioned that the huge salads were stale", REVIEWED),
        ("Goodland Kitchen has a parking garage for its customers", REVIEWED),  # "garage": false
        ("Customers can book a private room for a party", REVIEWED),  # not an attribution: "customers" counts
        ("Antic and Sefolosha allegedly assaulted officers trying to establish a crime scene", NEWS),
        ("The club allegedly did not shut down after the incident", NEWS),  # a hedge excuses no negation
    ],
    ids=[
        "word",
        "figure",
        "step-other-words",
        "other-review-word",
        "two-reviews",
        "false-pair",
        "not-attribution",
        "hedge-word",
        "hedge-negation",
    ],
)
def test_a_marker_an_attribution_or_a_hedge_excuses_nothing_else(text: str, source: str) -> None:
    assert certain(text, source) is None


@pytest.mark.parametrize(
    ("text", "source"),
    [
        (
            "Nicklaus is one of five men to complete the career grand slam",
            "nicklaus became the youngest person to wear a green jacket in 1963 , and collected his sixth "
            "in 1986 . he is one of five men to complete the career grand slam , an accolade which "
            "favourite rory mcilroy can achieve this week .",
        ),
        (
            "The sisters write their own songs",
            "CNN: And do you guys write the songs as well? Siham: The entire album was pretty much "
            "(written and produced) by me, my sister and Elijah.",
        ),
    ],
    ids=["across-a-long-clause", "question-and-answer"],
)
def test_a_claims_words_within_three_times_its_length_are_close_enough(text: str, source: str) -> None:
    # the words span more than twice the claim's length (unsettled before), less than three times
    verdict = certain(text, source)
    assert verdict is not None and verdict.label is Label.SUPPORTED


def test_words_further_apart_than_three_times_the_claim_are_still_scattered() -> None:
    source = (
        "The museum, which was founded by a wealthy merchant family who collected paintings from many "
        "distant countries across several centuries of travel and trade, opens its north gallery."
    )
    assert certain("The museum opens the north gallery", source) is None
    assert certain("The museum opens the north gallery", "The museum opens its north gallery.") is not None


def _parking(**pairs: bool) -> str:
    listed = ", ".join(f'"{k}": {str(v).lower()}' for k, v in pairs.items())
    return '{"name": "Winchell\'s Donuts", "attributes": {"BusinessParking": {' + listed + "}}}"


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        (
            "While parking is available on the street, there is no valet, garage, or lot parking",
            {"garage": False, "street": True, "validated": False, "lot": False, "valet": False},
        ),
        (
            "does not offer street parking, valet, or validated parking",
            {"garage": False, "street": False, "validated": False, "lot": True, "valet": False},
        ),
    ],
    ids=["no-a-b-or-c", "does-not-offer-a-b-or-c"],
)
def test_a_negation_denies_every_item_of_its_list(text: str, pairs: dict[str, bool]) -> None:
    source = _parking(**pairs)
    verdict = certain(text, source)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    # the last item of the list the other way round: not certain
    last = "lot" if "lot parking" in text else "validated"
    assert certain(text, _parking(**{**pairs, last: True})) is None


AMBIENCE = '{"name": "Lure Fish House", "attributes": {"Ambience": {"trendy": true, "casual": true, "romantic": false}}}'


def test_a_spelling_variant_is_the_same_word() -> None:
    # "ambiance" in the answer, "Ambience" in the record's key
    verdict = certain("The ambiance is trendy and casual", AMBIENCE)
    assert verdict is not None and verdict.label is Label.SUPPORTED
    assert certain("The ambiance is trendy, casual and romantic", AMBIENCE) is None  # "romantic": false


SURGERY = (
    "The girl was hit by a car on her way to school. Doctors had to amputate her leg below the knee "
    "to save her life, her mother said."
)


def test_a_general_noun_need_not_be_in_the_window() -> None:
    # "part" names what the window names by its kind only: it states nothing of its own
    text = "Doctors had to amputate part of her leg below the knee"
    assert {"part"} <= light_module.GENERAL_NOUNS and certain(text, SURGERY) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Doctors had to amputate the bones of her leg below the knee",  # a noun of its own
        "Doctors had to amputate part of her leg below the left knee",  # a general noun excuses no other word
        "They had to amputate part of the knee",  # too few words of the claim stay in the window
    ],
    ids=["not-general", "other-word", "too-few-held"],
)
def test_a_general_noun_excuses_nothing_else(text: str) -> None:
    assert certain(text, SURGERY) is None


GARDEN = "Water the bed often to keep the soil's moisture consistent until the first shoots appear."


def test_a_derived_form_of_a_word_in_the_window_stands_in_for_it() -> None:
    # "moist" for "moisture": one stem extends the other
    verdict = certain("Keep the soil consistently moist", GARDEN)
    assert verdict is not None and verdict.label is Label.SUPPORTED


@pytest.mark.parametrize(
    ("text", "source"),
    [
        # a short stem is no derivation: "sang" is not "single"
        ("Marcie Blane sang Bobby's Girl", "Bobby's Girl was a single for Marcie Blane."),
        # a name's variant is another name: "Kensington" is not "Kensingtonian"
        (
            "The tour starts at the Kensington gardens gate",
            "The tour of the Kensingtonian gardens starts at the gate.",
        ),
        # neither stem extends the other ("moist" / "moisten" would; "moist" / "mossy" does not)
        ("Keep the soil consistently mossy", GARDEN),
    ],
    ids=["short-stem", "name", "not-derived"],
)
def test_a_derived_form_needs_a_long_stem_in_lower_case(text: str, source: str) -> None:
    assert certain(text, source) is None
