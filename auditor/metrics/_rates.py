"""Rates and the claim classification every figure is built on (pure; no I/O).

A :class:`~auditor.metrics.Rate` always carries its numerator and denominator; a rate with
denominator 0 has value None and no interval. Intervals are for rates over answers only, and come
from scipy.special (Wilson score without continuity correction, and Clopper-Pearson exact, the
bounds ``scipy.stats.binomtest(...).proportion_ci`` gives to 1e-9), clamped to [0, 1].
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

from auditor.metrics._model import Interval, Rate
from auditor.results import ClaimOut

CONFIDENCE = 0.95

Status = Literal["screened", "supported", "contradicted", "absent", "unjudged", "common_knowledge"]


@lru_cache(maxsize=4096)  # pure, and a summary asks for the same counts per segment (Interval is frozen)
def interval(successes: int, trials: int, method: Literal["wilson", "clopper-pearson"]) -> Interval | None:
    """The 95% interval of a binomial proportion, or None with no trial.

    Args:
        successes: the numerator, 0 <= successes <= trials.
        trials: the denominator (answers, never claims).
        method: ``wilson`` (score interval, no continuity correction) or ``clopper-pearson`` (exact).
    """
    if trials == 0:
        return None
    # Imported on first use (scipy is slow to import and ships no type information); scipy.special
    # only: scipy.stats.binomtest finds the exact bounds by root-finding and computes a p-value
    # besides, about 2 ms an interval, where the beta quantiles below give the same bounds.
    from scipy.special import betaincinv, ndtri  # type: ignore[import-untyped]

    k, n = successes, trials
    if method == "wilson":
        # Newcombe's formula, as scipy.stats.binomtest(k, n).proportion_ci(method="wilson") computes it.
        p, z = k / n, float(ndtri(0.5 + 0.5 * CONFIDENCE))
        denom = 2 * (n + z**2)
        center = (2 * n * p + z**2) / denom
        delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
        ci_low, ci_high = (0.0 if k == 0 else center - delta), (1.0 if k == n else center + delta)
    else:
        # Clopper-Pearson: the quantiles of Beta(k, n - k + 1) and Beta(k + 1, n - k) at the tails.
        alpha = (1 - CONFIDENCE) / 2
        ci_low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha))
        ci_high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha))
    low = min(max(ci_low, 0.0), 1.0)
    high = min(max(ci_high, 0.0), 1.0)
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


def clear_interval_cache() -> None:
    """Forget the cached bounds (a benchmark row starts as a fresh process would)."""
    interval.cache_clear()
