"""The live LLM judge's spending cap: tokens or USD per clock hour or UTC day, then wait or go offline.

``AUDITOR_SERVE_BUDGET="200000 tokens/hour"`` (or ``N tokens/day``, ``N usd/hour``, ``N usd/day``)
caps what the ``openai:`` judge of ``auditor serve`` spends in each window (the clock hour, or the
UTC day). What was spent is read from the store (:func:`auditor.store.judge_spend`: the usage of
the LLM-judged runs started in the window), so replicas over one database share one budget; USD is
the estimate of the price table the report's usage panel shows (``AUDITOR_LLM_PRICES`` over the
built-in one), and a USD cap on a model without a price is refused at start-up.

The cap is checked before each trace is audited: a worker does not start an LLM-judged audit once
the window's spending has reached the cap. Audits already under way finish, so spending can pass
the cap by at most what ``workers`` traces cost. Once spent, ``AUDITOR_SERVE_BUDGET_SPENT``
decides: ``wait`` (the default) leaves the traces pending until the next window; ``offline``
audits them with the offline judge, and each such run records the cap (``runs.cap``: the limit,
the window, what was spent, when the cap was first found reached). Never silent either way: the
first time the cap is found reached in a window is logged as a warning, and ``/api/budget`` shows
the cap, the spending and the hit.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from auditor.errors import UsageError
from auditor.store import Spend, Store, judge_spend

logger = logging.getLogger(__name__)

Unit = Literal["tokens", "usd"]
Per = Literal["hour", "day"]
Then = Literal["wait", "offline"]
THEN: tuple[Then, ...] = ("wait", "offline")
_CAP = re.compile(
    r"\s*\$?\s*(\d+(?:\.\d+)?|\.\d+)\s*(tokens?|usd|\$)?\s*/\s*(hour|h|day|d)\s*", re.IGNORECASE
)
CAP_FORMS = "N tokens/hour, N tokens/day, N usd/hour or N usd/day (e.g. 200000 tokens/hour, 5 usd/day)"


@dataclass(frozen=True)
class SpendCap:
    """At most ``amount`` ``unit`` (tokens or USD) per ``per`` (clock hour or UTC day)."""

    amount: float
    unit: Unit
    per: Per

    def text(self) -> str:
        amount = f"{self.amount:g}" if self.unit == "usd" else f"{int(self.amount)}"
        return f"{amount} {self.unit}/{self.per}"

    def window(self, at: datetime) -> tuple[datetime, datetime]:
        """The window holding ``at``: its start and its end."""
        start = at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        if self.per == "day":
            start = start.replace(hour=0)
        return start, start + (timedelta(hours=1) if self.per == "hour" else timedelta(days=1))

    def spent(self, spend: Spend) -> float | None:
        """What ``spend`` counts in this cap's unit (None: a cost the price table could not estimate)."""
        return float(spend.tokens) if self.unit == "tokens" else spend.cost_usd


def parse_cap(text: str | None) -> SpendCap | None:
    """A :class:`SpendCap` from ``AUDITOR_SERVE_BUDGET``'s text (None or empty: no cap).

    Raises:
        UsageError: not one of :data:`CAP_FORMS`, or not a positive amount.
    """
    if text is None or not text.strip():
        return None
    m = _CAP.fullmatch(text)
    amount = float(m.group(1)) if m else math.nan
    if m is None or not (math.isfinite(amount) and amount > 0) or (m.group(2) is None and "$" not in text):
        raise UsageError(f"AUDITOR_SERVE_BUDGET {text!r} is not a spending cap: use {CAP_FORMS}.")
    unit: Unit = "tokens" if m.group(2) and m.group(2).lower().startswith("token") else "usd"
    per: Per = "hour" if m.group(3).lower().startswith("h") else "day"
    return SpendCap(amount, unit, per)


def parse_then(text: str | None) -> Then:
    value = (text or "wait").strip().lower()
    if value not in THEN:
        raise UsageError(f"AUDITOR_SERVE_BUDGET_SPENT {text!r}: use wait or offline.")
    return "wait" if value == "wait" else "offline"


@dataclass(frozen=True)
class CapState:
    """The cap's state at one check: the window, what was spent in it, and whether it is reached."""

    cap: SpendCap
    then: Then
    window_start: datetime
    window_end: datetime
    spent: float | None
    reached: bool
    hit_at: datetime | None  # when the window's spending reached the cap (the run that finished then)

    def recorded(self) -> dict[str, Any]:
        """What a run judged offline because of the cap stores (``runs.cap``)."""
        return {
            "limit": self.cap.text(),
            "then": self.then,
            "window_start": self.window_start.isoformat(),
            "window_end": self.window_end.isoformat(),
            "spent": self.spent,
            "hit_at": self.hit_at.isoformat() if self.hit_at else None,
        }

    def as_json(self) -> dict[str, Any]:
        return {**self.recorded(), "unit": self.cap.unit, "amount": self.cap.amount, "reached": self.reached}


class CapGuard:
    """Checks the cap against the store before each LLM-judged audit (thread-safe)."""

    def __init__(self, cap: SpendCap, then: Then, store: Store) -> None:
        self.cap, self.then, self.store = cap, then, store
        self._lock = threading.Lock()
        self._warned: datetime | None = None  # the window whose hit was logged
        self._hit: tuple[datetime, datetime | None] | None = None  # (window start, when it was reached)

    def check(self, at: datetime | None = None) -> CapState:
        at = at or datetime.now(UTC)
        start, end = self.cap.window(at)
        spent = self.cap.spent(judge_spend(self.store, start))
        # An unknown cost cannot be shown to be under the cap: fail closed, as a judge failure does.
        reached = spent is None or spent >= self.cap.amount
        with self._lock:
            hit = self._hit if self._hit is not None and self._hit[0] == start else None
        hit_at = hit[1] if hit is not None else None
        if reached and hit is None:  # found once per window: spending in a window only grows
            hit_at = self._hit_at(judge_spend(self.store, start, steps=True))
        with self._lock:
            if reached and hit is None:
                self._hit = (start, hit_at)
            first = reached and self._warned != start
            if first:
                self._warned = start
        if first:
            logger.warning(
                "the LLM judge's spending cap %s was reached at %s (%s spent since %s): traces %s until %s",
                self.cap.text(),
                hit_at.isoformat() if hit_at else "an unknown time",
                "an unknown amount" if spent is None else f"{spent:g} {self.cap.unit}",
                start.isoformat(),
                "wait" if self.then == "wait" else "are judged offline",
                end.isoformat(),
            )
        return CapState(self.cap, self.then, start, end, spent, reached, hit_at)

    def _hit_at(self, spend: Spend) -> datetime | None:
        """When the window's running total first reached the cap (the run that finished then)."""
        for finished_at, tokens, cost in spend.steps:
            total = float(tokens) if self.cap.unit == "tokens" else cost
            if total is None or total >= self.cap.amount:
                return finished_at
        return None
