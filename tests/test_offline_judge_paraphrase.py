"""Offline judge rules for paraphrased support: inflections, synonyms, record codes, compounds,
framing words, indefinite "one", source references, "No. 74" and "not only". Each test fails without its rule."""

from __future__ import annotations

import json

from auditor.claims import Claim
from auditor.evidence import Evidence, EvidenceKind
from auditor.judges import ClaimVerdict, Label, OfflineJudge, verify_quotes
from auditor.judges.reading._lexical import content_stems, negated, negated_stems, stem

JUDGE = OfflineJudge()


def item(text: str, evidence_id: str = "ev-1") -> Evidence:
    return Evidence(
        evidence_id=evidence_id, kind=EvidenceKind.TOOL_RESULT, name="tool", text=text, trace_id="trace-1"
    )


def judge(text: str, evidence: Evidence) -> ClaimVerdict:
    c = Claim(claim_id="c1", answer_id="a1", text=text, start=0, end=len(text))
    [verdict] = JUDGE.judge_sync([c], [evidence])
    assert verify_quotes(verdict, {evidence.evidence_id: evidence}, claim_text=text) == verdict
    for citation in verdict.citations:
        assert citation.quote in evidence.text
    return verdict


RECORD = item(
    json.dumps(
        {
            "name": "Minnow Cafe",
            "city": "Goleta",
            "state": "CA",
            "attributes": {"RestaurantsTakeOut": True, "wi_fi": "no"},
        }
    )
)


def test_the_plural_of_a_listed_synonym_reaches_the_same_stem() -> None:
    assert stem("offers") == stem("offer") == stem("provides")
    assert stem("prices") == stem("price") == stem("cost")


def test_general_synonyms_rating_address_food_injury_decision() -> None:
    assert stem("rating") == stem("stars")
    assert stem("address") == stem("located")
    assert stem("meals") == stem("dishes") == stem("cuisine") == stem("food")
    assert stem("hurt") == stem("injured")
    assert stem("decision") == stem("decided")


def test_a_state_code_in_a_record_states_the_state() -> None:
    verdict = judge("Minnow Cafe is located in Goleta, California.", RECORD)
    assert verdict.label is Label.SUPPORTED
    other = item(json.dumps({"name": "Minnow Cafe", "city": "Goleta", "state": "NV"}))
    assert judge("Minnow Cafe is located in Goleta, California.", other).label is Label.ABSENT


def test_a_camel_case_key_is_also_read_as_one_word() -> None:
    # the rules read the record's "RestaurantsTakeOut" as stating it (the support score then
    # decides whether a lone claim of four words on one pair is decisive: never absent)
    text = "The cafe offers takeout."
    [score] = JUDGE.scores(
        [Claim(claim_id="c1", answer_id="a1", text=text, start=0, end=len(text))], [RECORD]
    )
    assert (score.rule, score.label) == ("supported", Label.SUPPORTED)
    assert judge(text, RECORD).label in (Label.SUPPORTED, Label.UNJUDGED)
    prose = item("Take-out is available every day.")
    assert judge("Takeout is available every day.", prose).label is Label.SUPPORTED


def test_negation_reads_a_camel_case_word_as_one_word_and_as_its_parts() -> None:
    doc = item("There is no WiFi at the cafe.")
    assert judge("The cafe has WiFi.", doc).label is Label.CONTRADICTED
    assert judge("The cafe does not have WiFi.", doc).label is Label.SUPPORTED


def test_framing_words_are_not_content() -> None:
    assert content_stems("Here's an objective overview: the museum opens daily") == content_stems(
        "the museum opens daily"
    )
    doc = item("The museum opens daily at nine.")
    assert judge("The summary highlights that the museum opens daily.", doc).label is Label.SUPPORTED


def test_an_opening_one_introduces_an_individual_it_does_not_count() -> None:
    review = item("The staff was friendly and the reviewer praised the coffee.")
    assert judge("One reviewer praised the friendly staff.", review).label is Label.SUPPORTED
    assert judge("The reviewer praised one friendly staff member.", review).label is Label.ABSENT
    warranty = item("The blender comes with a two year warranty.")
    assert judge("One year of warranty comes with the blender.", warranty).label is Label.CONTRADICTED


def test_a_source_reference_number_is_not_a_figure() -> None:
    doc = item("Remote work lets employees collaborate across time zones.")
    verdict = judge("Remote work lets employees collaborate across time zones (Passage 2).", doc)
    assert verdict.label is Label.SUPPORTED
    assert judge("Remote work lets 2 employees collaborate.", doc).label is Label.ABSENT


def test_no_before_a_figure_abbreviates_number() -> None:
    assert negated_stems("he lost to world No. 74 Kevin Streelman") == frozenset()
    assert not negated("the world no 1 player")
    assert negated_stems("there is no parking") == {"park"}
    doc = item("He could not land the title, losing to world No. 74 Kevin Streelman in a play-off.")
    assert judge("He lost to Kevin Streelman in a playoff.", doc).label is Label.SUPPORTED


def test_not_only_adds_rather_than_negates() -> None:
    text = "a fight is rated by not only the quality of the action but the political undertones"
    assert negated_stems(text) == frozenset()
    assert not negated("not just the food but the service")
    assert negated_stems("it is not the quality") == {"qual"}
    doc = item("Great fights are judged by not only the quality of the action but its political undertones.")
    assert judge("Great fights are judged by the quality of the action and its undertones.", doc).label is (
        Label.SUPPORTED
    )
