"""The LLM pipeline against the local fake OpenAI-compatible server: throughput, calls, tokens, cache.

The benchmark starts ``tests.support.fake_openai.FakeOpenAI`` in a process of its own
(:mod:`benchmarks.server`: verdicts from the offline judge, a fixed ``latency`` per request, token
usage estimated as characters / 4) and audits generated records files of small RAG answers (two
sources, three sentences: one copied from a source, one paraphrased, one with a changed figure)
through ``auditor.run.audit_async``. Each row runs in a fresh app directory (a cold verdict cache;
the store, when on, is created and migrated before the clock starts).

- ``modes`` rows, at concurrency ``C`` on ``answers`` records, store and cache off:
  ``throughput`` (rules decomposer, no cascade: one judge call per answer), ``separate``
  (``--decomposer llm --no-cascade``), ``fused`` (one decompose-and-judge call per answer),
  ``cascade`` (rules decomposer, the offline judge settles what it is certain of): answers/s as a
  ratio to the ideal ``C / latency``, calls and tokens per answer;
- ``modes`` rows at the default settings (cascade and verdict cache on) with the store on and with
  ``--no-store``, at each of ``concurrencies`` on ``store_answers`` records at the lowest
  concurrency and as many rounds at the others (``store_answers x C / min(concurrencies)``: 192
  at C = 8, 768 at C = 32; until 2026-12-01 every C ran 192, so C = 32 ran 6 rounds of requests
  against C = 8's 24, and its figure was mostly the run's start and end): the rules decomposer
  (the CLI default), fused mode and the LLM decomposer. ``ratio_to_bound`` is answers/s over what
  the calls allow: ``C / latency`` for one call per answer, ``C / (2 x latency)`` for the LLM
  decomposer's two steps in sequence;
- a ``bare openai.AsyncOpenAI`` row after each store-on row: the same request bodies that row
  posted (as the server received them), posted again at the same ``C`` through a bare client and
  nothing else (no auditor work), so ``ratio_to_bound`` of the bare row is the ceiling of the
  client/server machinery on this machine; each auditor row's ``ratio_to_bare`` is its
  ``ratio_to_bound`` over the bare row's. Requests per second count as answers per second there
  (the LLM decomposer's two steps are two requests);
- every row's ``server_cpu_ms_per_request``: the fake server's own CPU per request (it shares the
  machine's cores with the auditor, which a real endpoint does not);
- each default-settings row (and its bare row) is run ``repeats`` times; the row kept is the one
  with the median answers/s, the others' figures are in its ``runs``;
- a second audit of the same file with the verdict cache on: its LLM calls (must be 0).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, get_args

import openai
from openai.types.chat import ChatCompletion

from auditor.judges import Decomposer, clear_quote_caches
from auditor.llm._client import _posted  # the auditor's own way to post a body
from auditor.metrics import clear_interval_cache
from auditor.run import audit_async
from auditor.store import Store
from auditor.trace import FORMAT
from benchmarks.server import ServerProcess

_CITIES = ["Lyon", "Porto", "Turin", "Ghent", "Leeds", "Graz", "Brno", "Cork"]


def write_records(path: Path, answers: int) -> None:
    """``answers`` distinct records: a verbatim sentence, a paraphrase and a changed figure each."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(answers):
            city = _CITIES[i % len(_CITIES)]
            days, fee = 10 + i, 5 + i % 7
            policy = (
                f"Store {i} in {city} accepts returns within {days} days of delivery. "
                f"A restocking fee of ${fee}.00 applies to opened items. Refunds go to the original card."
            )
            hours = (
                f"Store {i} opens at 9 am and closes at 6 pm on weekdays. It is closed on public holidays."
            )
            answer = (
                f"Store {i} in {city} accepts returns within {days} days of delivery. "
                f"Refunds for store {i} are paid back to the card used for the purchase. "
                f"Opened items at store {i} carry a restocking fee of ${fee + 3}.00."
            )
            record = {
                "id": f"bench-{i}",
                "question": f"What is the return policy of store {i}?",
                "sources": [{"id": "policy", "text": policy}, {"id": "hours", "text": hours}],
                "answer": answer,
            }
            out.write(json.dumps(record) + "\n")


def clear_caches() -> None:
    """The per-process caches of quote checking and intervals (``auditor.judges.clear_quote_caches``,
    ``auditor.metrics.clear_interval_cache``), which a fresh process starts without: cleared before each row, so a row
    re-auditing the records of the one before it gains nothing from it."""
    clear_quote_caches()
    clear_interval_cache()


@contextmanager
def _fresh_home() -> Iterator[Path]:
    previous = os.environ.get("AUDITOR_HOME")
    with tempfile.TemporaryDirectory(prefix="bench-home-") as home:
        os.environ["AUDITOR_HOME"] = home
        try:
            yield Path(home)
        finally:
            if previous is None:
                os.environ.pop("AUDITOR_HOME", None)
            else:
                os.environ["AUDITOR_HOME"] = previous


def _timing(
    n: int, seconds: float, cpu_seconds: float, calls: int, requests: int, server_cpu_seconds: float
) -> dict[str, Any]:
    """A row's rate and CPU figures, the same keys for the auditor's rows and the bare client's."""
    return {
        "answers": n,
        "seconds": seconds,
        "answers_per_second": n / seconds,
        # The auditor's own CPU (every thread of this process; the fake server runs in another): on a
        # shared machine the wall-clock ratios move with the load, this much less.
        "cpu_ms_per_answer": cpu_seconds * 1000 / n if n else None,
        "llm_calls": calls,
        "http_requests": requests,
        # the fake server's own CPU (another process, the same two cores): the machine's other load
        "server_cpu_ms_per_request": server_cpu_seconds * 1000 / requests if requests else None,
    }


async def _audit(
    path: Path,
    server: ServerProcess,
    *,
    decomposer: Decomposer,
    cascade: bool,
    cache: bool,
    concurrency: int,
    store: bool = False,
) -> dict[str, Any]:
    before, server_cpu = server.requests, server.cpu_seconds
    clear_caches()
    if store:
        Store().close()  # the new store is created and migrated before the clock starts
    started, cpu = time.perf_counter(), time.process_time()
    result, _ = await audit_async(
        [path],
        judge="openai:bench-model",
        base_url=server.base_url,
        cascade=cascade,
        cache=cache,
        decomposer=decomposer,
        format=FORMAT,
        concurrency=concurrency,
        store=store,
    )
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    usage = (result.run.usage or {}).get("llm", {})
    n = len(result.answers)
    calls = int(usage.get("calls", 0))
    requests = server.requests - before
    return {
        **_timing(n, seconds, cpu_seconds, calls, requests, server.cpu_seconds - server_cpu),
        "calls_per_answer": calls / n if n else None,
        "prompt_tokens_per_answer": usage.get("prompt_tokens", 0) / n if n else None,
        "completion_tokens_per_answer": usage.get("completion_tokens", 0) / n if n else None,
        "by_kind": usage.get("by_kind", {}),
        "unjudged": result.summary.get("unjudged"),
        "cascade": (result.run.usage or {}).get("cascade"),
        "cache": (result.run.usage or {}).get("cache"),
        "concurrency": concurrency,
        "store": store,
        "decomposer": decomposer,
        "cascade_on": cascade,
        "cache_on": cache,
    }


async def _bare(bodies: list[dict[str, Any]], server: ServerProcess, concurrency: int) -> dict[str, Any]:
    """``bodies`` posted again through a bare ``openai.AsyncOpenAI`` at ``concurrency``, nothing else.

    The request goes the way the auditor's client posts it (``post("/chat/completions")`` with the
    body as JSON bytes written by ``msgspec``, since 2026-12-02; the reply cast to
    ``ChatCompletion``), so the row is the ceiling of the client and the server, not of any
    auditor work.
    """
    before, server_cpu = server.requests, server.cpu_seconds
    client = openai.AsyncOpenAI(api_key="bench", base_url=server.base_url, max_retries=0, timeout=60.0)
    limiter = asyncio.Semaphore(concurrency)
    tokens = [0, 0]

    async def post(body: dict[str, Any]) -> None:
        async with limiter:
            response = await client.post("/chat/completions", cast_to=ChatCompletion, **_posted(body))
        if response.usage is not None:
            tokens[0] += response.usage.prompt_tokens
            tokens[1] += response.usage.completion_tokens

    try:
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(post(b) for b in bodies))
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    finally:
        await client.close()
    n = len(bodies)
    requests = server.requests - before
    return {
        **_timing(n, seconds, cpu_seconds, n, requests, server.cpu_seconds - server_cpu),
        "calls_per_answer": 1.0,
        "prompt_tokens_per_answer": tokens[0] / n if n else None,
        "completion_tokens_per_answer": tokens[1] / n if n else None,
        "by_kind": {"bare": n},
        "unjudged": None,
        "cascade": None,
        "cache": None,
        "concurrency": concurrency,
        "store": False,
        "decomposer": "rules",  # one request is one unit of the bound
        "cascade_on": False,
        "cache_on": False,
        "bare": True,
    }


async def _audit_fresh(
    path: Path, server: ServerProcess, *, decomposer: Decomposer, concurrency: int, store: bool
) -> dict[str, Any]:
    """A default-settings row (cascade and verdict cache on) in a fresh app directory."""
    with _fresh_home():
        return await _audit(
            path,
            server,
            decomposer=decomposer,
            cascade=True,
            cache=True,
            concurrency=concurrency,
            store=store,
        )


async def _median(repeats: int, measure: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """The run of ``measure`` with the median answers/s out of ``repeats``, the others in ``runs``."""
    rows = [await measure() for _ in range(max(1, repeats))]
    ranked = sorted(rows, key=lambda r: r["answers_per_second"])
    kept = ranked[(len(ranked) - 1) // 2]
    runs = [
        {"answers_per_second": r["answers_per_second"], "cpu_ms_per_answer": r["cpu_ms_per_answer"]}
        for r in rows
    ]
    return {**kept, "runs": runs}


def _bounded(row: dict[str, Any], latency: float) -> dict[str, Any]:
    """``row`` with the ideal and the bound of its mode, and its answers/s as ratios to them."""
    steps = 2 if row["decomposer"] == "llm" else 1  # the LLM decomposer: decompose, then judge
    ideal = row["concurrency"] / latency
    bound = ideal / steps
    return {
        **row,
        "ideal_answers_per_second": ideal,
        "ratio_to_ideal": row["answers_per_second"] / ideal,
        "bound_answers_per_second": bound,
        "ratio_to_bound": row["answers_per_second"] / bound,
    }


async def warm_up(server: ServerProcess, workdir: Path, answers: int, concurrency: int) -> None:
    """Audit ``answers`` records without and with the store, so first-use costs (imports,
    connection set-up) stay out of the figures that follow."""
    warm = workdir / "warm-up.jsonl"
    write_records(warm, answers)
    with _fresh_home():
        for store in (False, True):
            await _audit(
                warm,
                server,
                decomposer="rules",
                cascade=True,
                cache=True,
                concurrency=concurrency,
                store=store,
            )


#: The default-settings modes measured with the store on and with ``--no-store``.
DEFAULT_MODES: list[tuple[str, Decomposer]] = [
    ("rules (CLI default)", "rules"),
    ("fused", "fused"),
    ("llm decomposer", "llm"),
]


async def run(
    workdir: Path,
    *,
    answers: int = 48,
    concurrency: int = 8,
    latency: float = 0.2,
    store_answers: int | None = None,
    concurrencies: tuple[int, ...] = (8, 32),
    repeats: int = 3,
) -> dict[str, Any]:
    path = workdir / "bench-records.jsonl"
    write_records(path, answers)
    # The same number of rounds of requests at every concurrency (a round: C answers in flight).
    per_concurrency = {c: (store_answers or answers) * c // min(concurrencies) for c in concurrencies}
    many: dict[int, Path] = {}
    for c, n in per_concurrency.items():
        many[c] = workdir / f"bench-records-store-{n}.jsonl"
        write_records(many[c], n)
    results: dict[str, Any] = {
        "answers": answers,
        "store_answers": store_answers or answers,
        "store_answers_by_concurrency": {str(c): n for c, n in per_concurrency.items()},
        "concurrency": concurrency,
        "concurrencies": list(concurrencies),
        "latency_seconds": latency,
        "ideal_answers_per_second": concurrency / latency,
        "server": "subprocess",
        "repeats": repeats,
        "modes": {},
    }
    modes: list[tuple[str, Decomposer, bool]] = [
        ("throughput (rules, no cascade)", "rules", False),
        ("separate (llm decomposer, no cascade)", "llm", False),
    ]
    if "fused" in get_args(Decomposer):
        modes.append(("fused", "fused", False))
    else:
        results["fused_note"] = "the pipeline has no fused mode in this version"
    modes.append(("cascade (rules decomposer)", "rules", True))
    with ServerProcess(latency) as server:
        await warm_up(server, workdir, max(concurrencies), concurrency)
        for name, decomposer, cascade in modes:
            with _fresh_home():
                row = await _audit(
                    path, server, decomposer=decomposer, cascade=cascade, cache=False, concurrency=concurrency
                )
            results["modes"][name] = _bounded(row, latency)
        for c in concurrencies:
            for label, decomposer in DEFAULT_MODES:
                if decomposer not in get_args(Decomposer):
                    continue
                bodies: list[dict[str, Any]] = []
                for store in (True, False):
                    since = server.requests
                    measure = partial(
                        _audit_fresh, many[c], server, decomposer=decomposer, concurrency=c, store=store
                    )
                    row = await _median(repeats, measure)
                    if store:  # the first run's requests, as the server received them
                        bodies = server.bodies(since, workdir / "bodies.jsonl")[: row["http_requests"]]
                    name = f"{label}, {'store' if store else '--no-store'}, C = {c}"
                    results["modes"][name] = _bounded(row, latency)
                bare = _bounded(await _median(repeats, partial(_bare, bodies, server, c)), latency)
                results["modes"][f"bare openai.AsyncOpenAI, {label}'s requests, C = {c}"] = bare
                for store in (True, False):
                    row = results["modes"][f"{label}, {'store' if store else '--no-store'}, C = {c}"]
                    row["ratio_to_bare"] = row["ratio_to_bound"] / bare["ratio_to_bound"]
        second: dict[str, Any] = {}
        repeated: list[tuple[str, Decomposer, bool]] = [
            ("cascade (rules decomposer)", "rules", True),
            ("separate (llm decomposer, no cascade)", "llm", False),
        ]
        for name, decomposer, cascade in repeated:
            with _fresh_home():
                first = await _audit(
                    path, server, decomposer=decomposer, cascade=cascade, cache=True, concurrency=concurrency
                )
                again = await _audit(
                    path, server, decomposer=decomposer, cascade=cascade, cache=True, concurrency=concurrency
                )
            second[name] = {
                "first_calls": first["llm_calls"],
                "second_calls": again["llm_calls"],
                "second_http_requests": again["http_requests"],
                "second_by_kind": again["by_kind"],
            }
        results["second_audit"] = second
    return results
