"""The learned combiner: a logistic regression over the offline judge's cues, and its thresholds.

The coefficients and thresholds are data (``offline_judge.json`` beside this module, shipped in the
package), written by ``scripts/train-offline-judge`` from the labelled training set; see
``docs/offline-judge.md``. Scoring is a dot product in plain Python (about 30 features), so the
judge imports neither numpy nor scipy; fitting (:func:`fit`) uses them and is deterministic: the
same rows give the same coefficients (L-BFGS from zero on standardised features, no randomness).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from auditor.judges.offline._features import FEATURES

WEIGHTS_FILE = "offline_judge.json"
# Rules on figures, names and polarity: their absent / contradicted is decisive whatever the score
# (a fabricated figure is absent, a changed one contradicted; the score weighs word coverage).
HARD_RULES = frozenset(
    {
        "entity_missing",
        "number_missing",
        "number_contradicted",
        "polarity_contradicted",
        "aggregate_one",
        "attribute_unknown",
        "attribute_flipped",
    }
)
# ... except in a long answer, where a summary's contrast ("in front of the Fulton Houses, not
# inside the club as first reported") reads as a flip: there the prose negation flip is weighed by
# the score like coverage (on dev, 0 of the 5 it decided in long answers were unsupported; the JSON
# attribute flip, ``attribute_flipped``, stays decisive).
SOFT_IN_LONG_ANSWERS = frozenset({"polarity_contradicted"})
# A count in words the sources do not state ("two sisters", "his two predecessors") never decides
# ``absent`` in a long answer, whatever the score: a summary counts what its source lists or names
# (on dev, 16 of the 18 such claims of long answers were supported for the annotators, and all 5
# the score decided were); in a short answer the score weighs it as before.
UNDECIDED_IN_LONG_ANSWERS = frozenset({"count_missing"})
MIN_SCALE = 0.25
# An answer with at least this many judged claims (a summary, a long answer) is decided with the
# ``answer_*`` thresholds: its claims restate the sources far more often than a lone claim checked
# against its evidence does, so the same score means something else (docs/offline-judge.md).
ANSWER_CLAIMS = 3


@dataclass(frozen=True)
class Combiner:
    """Standardisation, coefficients and the decision thresholds of the support score.

    ``supported``: a score at or above it, with a window the rules accept, is ``supported``.
    ``unsupported``: a score at or below it is the rules' ``absent`` / ``contradicted``.
    Between the two the claim is undecided.
    ``answer_supported`` / ``answer_unsupported``: the same two for the claims of an answer with
    at least ``answer_claims`` judged claims (None: the claim-level pair). ``answer_partial``: in
    such an answer, a claim no window supports but one (or two or three sentences of one item
    together) covers at least :data:`~auditor.judges.offline._rules.PARTIAL_COVERAGE` of is ``supported``
    at a score at or above it (None: never).
    """

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    supported: float
    unsupported: float
    trained_on: str = ""
    answer_supported: float | None = None
    answer_unsupported: float | None = None
    answer_claims: int = ANSWER_CLAIMS
    answer_partial: float | None = None

    def thresholds(self, judged: int) -> tuple[float, float]:
        """``(supported, unsupported)`` for a claim of an answer with ``judged`` judged claims."""
        if judged >= self.answer_claims:
            return (
                self.supported if self.answer_supported is None else self.answer_supported,
                self.unsupported if self.answer_unsupported is None else self.answer_unsupported,
            )
        return self.supported, self.unsupported

    def hard(self, rule: str, judged: int) -> bool:
        """Whether ``rule``'s absent / contradicted decides a claim of an answer of ``judged``
        judged claims whatever the score (:data:`HARD_RULES`, :data:`SOFT_IN_LONG_ANSWERS`)."""
        return rule in HARD_RULES and not (rule in SOFT_IN_LONG_ANSWERS and judged >= self.answer_claims)

    def low_decides(self, rule: str, judged: int) -> bool:
        """Whether a low score may decide ``rule``'s absent / contradicted for a claim of an answer
        of ``judged`` judged claims (not :data:`UNDECIDED_IN_LONG_ANSWERS` in a long one)."""
        return not (rule in UNDECIDED_IN_LONG_ANSWERS and judged >= self.answer_claims)

    def partial(self, judged: int) -> float | None:
        """The score at which a partly covered claim of an answer of ``judged`` claims is supported."""
        return self.answer_partial if judged >= self.answer_claims else None

    def score(self, x: Sequence[float]) -> float:
        """The support score in [0, 1]: the modelled probability that a reader finds the claim supported."""
        z = self.intercept + sum(
            c * (v - m) / s for c, v, m, s in zip(self.coef, x, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))

    def to_json(self) -> str:
        data = asdict(self)
        return json.dumps(data, indent=1, sort_keys=True) + "\n"


def from_json(text: str) -> Combiner:
    """Read a combiner written by :meth:`Combiner.to_json`; its features must be this version's."""
    data: dict[str, Any] = json.loads(text)
    combiner = Combiner(
        features=tuple(data["features"]),
        mean=tuple(float(v) for v in data["mean"]),
        scale=tuple(float(v) for v in data["scale"]),
        coef=tuple(float(v) for v in data["coef"]),
        intercept=float(data["intercept"]),
        supported=float(data["supported"]),
        unsupported=float(data["unsupported"]),
        trained_on=str(data.get("trained_on", "")),
        answer_supported=_optional(data.get("answer_supported")),
        answer_unsupported=_optional(data.get("answer_unsupported")),
        answer_claims=int(data.get("answer_claims", ANSWER_CLAIMS)),
        answer_partial=_optional(data.get("answer_partial")),
    )
    if combiner.features != FEATURES:
        raise ValueError(
            f"{WEIGHTS_FILE} was trained on other features: retrain with scripts/train-offline-judge"
        )
    return combiner


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def neutral() -> Combiner:
    """A combiner scoring every claim 0.5 and deciding only by the rules (for training)."""
    n = len(FEATURES)
    return Combiner(FEATURES, (0.0,) * n, (1.0,) * n, (0.0,) * n, 0.0, 0.0, 1.0, "neutral")


@lru_cache(maxsize=1)
def shipped() -> Combiner:
    """The combiner shipped in the package (read once)."""
    return from_json(resources.files("auditor.judges.offline").joinpath(WEIGHTS_FILE).read_text("utf-8"))


def fit(
    rows: Sequence[Sequence[float]], labels: Sequence[int], l2: float = 1.0
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], float]:
    """Fit an L2-regularised logistic regression; returns ``(mean, scale, coef, intercept)``.

    Deterministic: standardised features, L-BFGS started from zero, no sampling. ``labels`` are 1
    for supported. Coefficients are rounded to 6 decimals so the shipped file is stable.
    """
    import numpy as np
    from scipy.optimize import minimize  # type: ignore[import-untyped]

    x = np.asarray(rows, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    # a cue rare in the training rows must not get a huge standardised value elsewhere
    scale = np.maximum(scale, MIN_SCALE)
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])

    def loss(w: Any) -> tuple[float, Any]:
        t = z @ w
        p = 1.0 / (1.0 + np.exp(-t))
        nll = float(np.sum(np.logaddexp(0.0, t) - y * t))
        reg = 0.5 * l2 * float(w[:-1] @ w[:-1])
        grad = z.T @ (p - y)
        grad[:-1] += l2 * w[:-1]
        return nll + reg, grad

    result = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    w = result.x
    r = 6
    return (
        tuple(round(float(v), r) for v in mean),
        tuple(round(float(v), r) for v in scale),
        tuple(round(float(v), r) for v in w[:-1]),
        round(float(w[-1]), r),
    )
