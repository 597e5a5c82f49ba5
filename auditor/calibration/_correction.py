"""Rogan-Gladen correction of an observed share for the judge's measured error.

A judge that flags answers as "has an unsupported claim" with sensitivity ``Se`` and specificity
``Sp`` observes a share ``p_obs`` whose expectation is ``p*Se + (1-p)*(1-Sp)``. Solving for ``p``:

    p = (p_obs + Sp - 1) / (Se + Sp - 1)          (Rogan & Gladen, 1978)

clipped to [0, 1]. Undefined when ``Se + Sp <= 1`` (the judge separates the classes no better than
chance): that is a :class:`CannotCorrect` with the reason, never a number. So are empty inputs: no
audited answer, or a calibration with no human-unsupported (sensitivity unknown) or no
human-supported (specificity unknown) answer.

**Interval.** The calibration's own uncertainty is carried by Monte Carlo over the three binomial
proportions: ``Se``, ``Sp`` and ``p_obs`` are each drawn from their Jeffreys posterior
``Beta(k + 1/2, n - k + 1/2)`` (a parametric bootstrap that does not collapse to a point when a
count is 0 or n), the corrected share is computed and clipped per draw, and the 2.5th and 97.5th
percentiles are the 95% interval (10,000 draws, fixed seed). Draws with ``Se + Sp <= 1`` are
dropped and counted in ``undefined_draws``. :func:`delta_interval` gives the first-order (delta
method) interval as a cross-check:
``Var = [Var(p_obs) + p^2 Var(Se) + (1-p)^2 Var(Sp)] / (Se + Sp - 1)^2``.

The figure is for answers: the answer-level sensitivity and specificity of the calibration describe
the "answers with an unsupported claim" rule (see :mod:`auditor.calibration._labelled`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from auditor.calibration._agreement import Calibration
from auditor.calibration._domain import domain_fit
from auditor.metrics import CannotCorrect, CorrectedRate, Summary, rate

DRAWS = 10_000
SEED = 1978
CONFIDENCE = 0.95


def rogan_gladen(p_obs: float, sensitivity: float, specificity: float) -> float | None:
    """The unclipped Rogan-Gladen estimate, or None when ``sensitivity + specificity <= 1``."""
    youden = sensitivity + specificity - 1.0
    if youden <= 0:
        return None
    return (p_obs + specificity - 1.0) / youden


def _beta(rng: np.random.Generator, k: int, n: int, size: int) -> np.ndarray:
    return rng.beta(k + 0.5, n - k + 0.5, size=size)


def correct(
    positives: int,
    total: int,
    true_pos: int,
    false_neg: int,
    true_neg: int,
    false_pos: int,
    *,
    draws: int = DRAWS,
    seed: int = SEED,
) -> CorrectedRate | CannotCorrect:
    """Correct ``positives / total`` for a judge measured at ``true_pos, false_neg, true_neg, false_pos``.

    Args:
        positives, total: the observed count of flagged answers and the answers audited.
        true_pos, false_neg: calibration answers humans call unsupported, flagged / not flagged.
        true_neg, false_pos: calibration answers humans call supported, not flagged / flagged.
        draws, seed: Monte Carlo size and seed.
    """
    raw = rate(positives, total, intervals=True)
    sens = rate(true_pos, true_pos + false_neg, intervals=True)
    spec = rate(true_neg, true_neg + false_pos, intervals=True)
    if total == 0:
        return CannotCorrect(raw=raw, reason="no audited answer with a judged claim: nothing to correct")
    if sens.value is None:
        return CannotCorrect(
            raw=raw, reason="the calibration has no answer humans call unsupported: sensitivity is unknown"
        )
    if spec.value is None:
        return CannotCorrect(
            raw=raw, reason="the calibration has no answer humans call supported: specificity is unknown"
        )
    point = rogan_gladen(positives / total, sens.value, spec.value)
    if point is None:
        return CannotCorrect(
            raw=raw,
            reason=f"sensitivity + specificity = {sens.value + spec.value:.3f} <= 1: "
            "the judge does no better than chance, the correction is undefined",
        )
    rng = np.random.default_rng(seed)
    se = _beta(rng, true_pos, true_pos + false_neg, draws)
    sp = _beta(rng, true_neg, true_neg + false_pos, draws)
    p = _beta(rng, positives, total, draws)
    youden = se + sp - 1.0
    ok = youden > 0
    values = np.clip((p[ok] + sp[ok] - 1.0) / youden[ok], 0.0, 1.0)
    tail = (1.0 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail]) if values.size else (0.0, 1.0)
    return CorrectedRate(
        raw=raw,
        value=min(max(point, 0.0), 1.0),
        unclipped=point,
        low=float(low),
        high=float(high),
        sensitivity=sens,
        specificity=spec,
        undefined_draws=int(draws - int(ok.sum())),
        confidence=CONFIDENCE,
        method=f"Rogan-Gladen; Monte Carlo over Jeffreys Beta posteriors of Se, Sp, p_obs ({draws} draws)",
    )


def delta_interval(
    positives: int, total: int, true_pos: int, false_neg: int, true_neg: int, false_pos: int
) -> tuple[float, float, float] | None:
    """Point estimate and 95% delta-method interval (clipped), or None when undefined."""
    n_pos, n_neg = true_pos + false_neg, true_neg + false_pos
    if total == 0 or n_pos == 0 or n_neg == 0:
        return None
    p, se, sp = positives / total, true_pos / n_pos, true_neg / n_neg
    point = rogan_gladen(p, se, sp)
    if point is None:
        return None
    youden = se + sp - 1.0
    variance = (
        p * (1 - p) / total + point**2 * se * (1 - se) / n_pos + (1 - point) ** 2 * sp * (1 - sp) / n_neg
    ) / youden**2
    half = 1.959963984540054 * math.sqrt(variance)
    return _clip(point), _clip(point - half), _clip(point + half)


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def corrected_share(
    summary: Summary | Mapping[str, Any], calibration: Calibration
) -> CorrectedRate | CannotCorrect:
    """The corrected "answers with an unsupported claim" of a run, naming the calibration used.

    Args:
        summary: the run's :class:`~auditor.metrics.Summary` (or its JSON form, ``result.summary``).
        calibration: a calibration of the judge that produced the run (``Store.latest_calibration``).
    """
    figure = (
        summary.answers_with_unsupported_claim.model_dump()
        if isinstance(summary, Summary)
        else dict(summary["answers_with_unsupported_claim"])
    )
    matrix = calibration.answer.binary
    result = correct(
        int(figure["numerator"]),
        int(figure["denominator"]),
        true_pos=matrix.cell("unsupported", "unsupported"),
        false_neg=matrix.cell("unsupported", "supported"),
        true_neg=matrix.cell("supported", "supported"),
        false_pos=matrix.cell("supported", "unsupported"),
    )
    fits, note = domain_fit(calibration, summary)
    return result.model_copy(
        update={
            "calibration_id": calibration.id,
            "calibration": calibration.label,
            "domain_fits": fits,
            "domain_note": note,
        }
    )


def describe(corrected: CorrectedRate | CannotCorrect) -> str:
    """One line for a report or the gate: the raw figure, then the corrected one and the calibration."""
    raw = corrected.raw
    shown = "n/a" if raw.value is None else f"{raw.value:.1%}"
    text = f"answers with an unsupported claim: raw {shown} ({raw.numerator}/{raw.denominator})"
    if raw.wilson is not None:
        text += f" [95% CI {raw.wilson.low:.1%}-{raw.wilson.high:.1%}]"
    used = f"calibration {corrected.calibration}" if corrected.calibration else "calibration not named"
    if isinstance(corrected, CannotCorrect):
        return f"{text}; corrected: cannot correct ({corrected.reason}; {used})"
    return (
        f"{text}; corrected {corrected.value:.1%} [95% {corrected.low:.1%}-{corrected.high:.1%}] "
        f"(Rogan-Gladen, Se {corrected.sensitivity.value:.2f}, Sp {corrected.specificity.value:.2f}; {used})"
    )
