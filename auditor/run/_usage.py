"""Judge usage over a run's life: what each saved answer spent, and the run's total.

A run's usage is everything spent on it, whichever process or attempt spent it: each saved answer
carries what was spent since the previous save (:class:`UsageMeter`), in its own transaction, so a
run resumed after a kill counts the answers its earlier attempt saved (:func:`merge_usage`), and one
process and a Ray cluster report the same total for the same work.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any


class UsageMeter:
    """The judge usage spent since the previous :meth:`take` (None offline)."""

    def __init__(self, read: Callable[[], dict[str, Any] | None]) -> None:
        self.read = read
        self.taken: dict[str, Any] | None = None

    def take(self) -> dict[str, Any] | None:
        now = self.read()
        if now is None:
            return None
        since = now if self.taken is None else _difference(now, self.taken)
        self.taken = copy.deepcopy(now)
        return since


def _difference(now: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """``now - before`` key by key (counts only grow); an unknown (None) value stays unknown."""
    out: dict[str, Any] = {}
    for key, value in now.items():
        was = before.get(key)
        if isinstance(value, dict) and isinstance(was, dict):
            out[key] = _difference(value, was)
        elif isinstance(value, int | float) and isinstance(was, int | float) and not isinstance(value, bool):
            out[key] = value - was
        else:
            out[key] = copy.deepcopy(value)
    return out


def merge_usage(usages: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Usages added up: a run's shards, or its answers saved by earlier attempts and this one
    (None when all judged offline).

    Counts are summed key by key; a cost any shard could not price is unknown (None) for the run;
    ``calls_saved_per_answer`` is recomputed from the summed counts.
    """
    merged: dict[str, Any] | None = None
    for usage in usages:
        if usage is None:
            continue
        merged = usage if merged is None else _add(merged, usage)
    cascade = merged.get("cascade") if merged else None
    if isinstance(cascade, dict) and "calls_saved_per_answer" in cascade:
        answers = cascade.get("answers") or 0
        cascade["calls_saved_per_answer"] = (
            cascade.get("answers_without_call", 0) / answers if answers else None
        )
    return merged


def _add(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    out = dict(left)
    for key, value in right.items():
        have = out.get(key)
        if key not in out:
            out[key] = value
        elif isinstance(have, dict) and isinstance(value, dict):
            out[key] = _add(have, value)
        elif have is None or value is None:
            out[key] = None
        elif isinstance(have, int | float) and isinstance(value, int | float):
            out[key] = have + value
    return out
