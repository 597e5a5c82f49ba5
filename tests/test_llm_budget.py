"""The LLM budget: rates parsed, a rate held at the server, a 429 pausing every holder, in one process
(``LocalBudget``) and across the processes of a real local Ray cluster (``ClusterBudget``).

The rate is checked where it matters, at the fake OpenAI server: the most requests that arrived
within any one second (``FakeOpenAI.most_in_window``), through the real ``openai`` client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auditor.errors import UsageError
from auditor.llm import LLMBudget, LLMClient, LLMStatusError, LocalBudget, parse_rate
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI, most_in_window

#: Arrivals at the server lag their grants by a varying few milliseconds (more on a loaded
#: machine: the client's process may not run for a while), which can put a few more arrivals in one
#: second than were granted in any second. The grants are checked exactly; the arrivals with this
#: much lag allowed (seconds), still far below what the load does without the budget.
ARRIVAL_LAG = 0.25

SCHEMA: dict[str, Any] = {"type": "object"}
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


async def post_many(
    server: FakeOpenAI, n: int, *, budget: LLMBudget | None, concurrency: int = 16, **client_args: Any
) -> LLMClient:
    """``n`` requests at ``concurrency`` through one client; returns the (closed) client."""
    settings: dict[str, Any] = {"timeout": 5.0, "max_retries": 3, "backoff_base": 0.01, **client_args}
    async with LLMClient(
        "fake", base_url=server.base_url, api_key="test", concurrency=concurrency, budget=budget, **settings
    ) as client:
        await asyncio.gather(
            *(client.complete(MESSAGES, schema_name="x", schema=SCHEMA, max_tokens=10) for _ in range(n))
        )
        return client


# ---- parse_rate ----


@pytest.mark.parametrize(
    ("text", "per_second"),
    [
        ("3000/min", 50.0),
        ("50/s", 50.0),
        ("50/sec", 50.0),
        ("1.5/s", 1.5),
        ("120000/hour", 120000 / 3600),
        (" 10 / minute ", 10 / 60),
        ("2/secs", 2.0),
        ("7200/h", 2.0),
        ("60/M", 1.0),
    ],
)
def test_parse_rate_reads_requests_per_second(text: str, per_second: float) -> None:
    assert parse_rate(text) == pytest.approx(per_second)


@pytest.mark.parametrize(
    "text", ["", "50", "fast", "0/s", "-1/s", "50/ms", "50/day", "nan/s", "inf/min", "1e3/s", "50/s/s", "/s"]
)
def test_parse_rate_refuses_anything_else_naming_the_option_and_the_forms(text: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_rate(text)
    message = str(err.value)
    assert message.startswith(f"--rate-limit {text!r} is not a rate")
    assert "3000/min" in message and "N/hour" in message
    assert "\n" not in message


def test_parse_rate_names_the_setting_it_came_from() -> None:
    with pytest.raises(UsageError, match=r"^AUDITOR_LLM_RATE 'lots' is not a rate"):
        parse_rate("lots", option="AUDITOR_LLM_RATE")


# ---- LocalBudget on its own ----


def test_local_budget_refuses_a_rate_or_concurrency_that_cannot_hold() -> None:
    for rate in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="rate must be a positive number"):
            LocalBudget(rate)
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        LocalBudget(10, 0)


def test_local_budget_bounds_holders_and_a_cancelled_acquire_gives_its_slot_back() -> None:
    async def go() -> None:
        budget = LocalBudget(1000, concurrency=2)
        await budget.acquire()
        await budget.acquire()
        third = asyncio.create_task(budget.acquire())
        await asyncio.sleep(0.05)
        assert not third.done() and budget.in_use == 2
        third.cancel()
        with pytest.raises(asyncio.CancelledError):
            await third
        await budget.release()
        fourth = asyncio.create_task(budget.acquire())
        await asyncio.wait_for(fourth, 1.0)  # the cancelled one did not keep the freed slot
        assert budget.in_use == 2 and budget.acquired == 3

    asyncio.run(go())


def test_local_budget_pause_holds_the_next_acquire_and_pauses_only_extend() -> None:
    async def go() -> None:
        budget = LocalBudget(1000)
        await budget.pause(0.3)
        await budget.pause(0.1)  # shorter: no effect
        start = time.monotonic()
        await budget.acquire()
        assert time.monotonic() - start >= 0.28
        assert budget.pauses == 1 and budget.paused_seconds == pytest.approx(0.3, abs=0.01)

    asyncio.run(go())


# ---- LocalBudget through the real client, counted at the server ----


class Recorded:
    """An :class:`LLMBudget` that notes when each acquire of the budget it wraps returned."""

    def __init__(self, budget: LLMBudget) -> None:
        self.budget = budget
        self.granted: list[float] = []

    async def acquire(self) -> None:
        await self.budget.acquire()
        self.granted.append(time.monotonic())

    async def release(self) -> None:
        await self.budget.release()

    async def pause(self, seconds: float) -> None:
        await self.budget.pause(seconds)


def test_local_budget_holds_the_rate_at_the_server(server: FakeOpenAI) -> None:
    budget = LocalBudget(20, burst=5)
    recorded = Recorded(budget)
    client = asyncio.run(post_many(server, 60, budget=recorded, concurrency=16))
    assert server.requests == 60 and client.usage.failed == 0
    assert most_in_window(recorded.granted, 1.0) <= 20 + 5  # exactly, where the budget decides
    assert server.most_in_window(1.0) <= 20 + 5 + 20 * ARRIVAL_LAG
    # 55 requests after the burst at 20/s: at least 2.75 s between the first and the last arrival.
    assert server.arrivals[-1] - server.arrivals[0] >= 2.5
    assert budget.acquired == 60 and budget.in_use == 0


def test_without_a_budget_the_same_load_exceeds_that_rate(server: FakeOpenAI) -> None:
    # The check above can fail: unbudgeted, 60 requests at concurrency 16 arrive well within a second.
    asyncio.run(post_many(server, 60, budget=None, concurrency=16))
    assert server.most_in_window(1.0) > 25


def test_every_http_attempt_is_budgeted_retries_and_the_json_mode_fallback_included(
    server: FakeOpenAI,
) -> None:
    server.reject_json_schema = True
    server.enqueue("500")
    server.enqueue("500")
    budget = LocalBudget(1000, concurrency=4)
    client = asyncio.run(post_many(server, 3, budget=budget, concurrency=2))
    assert client.usage.retries == 2 and not client.schema_supported
    assert budget.acquired == client.usage.attempts == server.requests
    assert budget.in_use == 0 and budget.pauses == 0  # a 500 without Retry-After pauses nobody


def test_a_failed_request_gives_its_slot_back(server: FakeOpenAI) -> None:
    server.enqueue("401")
    budget = LocalBudget(1000, concurrency=1)
    with pytest.raises(LLMStatusError, match="HTTP 401"):
        asyncio.run(post_many(server, 1, budget=budget))
    assert budget.acquired == 1 and budget.in_use == 0


def test_a_429_with_retry_after_pauses_the_requests_of_every_client_sharing_the_budget(
    server: FakeOpenAI,
) -> None:
    server.enqueue("429", retry_after="1")
    budget = LocalBudget(4, burst=1)  # one request per 0.25 s: the second is due long before 1 s

    async def go() -> None:
        await asyncio.gather(
            post_many(server, 3, budget=budget, concurrency=8),
            post_many(server, 3, budget=budget, concurrency=8),  # another client, the same budget
        )

    asyncio.run(go())
    assert server.statuses.count(429) == 1 and server.requests == 7  # six requests, one retry
    refused = server.arrivals[0]
    assert all(t - refused >= 0.95 for t in server.arrivals[1:]), [t - refused for t in server.arrivals]
    assert budget.pauses == 1 and budget.in_use == 0
    # After the pause the requests come at the rate, without a burst.
    assert server.most_in_window(1.0) <= 4 + 1 + 4 * ARRIVAL_LAG


# ---- ClusterBudget: one budget for the processes of a real local Ray cluster ----


def run_workers(base_url: str, handle: LLMBudget, per_worker: int, workers: int = 2) -> list[dict[str, Any]]:
    """``workers`` Ray tasks, each posting ``per_worker`` requests through its own client holding
    ``handle``, all at once (a barrier: none starts before every one runs, so each runs in its own
    worker process however slowly the processes start); returns what each worker saw."""
    import ray

    class Barrier:
        def __init__(self) -> None:
            self.arrived = 0
            self.all_here = asyncio.Event()

        async def wait(self) -> None:
            self.arrived += 1
            if self.arrived == workers:
                self.all_here.set()
            await self.all_here.wait()

    barrier = ray.remote(Barrier).options(num_cpus=0).remote()

    @ray.remote(num_cpus=1, max_retries=0)
    def worker(name: str) -> dict[str, Any]:
        import asyncio
        import os

        from auditor.llm import LLMClient

        ray.get(barrier.wait.remote())

        async def go() -> dict[str, Any]:
            async with LLMClient(
                name, base_url=base_url, api_key="test", concurrency=16, budget=handle, backoff_base=0.01
            ) as client:
                await asyncio.gather(
                    *(
                        client.complete(
                            [{"role": "user", "content": "hi"}],
                            schema_name="x",
                            schema={"type": "object"},
                            max_tokens=5,
                        )
                        for _ in range(per_worker)
                    )
                )
                return {"pid": os.getpid(), "attempts": client.usage.attempts, "failed": client.usage.failed}

        return asyncio.run(go())

    try:
        return list(ray.get([worker.remote(f"worker-{i}") for i in range(workers)], timeout=120))
    finally:
        ray.kill(barrier)


def settled(budget: Any) -> dict[str, Any]:
    """The cluster budget's stats once the workers' releases (fire-and-forget) have landed."""
    deadline = time.monotonic() + 10
    while (stats := budget.stats())["in_use"] and time.monotonic() < deadline:
        time.sleep(0.05)
    return dict(stats)


def per_model(server: FakeOpenAI) -> dict[str, int]:
    counts: dict[str, int] = {}
    for body in server.bodies:
        counts[body["model"]] = counts.get(body["model"], 0) + 1
    return counts


@pytest.mark.ray
def test_cluster_budget_holds_the_rate_across_two_worker_processes(
    ray_cluster: Any, server: FakeOpenAI
) -> None:
    from auditor.scale._budget import ClusterBudget

    budget = ClusterBudget(20, concurrency=8, burst=5)
    try:
        seen = run_workers(server.base_url, budget.handle(), per_worker=40)
        stats = settled(budget)
    finally:
        budget.close()
    assert len({s["pid"] for s in seen}) == 2  # two processes
    assert per_model(server) == {"worker-0": 40, "worker-1": 40}
    assert all(s["failed"] == 0 for s in seen)
    # Each worker alone would send 20/s; together they still hold 20/s (+ the burst) at the server,
    # give or take the lag of a grant's trip back to its worker (40 a second would be two budgets).
    assert server.most_in_window(1.0) <= 20 + 5 + 20 * ARRIVAL_LAG
    assert server.arrivals[-1] - server.arrivals[0] >= (80 - 5) / 20 * 0.9
    assert server.max_in_flight <= 8
    assert stats["acquired"] == server.requests == 80 and stats["in_use"] == 0


@pytest.mark.ray
def test_cluster_budget_a_429_on_one_worker_pauses_the_other(ray_cluster: Any, server: FakeOpenAI) -> None:
    from auditor.scale._budget import ClusterBudget

    server.enqueue("429", retry_after="1")
    budget = ClusterBudget(4, burst=1, name="test-llm-budget")
    try:
        same = ClusterBudget(4, burst=1, name="test-llm-budget")  # a named budget is found, not doubled
        run_workers(server.base_url, same.handle(), per_worker=3)
        stats = settled(budget)
    finally:
        budget.close()
    assert server.statuses.count(429) == 1 and server.requests == 7
    refused = server.arrivals[0]
    assert all(t - refused >= 0.95 for t in server.arrivals[1:]), [t - refused for t in server.arrivals]
    assert set(per_model(server)) == {"worker-0", "worker-1"}
    assert stats["pauses"] == 1 and stats["in_use"] == 0 and stats["acquired"] == 7  # one actor


# ---- --rate-limit and AUDITOR_LLM_RATE on the commands ----

INPUTS = sorted(FIXTURES.glob("*/runtree.json"))


def cli_run(tmp_path: Path, command: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    from click.testing import CliRunner

    from auditor.cli import cli

    result = CliRunner(env={"COLUMNS": "400", **(env or {})}).invoke(
        cli,
        [
            command,
            *map(str, INPUTS),
            "--policy",
            "strict",
            "--db",
            f"sqlite:///{tmp_path / 'runs.db'}",
            *args,
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("command", "args", "env"),
    [
        ("audit", ["--rate-limit", "240/min"], {}),
        ("audit", [], {"AUDITOR_LLM_RATE": "4/s"}),
        ("gate", ["--rate-limit", "4/sec"], {}),
    ],
    ids=["audit-option", "audit-setting", "gate-option"],
)
def test_the_commands_hold_the_rate_limit_at_the_server(
    tmp_path: Path, command: str, args: list[str], env: dict[str, str]
) -> None:
    with FakeOpenAI() as server:
        judge = ["--judge", "openai:fake-judge", "--base-url", server.base_url]
        code, err = cli_run(
            tmp_path, command, *judge, *(["--no-cascade"] if command == "audit" else []), *args, env=env
        )
    assert code in (0, 1, 3), err
    calls = server.requests
    assert calls >= 8, f"{calls} LLM calls: too few to see a rate"
    assert server.most_in_window(1.0) <= 4 + 4 + 4 * ARRIVAL_LAG  # 4/s with a burst of 4
    assert server.arrivals[-1] - server.arrivals[0] >= (calls - 4) / 4 * 0.9


@pytest.mark.parametrize(
    ("command", "args", "env", "named"),
    [
        ("audit", ["--rate-limit", "fast"], {}, "--rate-limit 'fast'"),
        ("audit", [], {"AUDITOR_LLM_RATE": "50/day"}, "AUDITOR_LLM_RATE '50/day'"),
        ("gate", ["--rate-limit", "0/s"], {}, "--rate-limit '0/s'"),
    ],
    ids=["audit-option", "audit-setting", "gate-option"],
)
def test_a_bad_rate_is_one_line_naming_where_it_came_from_before_any_call(
    tmp_path: Path, command: str, args: list[str], env: dict[str, str], named: str
) -> None:
    with FakeOpenAI() as server:
        judge = ["--judge", "openai:fake-judge", "--base-url", server.base_url]
        code, err = cli_run(tmp_path, command, *judge, *args, env=env)
    assert code == 2
    assert f"{named} is not a rate: use N/s, N/sec, N/min or N/hour" in err
    assert len(err.strip().splitlines()) == 1, err
    assert server.requests == 0


def test_the_cluster_actor_takes_back_a_slot_its_dead_holder_never_released() -> None:
    from auditor.scale._budget import BudgetActor

    async def go() -> None:
        actor = BudgetActor(1000, 1, None, hold_limit=0.2)
        lost = await actor.acquire()  # its worker dies: never released
        start = time.monotonic()
        ticket = await asyncio.wait_for(actor.acquire(), 2.0)  # waits for the lease to run out
        assert time.monotonic() - start >= 0.2 and ticket != lost
        await actor.release(lost)  # a late release of a ticket taken back changes nothing
        stats = await actor.stats()
        assert stats["in_use"] == 1 and stats["reclaimed"] == 1
        await actor.release(ticket)
        assert (await actor.stats())["in_use"] == 0

    asyncio.run(go())


def test_the_cluster_handle_pickles_without_its_tickets() -> None:
    import pickle

    from auditor.scale._budget import BudgetHandle

    handle = BudgetHandle("an actor handle")
    handle._tickets.append(7)
    copy = pickle.loads(pickle.dumps(handle))
    assert copy._actor == "an actor handle" and not copy._tickets
    assert isinstance(copy, LLMBudget)


def test_a_429_without_retry_after_pauses_for_the_backoff_ceiling(server: FakeOpenAI) -> None:
    server.enqueue("429", retry_after=None)
    server.enqueue("500")  # a 5xx without Retry-After is the server's trouble, not a rate: no pause
    budget = LocalBudget(1000)
    client = asyncio.run(post_many(server, 1, budget=budget, backoff_base=0.2))
    assert client.usage.retries == 2 and server.statuses == [429, 500, 200]
    assert budget.pauses == 1 and budget.paused_seconds == pytest.approx(0.2, abs=0.02)


def test_a_budget_without_a_rate_still_bounds_holders_and_pauses() -> None:
    async def go() -> None:
        budget = LocalBudget(None, concurrency=1)
        start = time.monotonic()
        for _ in range(50):
            await budget.acquire()
            await budget.release()
        assert time.monotonic() - start < 0.5 and budget.burst is None  # no rate: no waiting
        await budget.acquire()
        blocked = asyncio.create_task(budget.acquire())
        await asyncio.sleep(0.05)
        assert not blocked.done()
        await budget.release()
        await asyncio.wait_for(blocked, 1.0)
        await budget.release()
        await budget.pause(0.2)
        start = time.monotonic()
        await budget.acquire()
        assert time.monotonic() - start >= 0.18

    asyncio.run(go())
