"""The metrics stage: audited answers in, rates with denominators and intervals out.

:func:`summarise` is pure: groundedness, answers with an unsupported claim, answer rate, screened
and unjudged counts, segments per source class and question type, citation figures and, with a
labels file, refusal accuracy and over-refusal. Intervals are on answers (Wilson, Clopper-Pearson).
:func:`answer_counts` and :func:`summary_from_counts` give the same figures from
per-answer counts that add up (the store's rollups); :func:`headline_from_counts` gives only the
headline a trend point shows. :func:`verdict_diff` compares two audits of the same answers under two policies.
"""

from __future__ import annotations

from auditor.metrics._counts import (
    Counts,
    Headline,
    add_counts,
    answer_counts,
    headline_from_counts,
    sum_counts,
    summary_from_counts,
)
from auditor.metrics._diff import (
    FigureChange,
    PolicyComparison,
    ResponsibleItem,
    VerdictChange,
    VerdictDiff,
    verdict_diff,
)
from auditor.metrics._labels import Labels, load_labels, match_labels
from auditor.metrics._model import CannotCorrect, CorrectedRate, Interval, Rate, Summary
from auditor.metrics._rates import clear_interval_cache, rate
from auditor.metrics._summary import summarise

__all__ = [
    "CannotCorrect",
    "CorrectedRate",
    "Counts",
    "FigureChange",
    "Headline",
    "Interval",
    "Labels",
    "PolicyComparison",
    "Rate",
    "ResponsibleItem",
    "Summary",
    "VerdictChange",
    "VerdictDiff",
    "add_counts",
    "answer_counts",
    "clear_interval_cache",
    "headline_from_counts",
    "load_labels",
    "match_labels",
    "rate",
    "sum_counts",
    "summarise",
    "summary_from_counts",
    "verdict_diff",
]
