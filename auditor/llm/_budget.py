"""The LLM budget: how many requests per second (and at once) every holder may send, and pauses.

:class:`LLMClient` asks its budget before each HTTP attempt (:meth:`LLMBudget.acquire`) and
tells it after (:meth:`LLMBudget.release`); a 429 (or a 503 with ``Retry-After``) makes it call
:meth:`LLMBudget.pause`, so every holder of the same budget waits, not only the request that was
refused. A :class:`LocalBudget` is shared by the clients of one process; the Ray engine's
``ClusterBudget`` (``auditor/scale/_budget.py``) holds one :class:`LocalBudget` in an actor and
hands the workers a small handle with the same three methods.

Guarantees of :class:`LocalBudget`:

- **Rate.** A generic cell rate algorithm (a token bucket kept as one "theoretical arrival time"):
  in any window of ``w`` seconds at most ``burst + w * rate`` acquisitions return. Each acquirer
  reserves its send time in arrival order (first come, first served; no wake-up storms), on the
  monotonic clock.
- **Concurrency.** With ``concurrency``, at most that many holders between ``acquire`` and
  ``release``. The slot is taken before the rate token, so the token's time is the send time.
- **Pause.** ``pause(s)`` holds every acquisition until ``s`` seconds from now (pauses extend,
  never shorten); after it requests resume at ``rate`` without a burst, and a reservation that
  fell inside the pause is made again, so the pause is not followed by a pile-up.
- A cancelled ``acquire`` gives back its slot.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from typing import Protocol, runtime_checkable

from auditor.errors import UsageError

_RATE = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*/\s*([a-z]+)\s*")
_PER = {
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
}
RATE_FORMS = "N/s, N/sec, N/min or N/hour (e.g. 3000/min, 50/s, 1.5/s)"


def parse_rate(text: str, *, option: str = "--rate-limit") -> float:
    """Requests per second from ``"3000/min"``, ``"50/s"``, ``"50/sec"``, ``"1.5/s"``, ``"120000/hour"``.

    Args:
        text: the rate, a positive number of requests per ``s``/``sec``/``second``,
            ``m``/``min``/``minute`` or ``h``/``hour`` (a plural ``s`` is accepted).
        option: the option or setting the text came from, for the message.

    Raises:
        UsageError: anything else, naming ``option`` and the accepted forms.
    """
    m = _RATE.fullmatch(text.lower())
    unit = m.group(2) if m else ""
    per = _PER.get(unit) or (_PER.get(unit[:-1]) if unit.endswith("s") and len(unit) > 3 else None)
    count = float(m.group(1)) if m else math.nan
    if m is None or per is None or not math.isfinite(count) or count <= 0:
        raise UsageError(f"{option} {text!r} is not a rate: use {RATE_FORMS}.")
    return count / per


@runtime_checkable
class LLMBudget(Protocol):
    """What an LLM client asks before each HTTP attempt and tells after it.

    ``acquire`` returns when the holder may send: a rate token is free, a concurrency slot (if the
    budget has a limit) is free and no pause is in force. Every ``acquire`` that returned is
    matched by one ``release`` when the attempt has ended (answered, failed or cancelled).
    ``pause(seconds)`` is called on a 429 (or a 503 with ``Retry-After``): every holder waits
    that long; the caller still does its own backoff and counts its retry.
    """

    async def acquire(self) -> None: ...

    async def release(self) -> None: ...

    async def pause(self, seconds: float) -> None: ...


class LocalBudget:
    """A token bucket at ``rate`` requests/s (``burst`` at once) and an optional concurrency limit,
    with a shared pause, for the clients of one process (one event loop at a time).

    Args:
        rate: requests per second (:func:`parse_rate` reads ``"3000/min"``); None for no rate
            limit (the concurrency limit and the pause only).
        concurrency: holders at once between ``acquire`` and ``release``; None for no limit.
        burst: acquisitions allowed back to back after a quiet spell; default ``min(rate, 10)``
            rounded down (at least 1), so a one-second window holds at most ``rate + burst``.
    """

    def __init__(
        self, rate: float | None, concurrency: int | None = None, *, burst: int | None = None
    ) -> None:
        if rate is not None and (not math.isfinite(rate) or rate <= 0):
            raise ValueError(f"rate must be a positive number of requests per second, not {rate!r}")
        if concurrency is not None and concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency!r}")
        self.rate = rate
        self.concurrency = concurrency
        self.burst = None if rate is None else max(1, burst if burst is not None else int(min(rate, 10)))
        # No rate: a zero interval and tolerance leave only the pause in the schedule.
        self._interval = 0.0 if rate is None else 1.0 / rate
        self._tolerance = (self.burst - 1) * self._interval if self.burst is not None else 0.0
        self._tat = -math.inf  # the theoretical arrival time of the next request (GCRA)
        self._paused_until = -math.inf
        self._slots = asyncio.Semaphore(concurrency) if concurrency is not None else None
        self.in_use = 0  # holders between acquire and release now
        self.acquired = 0  # acquisitions that returned
        self.pauses = 0  # pause() calls
        self.paused_seconds = 0.0  # the pause time added (overlapping pauses counted once)

    async def acquire(self) -> None:
        if self._slots is not None:
            await self._slots.acquire()
        try:
            await self._take_token()
        except BaseException:
            if self._slots is not None:
                self._slots.release()
            raise
        self.acquired += 1
        self.in_use += 1

    async def _take_token(self) -> None:
        while True:
            now = time.monotonic()
            if now < self._paused_until:
                await asyncio.sleep(self._paused_until - now)
                continue
            send_at = max(now, self._tat - self._tolerance)
            self._tat = max(self._tat, now) + self._interval
            if send_at > now:
                await asyncio.sleep(send_at - now)
            if time.monotonic() >= self._paused_until:
                return
            # A pause began while this reservation waited: reserve again after it.

    async def release(self) -> None:
        self.in_use -= 1
        if self._slots is not None:
            self._slots.release()

    async def pause(self, seconds: float) -> None:
        if not math.isfinite(seconds) or seconds <= 0:
            return
        now = time.monotonic()
        until = now + seconds
        if until <= self._paused_until:
            return
        self.paused_seconds += until - max(self._paused_until, now)
        self.pauses += 1
        self._paused_until = until
        # Restart at ``rate`` without a burst, after any reservation already made beyond the pause.
        self._tat = max(self._tat, until + self._tolerance)
