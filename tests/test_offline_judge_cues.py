"""The offline judge's cues of issue 13: each case here failed before its fix.

Lemmas, date ranges, durations with an article, clause-scoped negation, polarity that does not
leak from another sentence, JSON booleans about what the claim says, aggregation only over
sources, abbreviations in both splitters, name variants, framing figures, word counts, sentences
about the answer itself.
"""

from __future__ import annotations

import json

from auditor.claims import ScreenReason, decompose_text
from auditor.judges import Label
from auditor.judges.reading import _entities as ent
from auditor.judges.reading import _numbers as num
from auditor.judges.reading._cues import claim_cues
from auditor.judges.reading._lexical import negated_stems, stem
from auditor.judges.reading._segments import sentence_spans
from tests.test_offline_judge import JUDGE, claim, evidence, judge_one


def test_stems_are_lemmas_so_irregular_forms_meet() -> None:
    assert stem("bought") == stem("buy")
    assert stem("children") == stem("child")
    assert stem("ran") == stem("run")
    assert stem("analyses") == stem("analysis")
    assert stem("approved") == stem("approval")  # the suffix stripper still joins derived forms
    assert stem("purchased") == stem("buy")  # and the synonym list still applies


def test_a_date_range_states_both_days() -> None:
    april = [(q.month, q.day) for q in num.extract("free admission on April 18-26")]
    assert april == [(4, 18), (4, 26)]
    listed = [(q.month, q.day, q.year) for q in num.extract("on April 18 and 19, 2025")]
    assert listed == [(4, 18, 2025), (4, 19, 2025)]
    doc = evidence("d", "Entry to the parks is free on April 18 and on April 19.")
    assert judge_one("Entry to the parks is free on April 18 and 19.", [doc]).label is not Label.ABSENT


def test_a_duration_with_an_article_is_read_in_evidence() -> None:
    [hour] = num.extract("the tour lasts about an hour", evidence=True)
    assert num.matches(num.extract("60 minutes")[0], hour)
    assert num.extract("a year ago") == []  # not in a claim: it would be a figure to find
    doc = evidence("d", "The guided tour of the castle lasts an hour.")
    assert judge_one("The guided tour of the castle lasts 60 minutes.", [doc]).label is not Label.ABSENT


def test_negation_stops_at_a_clause_boundary() -> None:
    assert negated_stems("not inside the club, as initially reported") == {"insid", "club"}
    assert negated_stems("no valet, garage or lot") == {"valet", "garag"}  # a list goes on
    assert negated_stems("It is not open; dogs are welcome") == {"open"}
    assert negated_stems("not cheap rather than expensive") == {"cheap"}


def test_polarity_elsewhere_in_the_item_does_not_undo_a_stated_claim() -> None:
    doc = evidence(
        "d",
        "The Hawks were not involved in the stabbing, police said. "
        "Two Hawks were arrested hours after the stabbing incident, involved in a scuffle.",
    )
    verdict = judge_one("The Hawks were not involved in the stabbing.", [doc])
    assert verdict.label is Label.SUPPORTED
    # the flip alone still contradicts
    plain = evidence("p", "Gift cards are refundable within 14 days.")
    assert judge_one("Gift cards are not refundable.", [plain]).label is Label.CONTRADICTED


def test_a_json_boolean_must_be_about_the_claim_to_flip_it() -> None:
    record = evidence(
        "r",
        json.dumps(
            {
                "name": "Goodland Kitchen",
                "city": "Goleta",
                "categories": "Restaurants, Breakfast",
                "attributes": {"RestaurantsDelivery": False, "BusinessParking": {"garage": False}},
            }
        ),
    )
    located = judge_one("Goodland Kitchen is a restaurant in Goleta.", [record])
    assert located.label is Label.SUPPORTED
    assert judge_one("Goodland Kitchen offers delivery.", [record]).label is Label.CONTRADICTED


def test_both_is_aggregation_only_over_sources() -> None:
    assert not claim_cues("The cafe offers both indoor and outdoor seating.").aggregated
    assert not claim_cues("All the rooms have free WiFi.").aggregated
    assert claim_cues("Both reports say the delivery took 3 days.").aggregated
    assert claim_cues("Both Acme and Globex agree that prices rose.").aggregated
    doc = evidence("d", "The cafe offers indoor and outdoor seating for its guests.")
    verdict = judge_one("The cafe offers both indoor and outdoor seating.", [doc])
    assert verdict.label is Label.SUPPORTED


def test_abbreviations_do_not_end_sentences() -> None:
    text = "Police Department Det. Kelly Ort told CNN the club was closed. The club denied it."
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "Police Department Det. Kelly Ort told CNN the club was closed.",
        "The club denied it.",
    ]
    initial = "Plan B. Then we left."
    assert len(sentence_spans(initial)) == 2  # an initial before a sentence opener still ends one
    claims = decompose_text("a", "F. Scott Fitzgerald wrote The Great Gatsby in 1925.", None).claims
    assert claims[0].text.startswith("F. Scott Fitzgerald")


def test_name_variants_are_present() -> None:
    assert ent.present("Texas-Mexico", "the border between texas and mexico")
    assert ent.present("American-style", 'categories: "american (new), restaurants"')
    assert not ent.present("Texas-Mexico", "the border with mexico")
    assert "Sr" not in ent.entities("The fight was won by Chris Eubank Sr. in 1990.")
    # the disease and its virus: one name to a reader of an abstract
    assert ent.present("COVID-19", "infection with sars-cov-2 raises the risk of stroke.")
    assert ent.present("SARS-CoV-2", "patients with covid-19 were followed for a year.")
    assert not ent.present("COVID-19", "patients with influenza were followed for a year.")


def test_capitals_of_a_title_or_a_shouted_word_are_no_names() -> None:
    assert ent.entities("High Blood Pressure Doubles Coronavirus Death Risk") == []
    assert ent.entities("Coronavirus can Be Crushed By Warmer Weather") == []
    assert ent.entities("COVID-19 Antibodies Last for at Least Four Months After Recovery") == ["COVID-19"]
    assert ent.entities("The CORONAVIRUS is not of natural origin") == []
    # names in a sentence, acronyms and codes still count
    assert ent.entities("Eric Clapton sings at the Royal Albert Hall") == [
        "Clapton",
        "Royal",
        "Albert",
        "Hall",
    ]
    assert ent.entities("The NASA and UNESCO report on the X200") == ["NASA", "UNESCO", "X200"]
    verdict = judge_one(
        "Vitamin D Deficiency Raises Stroke Risk In Older Patients",
        [evidence("e1", "Vitamin D deficiency raises the risk of stroke in older patients.")],
    )
    assert verdict.label is Label.SUPPORTED


def test_framing_figures_are_not_checked() -> None:
    figures = [q.text for q in claim_cues("It has 3 stars out of 5 and is open 24/7.").quantities]
    assert figures == ["3 stars"]
    assert claim_cues("The business is open seven days a week.").quantities == ()
    assert claim_cues("Here is a summary in 200 words.").quantities == ()
    assert [q.text for q in claim_cues("It costs 5 dollars a week.").quantities] == ["5 dollars"]


def test_a_count_in_words_is_weighed_not_decisive() -> None:
    doc = evidence("d", "The sisters fled Somalia and released their debut album in Los Angeles.")
    [score] = JUDGE.scores([claim("Two sisters released their debut album in Los Angeles.")], [doc])
    assert score.rule == "count_missing"
    [fabricated] = JUDGE.scores([claim("The sisters released their debut album in 2 cities.")], [doc])
    assert fabricated.rule == "number_missing"  # a figure in digits stays decisive


def test_a_sentence_about_the_answer_is_screened() -> None:
    [meta] = decompose_text("a", "Here is a concise summary of the passages:", None).claims
    assert meta.screened and meta.screen_reason is ScreenReason.VAGUE
    [fact] = decompose_text("a", "Here is the answer: 42 bears went to space.", None).claims
    assert not fact.screened


def test_a_sentence_about_the_passages_or_the_layout_is_screened() -> None:
    for text in (
        "Note: Passage 3 provides additional information.",
        "Note: The information provided in the given passages is sufficient to answer the question.",
        "The steps to cook brats are as follows:",
    ):
        [meta] = decompose_text("a", text, None).claims
        assert meta.screened and meta.screen_reason is ScreenReason.VAGUE, text
    # a sentence naming a passage that states something is a claim
    for text in (
        "Passage 2 says the museum opens at 9 am.",
        "Passage 2 provides the opening hours of the museum.",
    ):
        [fact] = decompose_text("a", text, None).claims
        assert not fact.screened, text
