"""The accuracy benchmark's definitions: the naive lexical baseline, its threshold, the answer rule."""

from __future__ import annotations

import pytest

from benchmarks.accuracy import Baseline, answer_outcome, baseline, binary, choose_threshold

STOP = frozenset({"the", "is", "at", "on", "a", "in"})
SOURCES = ["The office opens at 9 am on weekdays.", "Parking costs 1,200 yen a day."]


def test_baseline_takes_the_lowest_sentence_share_and_missing_numbers() -> None:
    assert baseline("The office opens at 9 am on weekdays.", SOURCES, STOP) == Baseline(1.0, False)
    # second sentence: "office", "closes", "early" -> 1 of 3 content words in the sources
    low = baseline("The office opens on weekdays. The office closes early.", SOURCES, STOP)
    assert low.lowest_share == pytest.approx(1 / 3) and not low.number_missing
    assert baseline("Parking costs 1200 yen a day.", SOURCES, STOP).number_missing is False  # 1,200 == 1200
    assert baseline("Parking costs 900 yen a day.", SOURCES, STOP).number_missing is True
    assert Baseline(0.5, False).hallucinated(0.6) and not Baseline(0.5, False).hallucinated(0.5)
    assert Baseline(1.0, True).hallucinated(0.0)  # a missing number flags at any threshold


def test_the_threshold_is_the_best_f1_on_the_items() -> None:
    # hallucinated answers have shares 0.2 and 0.4, grounded ones 0.7 and 0.9: any t in (0.4, 0.7] is
    # perfect, and the lowest such t on the grid wins
    items = [(Baseline(0.2, False), True), (Baseline(0.4, False), True)]
    items += [(Baseline(0.7, False), False), (Baseline(0.9, False), False)]
    t = choose_threshold(items)
    assert t == pytest.approx(0.41)
    assert binary((b.hallucinated(t), a) for b, a in items)["f1"] == 1.0


def test_binary_figures() -> None:
    f = binary([(True, True), (True, False), (False, True), (False, False), (False, False)])
    assert (f["tp"], f["fp"], f["fn"], f["tn"]) == (1, 1, 1, 2)
    assert f["precision"] == 0.5 and f["recall"] == 0.5 and f["specificity"] == pytest.approx(2 / 3)
    assert f["balanced_accuracy"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert binary([])["balanced_accuracy"] is None


def test_answer_outcome_is_the_summary_rule() -> None:
    assert answer_outcome(["supported", "unjudged", "absent"]) == "hallucinated"
    assert answer_outcome(["supported", "unjudged"]) == "undecided"
    assert answer_outcome(["supported", "supported"]) == "grounded"
    assert answer_outcome(["contradicted"]) == "hallucinated"
