"""Figures over stored answers: the headline summary of a filter, and the same figures per hour or day.

Read from the store's rollups (each hour's and day's summed answer counts, :mod:`auditor.store._rollups`)
when the filter names only rollup dimensions (policy, source class, question type, service, policy
outcome) and time bounds on an hour's edge, so the cost does not grow with the store; otherwise the summary is
the sum of the matching answers' stored counts (``answers.counts``, one column per answer, no
children read), or, when one of them has none (stored before migration 0015 filled them),
:func:`auditor.metrics.summarise` on the matching answers themselves. Both give the same figures
(:func:`auditor.metrics.summary_from_counts`), which mean what they mean in a report: the groundedness rate over judged claims
(with its denominator; no interval, since claims of one answer are not independent trials), and
the share of answers with an unsupported claim and the answer pass rate over answers, each with
its Wilson and Clopper-Pearson 95% intervals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import groupby
from typing import Literal

from auditor.metrics import (
    Headline,
    Summary,
    headline_from_counts,
    sum_counts,
    summarise,
    summary_from_counts,
)
from auditor.policy import Thresholds
from auditor.results import AnswerOut
from auditor.store import (
    AnswerFilter,
    Store,
    iter_answers,
    list_answers,
    newest_rollup,
    rollup_grain,
    rollup_slices,
    summed_counts,
    summed_counts_by,
)

Bucket = Literal["hour", "day"]
BUCKETS: tuple[Bucket, ...] = ("hour", "day")
#: Without ``since``, a trend covers this many buckets up to the newest matching answer.
DEFAULT_SPAN = {"hour": 48, "day": 30}
#: A trend never has more buckets than this (a wider range is cut to its newest buckets).
MAX_BUCKETS = 400


@dataclass(frozen=True)
class TrendPoint:
    """The figures the trend shows of the answers generated in ``[start, start + bucket)``.

    ``summary`` holds only the headline of their :class:`Summary` (the trend draws no segments).
    """

    start: datetime
    summary: Headline


def summary_of(store: Store, wanted: AnswerFilter, thresholds: Thresholds | None = None) -> Summary:
    """The headline figures of every stored answer matching ``wanted`` (from rollups when they can say)."""
    grain = rollup_grain(wanted)
    if grain is not None:
        return summary_from_counts(
            sum_counts(counts for _, counts in rollup_slices(store, wanted, grain)), thresholds
        )
    counts = summed_counts(store, wanted)
    if counts is not None:
        return summary_from_counts(counts, thresholds)
    return summarise(list(iter_answers(store, wanted)), thresholds=thresholds)


def floor(at: datetime, bucket: Bucket) -> datetime:
    at = at.replace(minute=0, second=0, microsecond=0)
    return at.replace(hour=0) if bucket == "day" else at


def _step(bucket: Bucket) -> timedelta:
    return timedelta(hours=1) if bucket == "hour" else timedelta(days=1)


def window(store: Store, wanted: AnswerFilter, bucket: Bucket) -> AnswerFilter:
    """``wanted`` with a ``since`` when it has none: :data:`DEFAULT_SPAN` buckets up to its newest answer."""
    if wanted.since is not None:
        return wanted
    if rollup_grain(wanted, bucket) == bucket:
        last = newest_rollup(store, wanted, bucket)
    else:
        found = list_answers(store, wanted, limit=1).answers
        last = found[0].generated_at if found else None
    if last is None:
        return wanted
    since = floor(last, bucket) - _step(bucket) * (DEFAULT_SPAN[bucket] - 1)
    return replace(wanted, since=since)


def points(
    answers: Iterable[AnswerOut], bucket: Bucket, thresholds: Thresholds | None = None
) -> list[TrendPoint]:
    """One point per bucket that has answers, newest first (``answers`` newest first too)."""
    out: list[TrendPoint] = []
    for start, group in groupby(answers, key=lambda a: floor(a.generated_at, bucket)):
        out.append(TrendPoint(start, Headline.of(summarise(list(group), thresholds=thresholds))))
        if len(out) == MAX_BUCKETS:
            break
    return out


def trend(
    store: Store, wanted: AnswerFilter, bucket: Bucket, thresholds: Thresholds | None = None
) -> tuple[AnswerFilter, list[TrendPoint]]:
    """The window actually used and the figures per ``bucket`` of the answers matching it."""
    used = window(store, wanted, bucket)
    if rollup_grain(used, bucket) == bucket:
        rows = rollup_slices(store, used, bucket)[:MAX_BUCKETS]
    else:
        summed = summed_counts_by(store, used, bucket)
        if summed is None:  # an answer without stored counts: read them all
            return used, points(iter_answers(store, used), bucket, thresholds)
        rows = summed[:MAX_BUCKETS]
    return used, [TrendPoint(start, headline_from_counts(counts)) for start, counts in rows]
