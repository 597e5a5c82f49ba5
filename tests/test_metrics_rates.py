"""Interval bounds against values computed here, independently of scipy."""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

import pytest

from auditor.metrics import rate
from auditor.metrics._rates import interval

Z = NormalDist().inv_cdf(0.975)
PAIRS = [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (7, 25), (1, 40), (49, 50)]


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval, closed form, no continuity correction."""
    p = k / n
    centre = p + Z * Z / (2 * n)
    spread = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return (centre - spread) / (1 + Z * Z / n), (centre + spread) / (1 + Z * Z / n)


def _tail_at_least(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def _solve(f: Callable[[float], float], target: float) -> float:
    """Bisection for an increasing function of p on [0, 1]."""
    low, high = 0.0, 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if f(mid) < target:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """Exact bounds: P(X >= k | low) = 0.025 and P(X <= k | high) = 0.025 (i.e. P(X >= k+1) = 0.975)."""
    low = 0.0 if k == 0 else _solve(lambda p: _tail_at_least(k, n, p), 0.025)
    high = 1.0 if k == n else _solve(lambda p: _tail_at_least(k + 1, n, p), 1 - 0.025)
    return low, high


@pytest.mark.parametrize(("k", "n"), PAIRS)
def test_wilson_matches_closed_form(k: int, n: int) -> None:
    got = interval(k, n, "wilson")
    assert got is not None and got.method == "wilson" and got.confidence == 0.95
    low, high = wilson(k, n)
    assert got.low == pytest.approx(max(low, 0.0), abs=1e-6)
    assert got.high == pytest.approx(min(high, 1.0), abs=1e-6)


@pytest.mark.parametrize(("k", "n"), PAIRS)
def test_clopper_pearson_matches_exact_tails(k: int, n: int) -> None:
    got = interval(k, n, "clopper-pearson")
    assert got is not None and got.method == "clopper-pearson"
    low, high = clopper_pearson(k, n)
    assert got.low == pytest.approx(low, abs=1e-6)
    assert got.high == pytest.approx(high, abs=1e-6)


def test_bounds_at_zero_and_n_are_exact() -> None:
    zero = rate(0, 10, intervals=True)
    full = rate(10, 10, intervals=True)
    assert zero.clopper_pearson is not None and full.clopper_pearson is not None
    assert zero.wilson is not None and full.wilson is not None
    assert zero.clopper_pearson.low == 0.0 and zero.wilson.low == 0.0
    assert full.clopper_pearson.high == 1.0 and full.wilson.high == 1.0
    # closed forms at the edges: 1 - (alpha/2)^(1/n) and (alpha/2)^(1/n)
    assert zero.clopper_pearson.high == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-9)
    assert full.clopper_pearson.low == pytest.approx(0.025 ** (1 / 10), abs=1e-9)
    assert zero.clopper_pearson.high == pytest.approx(0.3084971078, abs=1e-9)


def test_rate_value_and_no_interval_by_default() -> None:
    r = rate(3, 4)
    assert (r.numerator, r.denominator, r.value) == (3, 4, 0.75)
    assert r.wilson is None and r.clopper_pearson is None


def test_zero_denominator_has_no_value_and_no_interval() -> None:
    r = rate(0, 0, intervals=True)
    assert (r.numerator, r.denominator, r.value) == (0, 0, None)
    assert r.wilson is None and r.clopper_pearson is None
    assert interval(0, 0, "wilson") is None


@pytest.mark.parametrize(("k", "n"), [(-1, 3), (4, 3)])
def test_rate_rejects_impossible_counts(k: int, n: int) -> None:
    with pytest.raises(ValueError, match="numerator"):
        rate(k, n)
