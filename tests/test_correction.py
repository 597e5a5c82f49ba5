"""Rogan-Gladen correction against hand-computed values, including the cases that cannot be corrected."""

from __future__ import annotations

import pytest

from auditor.calibration import Calibration, corrected_share, describe
from auditor.calibration._agreement import ConfusionMatrix, level_report
from auditor.calibration._correction import correct, delta_interval, rogan_gladen
from auditor.metrics import CannotCorrect, CorrectedRate, rate


def test_rogan_gladen_hand_computed() -> None:
    # (0.3 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.2 / 0.7
    assert rogan_gladen(0.3, 0.8, 0.9) == pytest.approx(2 / 7)
    assert rogan_gladen(0.05, 0.8, 0.9) == pytest.approx(-0.05 / 0.7)  # unclipped
    assert rogan_gladen(0.5, 0.5, 0.5) is None
    assert rogan_gladen(0.5, 0.4, 0.5) is None


def test_correct_point_interval_and_clipping() -> None:
    result = correct(300, 1000, true_pos=80, false_neg=20, true_neg=90, false_pos=10)
    assert isinstance(result, CorrectedRate)
    assert result.value == pytest.approx(2 / 7)
    assert result.low < result.value < result.high
    assert result.raw.value == pytest.approx(0.3) and result.raw.wilson is not None
    assert (result.sensitivity.numerator, result.specificity.numerator) == (80, 90)
    low = correct(50, 1000, 80, 20, 90, 10)
    assert isinstance(low, CorrectedRate) and low.value == 0.0 and low.unclipped == pytest.approx(-0.05 / 0.7)
    high = correct(950, 1000, 80, 20, 90, 10)
    assert isinstance(high, CorrectedRate) and high.value == 1.0


def test_interval_carries_the_calibration_uncertainty() -> None:
    big = correct(300, 1000, 800, 200, 900, 100)
    small = correct(300, 1000, 8, 2, 9, 1)
    assert isinstance(big, CorrectedRate) and isinstance(small, CorrectedRate)
    assert (small.high - small.low) > 2 * (big.high - big.low)
    # large counts: the Monte Carlo interval agrees with the delta method (+-0.046 around 0.2857)
    delta = delta_interval(300, 1000, 800, 200, 900, 100)
    assert delta is not None
    assert delta[1] == pytest.approx(2 / 7 - 0.0459, abs=2e-3)
    assert big.low == pytest.approx(delta[1], abs=0.01) and big.high == pytest.approx(delta[2], abs=0.01)
    assert correct(300, 1000, 800, 200, 900, 100) == big  # fixed seed


@pytest.mark.parametrize(
    ("counts", "reason"),
    [
        ((30, 100, 5, 5, 5, 5), "<= 1"),  # Se + Sp = 1
        ((30, 100, 4, 6, 5, 5), "<= 1"),  # Se + Sp = 0.9
        ((30, 100, 0, 0, 5, 5), "sensitivity is unknown"),
        ((30, 100, 5, 5, 0, 0), "specificity is unknown"),
        ((0, 0, 8, 2, 9, 1), "nothing to correct"),
    ],
)
def test_cannot_correct_is_a_reason_not_a_number(counts: tuple[int, ...], reason: str) -> None:
    result = correct(*counts)
    assert isinstance(result, CannotCorrect)
    assert reason in result.reason
    assert "cannot correct" in describe(result)


def calibration(tp: int, fn: int, fp: int, tn: int) -> Calibration:
    report = level_report("answer", {}, resamples=10).model_copy(
        update={"binary": ConfusionMatrix(labels=("unsupported", "supported"), counts=((tp, fn), (fp, tn)))}
    )
    from datetime import UTC, datetime

    from auditor.judges import JudgeIdentity

    return Calibration(
        id="c0ffee" * 4,
        created_at=datetime(2026, 11, 29, tzinfo=UTC),
        auditor_version="0",
        judge=JudgeIdentity(kind="offline", prompt_version="offline-1"),
        policy=None,
        decomposer="rules",
        labelled_path="l.jsonl",
        labelled_sha256="0",
        records=0,
        claim=report,
        answer=report,
    )


def test_corrected_share_reads_the_summary_and_names_the_calibration() -> None:
    summary = {"answers_with_unsupported_claim": rate(30, 100, intervals=True).model_dump()}
    result = corrected_share(summary, calibration(tp=80, fn=20, fp=10, tn=90))
    assert isinstance(result, CorrectedRate)
    assert result.value == pytest.approx(2 / 7)
    assert result.calibration_id == "c0ffee" * 4
    line = describe(result)
    assert "raw 30.0% (30/100)" in line and "corrected 28.6%" in line
    assert "calibration l.jsonl (offline, " in line and "id c0ffeec0ffee)" in line  # named once, by its file
    assert isinstance(corrected_share(summary, calibration(tp=5, fn=5, fp=5, tn=5)), CannotCorrect)


def test_correcting_the_calibration_set_itself_recovers_the_human_share() -> None:
    # judge flags TP + FP = 255 of 306; humans call TP + FN = 152 unsupported: RG must give 152/306
    tp, fn, fp, tn = 137, 15, 118, 36
    result = correct(tp + fp, tp + fn + fp + tn, tp, fn, tn, fp)
    assert isinstance(result, CorrectedRate)
    assert result.value == pytest.approx(152 / 306)
