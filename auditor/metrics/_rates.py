"""Rates and the claim classification every figure is built on (pure; no I/O).

A :class:`~auditor.metrics.Rate` always carries its numerator and denominator; a rate with
denominator 0 has value None and no interval. Intervals are for rates over answers only, and come
from scipy (Wilson score without continuity correction, and Clopper-Pearson exact), clamped to [0, 1].
"""

from __future__ import annotations

from typing import Literal

from auditor.metrics._model import Interval, Rate
from auditor.results import ClaimOut

CONFIDENCE = 0.95

Status = Literal["screened", "supported", "contradicted", "absent", "unjudged", "common_knowledge"]


def interval(successes: int, trials: int, method: Literal["wilson", "clopper-pearson"]) -> Interval | None:
    """The 95% interval of a binomial proportion, or None with no trial.

    Args:
        successes: the numerator, 0 <= successes <= trials.
        trials: the denominator (answers, never claims).
        method: ``wilson`` (score interval, no continuity correction) or ``clopper-pearson`` (exact).
    """
    if trials == 0:
        return None
    # Imported on first use: scipy.stats is slow to import and ships no type information.
    from scipy.stats import binomtest  # type: ignore[import-untyped]

    ci = binomtest(successes, trials).proportion_ci(
        confidence_level=CONFIDENCE, method="wilson" if method == "wilson" else "exact"
    )
    low = min(max(float(ci.low), 0.0), 1.0)
    high = min(max(float(ci.high), 0.0), 1.0)
    return Interval(method=method, confidence=CONFIDENCE, low=low, high=high)


def rate(numerator: int, denominator: int, *, intervals: bool = False) -> Rate:
    """``numerator / denominator``, with both intervals when ``intervals`` (rates over answers)."""
    if not 0 <= numerator <= denominator:
        raise ValueError(f"a rate needs 0 <= numerator <= denominator, got {numerator}/{denominator}")
    if denominator == 0:
        return Rate(numerator=0, denominator=0, value=None)
    return Rate(
        numerator=numerator,
        denominator=denominator,
        value=numerator / denominator,
        wilson=interval(numerator, denominator, "wilson") if intervals else None,
        clopper_pearson=interval(numerator, denominator, "clopper-pearson") if intervals else None,
    )


def claim_status(claim: ClaimOut) -> Status:
    """Where a claim counts: screened out, one of the three judged verdicts, unjudged, or common knowledge.

    A claim that is neither screened nor given a verdict counts as unjudged (fail closed). An
    unjudged claim stays unjudged even when marked common knowledge, as in :mod:`auditor.results._outcome`.
    """
    if claim.screened:
        return "screened"
    if claim.verdict is None or claim.verdict == "unjudged":
        return "unjudged"
    if claim.common_knowledge:
        return "common_knowledge"
    return claim.verdict
