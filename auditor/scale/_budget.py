"""One LLM budget for a whole Ray cluster: the rate, the concurrency and the pause every worker obeys.

A :class:`ClusterBudget`, made on the driver, starts (or, given a name, finds) one async Ray
actor holding one :class:`auditor.llm.LocalBudget`: one token bucket at ``rate``, one
concurrency limit and one pause for every worker of the job. :meth:`ClusterBudget.handle` is a
small picklable :class:`auditor.llm.LLMBudget` that workers pass to ``build_judge(budget=...)``:
its ``acquire`` is one round trip to the actor (it returns when the cluster may send one more
request), its ``release`` is fire-and-forget (and, while the process has other requests in
flight, held back up to ``RELEASE_DELAY`` for the next ``acquire`` to carry: one actor call per
request in steady state), its ``pause`` (a 429 or ``Retry-After`` seen by any worker) holds every
worker's next request. The guarantees are those of ``LocalBudget``, for the cluster: in any
window of ``w`` seconds at most ``burst + w * rate`` requests are granted to all workers together
(at the server, give or take the milliseconds a grant takes to reach its worker).

A worker that dies (Ray retries its task elsewhere) cannot release its slots. Each granted slot is
therefore a ticket with a lease of ``hold_limit`` seconds (longer than any one HTTP attempt, which
the client's ``timeout`` bounds): a ticket not released by then is taken back, and its late
release, if it ever comes, is ignored. A handle keeps its process's tickets oldest first and a
release returns the oldest, so a ticket is never older than the slot it stands for: a live
holder's slot is not taken back early.

The actor asks for no CPU (it must not take a worker's slot on a small cluster) and runs up to
``ACTOR_CONCURRENCY`` calls at once, so waiting acquirers never block a release. Ray is imported
only when a budget is made: the core installs and imports without it.
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError
from auditor.llm import LocalBudget

if TYPE_CHECKING:
    from auditor.llm import LLMBudget

#: Calls the actor runs at once: every waiting ``acquire`` is one, and releases must get through.
ACTOR_CONCURRENCY = 10_000
#: Seconds a granted slot may go unreleased before the actor takes it back (its worker died).
HOLD_LIMIT = 600.0
#: Seconds a handle holds a release back for the next acquire to carry, before sending it alone.
RELEASE_DELAY = 0.002


class BudgetActor:
    """The actor's body (wrapped with ``ray.remote`` when a :class:`ClusterBudget` starts it);
    a plain class, so it is tested without Ray too."""

    def __init__(
        self, rate: float | None, concurrency: int | None, burst: int | None, hold_limit: float = HOLD_LIMIT
    ) -> None:
        self._budget = LocalBudget(rate, concurrency, burst=burst)
        self._hold_limit = hold_limit
        self._held: dict[int, float] = {}  # ticket -> when granted (with a concurrency limit only)
        self._last_ticket = 0
        self._reaper: asyncio.Task[None] | None = None
        self.reclaimed = 0

    async def acquire(self, released: tuple[int, ...] = ()) -> int:
        """Give back the ``released`` tickets, then wait for the budget; the ticket to release
        (0 without a concurrency limit: no slot)."""
        await self.release_all(released)
        await self._budget.acquire()
        if self._budget.concurrency is None:
            return 0
        self._last_ticket += 1
        self._held[self._last_ticket] = time.monotonic()
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return self._last_ticket

    async def release(self, ticket: int = 0) -> None:
        """Give back ``ticket``'s slot; a ticket already taken back (or unknown) is ignored."""
        await self.release_all((ticket,))

    async def release_all(self, tickets: tuple[int, ...]) -> None:
        """:meth:`release` for each of ``tickets``."""
        for ticket in tickets:
            await self._release(ticket)

    async def _release(self, ticket: int) -> None:
        if self._budget.concurrency is None or self._held.pop(ticket, None) is not None:
            await self._budget.release()

    async def pause(self, seconds: float) -> None:
        await self._budget.pause(seconds)

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(max(0.01, self._hold_limit / 4))
            expired = [t for t, since in self._held.items() if time.monotonic() - since > self._hold_limit]
            for ticket in expired:
                del self._held[ticket]
                self.reclaimed += 1
                await self._budget.release()

    async def stats(self) -> dict[str, Any]:
        b = self._budget
        return {
            "rate": b.rate,
            "burst": b.burst,
            "concurrency": b.concurrency,
            "acquired": b.acquired,
            "in_use": b.in_use,
            "pauses": b.pauses,
            "paused_seconds": b.paused_seconds,
            "reclaimed": self.reclaimed,
        }


class BudgetHandle:
    """What workers hold: the :class:`~auditor.llm.LLMBudget` methods, each a call to the actor.

    Picklable (it carries only the actor handle; each process that unpickles it keeps its own
    tickets), so it travels to Ray tasks and actors as an argument or inside a closure.
    """

    def __init__(self, actor: Any) -> None:
        self._actor = actor
        self._tickets: collections.deque[int] = collections.deque()
        self._released: list[int] = []
        self._flush: asyncio.TimerHandle | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"actor": self._actor}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(BudgetHandle(state["actor"]).__dict__)

    async def acquire(self) -> None:
        self._tickets.append(await self._actor.acquire.remote(self._take_released()))

    async def release(self) -> None:
        try:
            self._released.append(self._tickets.popleft())
        except IndexError:  # a release without an acquire: nothing to give back
            return
        if not self._tickets:  # nothing else in flight here (the loop may be about to end): now
            self._send_released()
        elif self._flush is None:
            # Fire-and-forget, carried by the next acquire when one comes within RELEASE_DELAY
            # (the next request usually starts as one ends): one call to the actor per request.
            self._flush = asyncio.get_running_loop().call_later(RELEASE_DELAY, self._send_released)

    def _take_released(self) -> tuple[int, ...]:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        released, self._released = tuple(self._released), []
        return released

    def _send_released(self) -> None:
        if released := self._take_released():
            self._actor.release_all.remote(released)

    async def pause(self, seconds: float) -> None:
        await self._actor.pause.remote(seconds)


class ClusterBudget:
    """The cluster-wide LLM budget of one job (see the module docstring).

    Args:
        rate: requests per second for the whole cluster (:func:`auditor.llm.parse_rate`); None
            for no rate limit (the cluster-wide concurrency and the pause only).
        concurrency: requests in flight at once across all workers; None for no cluster limit
            (each client's own ``concurrency`` still applies per process).
        burst: as for :class:`auditor.llm.LocalBudget`.
        name: a named actor: the first budget by that name starts it, the next ones (on any
            driver of the cluster, e.g. a rerun) get the same one and its rate.
        namespace: the Ray namespace of a named actor (default: the job's).
        hold_limit: seconds after which a slot not released (its worker died) is taken back.

    Raises:
        ValueError: a rate that is not positive or a concurrency below 1.
        UsageError: Ray is not installed (the ``ray`` extra).
    """

    def __init__(
        self,
        rate: float | None,
        concurrency: int | None = None,
        *,
        burst: int | None = None,
        name: str | None = None,
        namespace: str | None = None,
        hold_limit: float = HOLD_LIMIT,
    ) -> None:
        LocalBudget(rate, concurrency, burst=burst)  # the arguments' checks, before any actor
        try:
            import ray
        except ImportError:
            raise UsageError("The cluster LLM budget needs Ray: pip install 'trace-auditor[ray]'") from None
        options: dict[str, Any] = {"num_cpus": 0, "max_concurrency": ACTOR_CONCURRENCY}
        if name is not None:
            options.update(name=name, get_if_exists=True)
            if namespace is not None:
                options["namespace"] = namespace
        self.name = name
        self.actor: Any = (
            ray.remote(BudgetActor).options(**options).remote(rate, concurrency, burst, hold_limit)
        )

    def handle(self) -> LLMBudget:
        """The picklable budget workers pass to ``build_judge(budget=...)``."""
        return BudgetHandle(self.actor)

    def stats(self) -> dict[str, Any]:
        """The actor's counts (rate, burst, concurrency, acquired, in_use, pauses, paused_seconds,
        reclaimed). Releases are fire-and-forget: ``in_use`` may lag a release by some milliseconds."""
        import ray

        stats: dict[str, Any] = ray.get(self.actor.stats.remote())
        return stats

    def close(self) -> None:
        """Kill the actor (a named one too: every holder loses it)."""
        import ray

        ray.kill(self.actor)
