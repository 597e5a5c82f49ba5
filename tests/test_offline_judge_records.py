"""The offline judge on business records (RAGTruth's Data2txt kind): each case failed before its fix.

A JSON attribute set to ``null`` is unknown, so a claim stating it either way is ``absent``; a
``true`` / ``false`` attribute the claim certainly reverses is ``contradicted``; a record's opening
hours, one pair per weekday, state that the business is open on those days.
"""

from __future__ import annotations

import json

from auditor.judges import Label
from tests.test_offline_judge import JUDGE, assert_quotes_verified, claim, evidence, judge_one

RECORD = {
    "name": "Tinker's Burgers",
    "city": "Summerland",
    "categories": "Burgers, Restaurants",
    "hours": {day: "11:0-17:0" for day in ("Monday", "Tuesday", "Wednesday", "Thursday")}
    | {day: "11:0-17:0" for day in ("Friday", "Saturday", "Sunday")},
    "attributes": {
        "BusinessParking": {"valet": False, "street": True, "lot": False},
        "OutdoorSeating": True,
        "WiFi": "no",
        "Music": None,
        "RestaurantsGoodForGroups": None,
    },
    "review_info": [{"review_stars": 5.0, "review_text": "Best burgers we have ever had, and so quick!"}],
}


def _record(**changes: object) -> str:
    return json.dumps(RECORD | changes, indent=2)


def _rule(text: str, doc: str) -> str:
    [score] = JUDGE.scores([claim(text)], [evidence("r", doc)])
    return score.rule


def test_a_null_attribute_is_unknown_whichever_way_the_claim_states_it() -> None:
    doc = evidence("r", _record())
    for text in ("The restaurant does not provide music.", "Tinker's Burgers is good for groups."):
        verdict = judge_one(text, [doc])
        assert verdict.label is Label.ABSENT, text
        assert "unknown" in verdict.rationale and "null" in verdict.rationale
    # saying that the record leaves it unknown is right, and a review naming it states it
    assert _rule("Whether there is music is not listed.", _record()) != "attribute_unknown"
    reviewed = _record(review_info=[{"review_stars": 4.0, "review_text": "Live music every Friday night."}])
    assert _rule("The restaurant does not provide music.", reviewed) != "attribute_unknown"


def test_a_true_or_false_attribute_reversed_by_the_claim_is_a_contradiction() -> None:
    doc = evidence("r", _record())
    for text in (
        "The place has free Wi-Fi for its guests.",
        "Customers can park on the street or in the lot.",
    ):
        verdict = judge_one(text, [doc])
        assert verdict.label is Label.CONTRADICTED, text
        assert_quotes_verified(verdict, [doc], text)
    assert judge_one("Customers can park on the street.", [doc]).label is not Label.CONTRADICTED
    assert judge_one("There is no valet parking.", [doc]).label is not Label.CONTRADICTED
    # a one-word key under an object needs the object's word: this "street" is not street parking
    assert _rule("The burger bar sits on a quiet street near the beach.", _record()) != "attribute_flipped"
    # a negation that does not reach the attribute's word leaves its polarity uncertain
    assert _rule("It has no music but does offer outdoor seating.", _record()) != "attribute_flipped"


def test_weekday_hours_state_that_the_business_is_open_those_days() -> None:
    doc = _record()
    for text in (
        "The business is open from 11 am to 5 pm every day of the week.",
        "The business operates seven days a week.",
    ):
        assert _rule(text, doc) == "supported", text
    # the figures are still checked
    assert _rule("The business is open from 11 am to 9 pm every day of the week.", doc) != "supported"
