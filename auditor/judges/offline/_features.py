"""The cues behind the offline judge's support score, as one numeric vector per claim.

The rules (:mod:`auditor.judges.offline._rules`) find evidence and name the rule that fired; this module
turns what they found into the features the learned combiner (:mod:`auditor.judges.offline._combiner`)
weighs: how much of the claim the best windows cover, what is left uncovered, whether the figures
and names are found, which rule fired, and how much the evidence could cover by chance (the size
of the best window, the number of items). Pure functions of the claim's cues and the prepared items,
so the judge at run time and the training script compute the same vector.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.judges.offline._rules import coverage
from auditor.judges.reading import ClaimCues, Item
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num

# The rule that decided the rule-based verdict (:func:`auditor.judges.offline._ruling.rule_verdict` names it).
RULES = (
    "supported",  # one window states the claim
    "combined",  # two items together
    "aggregate_supported",  # an aggregated claim, two or more items
    "entity_missing",
    "number_contradicted",
    "number_missing",
    "count_missing",  # only counts in words ("two sisters") are missing: weighed, not decisive
    "polarity_contradicted",
    "aggregate_one",  # an aggregated claim supported by one item only
    "attribute_unknown",  # a JSON attribute the claim states is null (auditor.judges.offline._attributes)
    "attribute_flipped",  # ... is true / false against the claim's polarity
    "coverage",  # nothing covers enough of the claim (the baseline of the one-hot features)
    "nothing",  # nothing checkable, or no evidence
)

FEATURES = (
    *(f"rule_{r}" for r in RULES[:-2]),
    "nothing_checkable",
    "coverage_best",  # share of the claim's stems in its best window
    "coverage_sentence",  # ... in its best single segment (one sentence or one pair)
    "coverage_item",  # ... anywhere in one item (scattered words)
    "coverage_all",  # ... anywhere in the admitted evidence
    "uncovered_best",  # log(1 + stems the best window lacks): added words
    "unknown_stems",  # log(1 + stems found in no admitted item): words the evidence never uses
    "stems",  # log(1 + the claim's content stems)
    "figures",  # the claim states figures
    "figures_found",  # share of them found in some admitted item
    "entities",  # the claim names entities
    "entities_found",  # share of them present in some admitted item
    "negated",  # the claim carries a negation
    "verbatim",  # the claim's text occurs verbatim (the settle() test)
    # chance: shared words mean less where there are many words to share
    "window_stems",  # log(1 + distinct stems of the best window)
    "items",  # log(1 + admitted items)
)


@dataclass(frozen=True)
class Cue:
    """One named cue and its value, kept beside the score so a reader sees what it rests on."""

    name: str
    value: float


def _log(n: int) -> float:
    return math.log1p(n)


def features(cues: ClaimCues, items: Sequence[Item], rule: str, verbatim: bool) -> tuple[float, ...]:
    """The feature vector of one claim, in :data:`FEATURES` order."""
    onehot = [1.0 if rule == r else 0.0 for r in RULES[:-2]]
    if rule == "nothing" or not items:
        return (*onehot, 1.0, *([0.0] * (len(FEATURES) - len(onehot) - 1)))
    best_cov, best_sentence, best_item = 0.0, 0.0, 0.0
    best_stems: frozenset[str] = frozenset()
    for item in items:
        if cues.stems:
            best_item = max(best_item, len(cues.stems & item.stems) / len(cues.stems))
        for w in item.windows:
            cov = coverage(cues, w)
            if cov > best_cov or (cov == best_cov and not best_stems):
                best_cov, best_stems = cov, w.seg.stems
            if len(w.parts) == 1 and cov > best_sentence:
                best_sentence = cov
    everywhere: frozenset[str] = frozenset().union(*(i.stems for i in items))
    n = len(cues.stems)
    quantities = cues.quantities
    found_q = sum(any(num.matches(q, e) for i in items for e in i.quantities) for q in quantities)
    found_e = sum(any(ent.present(e, i.norm) for i in items) for e in cues.entities)
    return (
        *onehot,
        0.0,
        best_cov,
        best_sentence,
        best_item,
        len(cues.stems & everywhere) / n if n else 1.0,
        _log(len(cues.stems - best_stems)),
        _log(len(cues.stems - everywhere)),
        _log(n),
        1.0 if quantities else 0.0,
        found_q / len(quantities) if quantities else 1.0,
        1.0 if cues.entities else 0.0,
        found_e / len(cues.entities) if cues.entities else 1.0,
        1.0 if cues.negated_stems else 0.0,
        1.0 if verbatim else 0.0,
        _log(len(best_stems)),
        _log(len(items)),
    )
