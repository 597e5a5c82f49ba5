"""Every page and API route of ``auditor serve`` over a store of a million answers, on SQLite and PostgreSQL.

The store is filled by :mod:`benchmarks.bigstore_data` (real audited answers copied in bulk, with
evidence, claims, verdicts, received spans naming a service, and the rollups). The application is
the server's own (:func:`auditor.serve.create_app` on the store), driven in this process through
Starlette's test client, so a figure is the route's own work (SQL, metrics, templates), without a
socket. Each route is asked ``repeat`` times after one warm-up request (the answer routes a
different answer each time); p50 and p95 are reported, and the p95 as a ratio to ``/healthz``'s
p95 measured in the same run (the framework and one indexed query: the baseline). A route whose
first request takes over :data:`SLOW_S` is asked :data:`SLOW_REPEAT` times (its p95 is then about
its slowest). The summaries and hourly trends are then timed again with half the runs under
another sample and one in a hundred capped (:func:`two_samples`, which rebuilds the rollups, keyed
by each run's sample and cap, and undoes it all afterwards): the ``sample`` block beside every
figure counts the answers per sample and cap.

    python -m benchmarks --only bigstore                          # 1,000,000 answers, both stores
    python -m benchmarks.bigstore --answers 100000 --store sqlite  # one store, smaller
    python -m benchmarks.bigstore --keep /tmp/big --fill-only     # fill and keep both stores
    python -m benchmarks.bigstore --keep /tmp/big --routes summary  # time the kept stores again, some routes
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, make_url, text

from auditor.store import Store, upgrade
from benchmarks.bigstore_data import QUESTION_TYPES, SERVICES, Filled, fill, fill_intake
from benchmarks.tables import markdown_table

PG_URL = os.environ.get("AUDITOR_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
ANSWERS = 1_000_000
QUICK_ANSWERS = 5_000
REPEAT = 20
#: The target of issue 33: every route under this at p95 with a million answers.
TARGET_MS = 300.0
#: A route whose warm-up request takes longer than this is asked only SLOW_REPEAT times.
SLOW_S = 1.0
SLOW_REPEAT = 5
#: Where :func:`two_samples` keeps the rollups of one sample while it times the store under two.
SAVED_ROLLUPS = "bench_saved_rollups"


@contextmanager
def pg_schema(base_url: str) -> Iterator[str]:
    """A URL whose connections see only a new schema of their own, dropped afterwards."""
    schema = f"bigstore_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base_url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(base_url).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def pg_available(url: str = PG_URL) -> str | None:
    """None when PostgreSQL answers at ``url``, else why not."""
    try:
        engine = create_engine(url, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(text("select 1"))
        engine.dispose()
    except Exception as err:
        return f"PostgreSQL at {make_url(url).render_as_string()} is not available ({type(err).__name__})"
    return None


def routes(
    end: Any, policy_sha: str, answer_ids: list[tuple[str, str]], trace_ids: list[str]
) -> dict[str, list[str]]:
    """Each route's name -> the URLs its repeats ask (one per repeat)."""
    week = (end - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%S")
    last_hour = (end - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    last_day = (end - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S")
    inside = (end - timedelta(hours=6, minutes=30)).strftime("%Y-%m-%dT%H:%M:%S")
    one = [f"/answers/{a}?run={r}" for r, a in answer_ids]
    return {
        "baseline: GET /healthz": ["/healthz"],
        "page / (newest 50)": ["/"],
        "page / verdict=ungrounded": ["/?verdict=ungrounded"],
        "page / source_class + question_type": ["/?source_class=tool-results&question_type=billing"],
        f"page / service={SERVICES[2]}": [f"/?service={SERVICES[2]}"],
        "page / q=refund": ["/?q=refund"],
        "page /answers/{id}": one,
        "page /answers/{id}/attribution": [f"{u.split('?')[0]}/attribution?{u.split('?')[1]}" for u in one],
        "page /trend?bucket=hour": ["/trend?bucket=hour"],
        "page /trend?bucket=day": ["/trend?bucket=day"],
        "page /trend day, policy + service": [f"/trend?bucket=day&policy=permissive&service={SERVICES[0]}"],
        "page /trend?bucket=day outcome=excluded": ["/trend?bucket=day&outcome=excluded"],
        "page /trend?bucket=hour verdict=ungrounded": ["/trend?bucket=hour&verdict=ungrounded"],
        "page /trend?bucket=day verdict=ungrounded": ["/trend?bucket=day&verdict=ungrounded"],
        "page /trend?bucket=hour verdict + outcome": [
            "/trend?bucket=hour&verdict=ungrounded&outcome=excluded"
        ],
        # Filters the rollups cannot express: the answers' counts summed per hour or day.
        "page /trend?bucket=day q=refund (answers' counts)": ["/trend?bucket=day&q=refund"],
        "page /runs": ["/runs"],
        "page /policy": ["/policy"],
        "page /login": ["/login"],
        "api /api/answers": ["/api/answers"],
        "api /api/answers verdict + question_type": ["/api/answers?verdict=grounded&question_type=billing"],
        "api /api/answers/{id}": [f"/api/answers/{a}?run_id={r}" for r, a in answer_ids],
        "api /api/runs": ["/api/runs"],
        "api /api/audits": ["/api/audits"],
        "api /api/audits?trace_id=": [f"/api/audits?trace_id={t}" for t in trace_ids],
        "api /api/budget": ["/api/budget"],
        "api /api/summary": ["/api/summary"],
        "api /api/summary policy + question_type": [
            f"/api/summary?policy={policy_sha[:12]}&question_type={QUESTION_TYPES[1]}"
        ],
        "api /api/summary source_class": ["/api/summary?source_class=tool-results"],
        f"api /api/summary service={SERVICES[1]}": [f"/api/summary?service={SERVICES[1]}"],
        "api /api/summary last 7 days": [f"/api/summary?since={week}"],
        "api /api/summary outcome, last day": [f"/api/summary?outcome=excluded&since={last_day}"],
        "api /api/summary verdict, last hour": [f"/api/summary?verdict=grounded&since={last_hour}"],
        "api /api/summary verdict, last day": [f"/api/summary?verdict=ungrounded&since={last_day}"],
        "api /api/summary verdict + outcome, last day": [
            f"/api/summary?verdict=ungrounded&outcome=excluded&since={last_day}"
        ],
        # Filters the rollups cannot answer: the sum of the matching answers' counts column.
        "api /api/summary q, last day (answers' counts)": [f"/api/summary?q=refund&since={last_day}"],
        "api /api/summary bound inside an hour (answers' counts)": [f"/api/summary?since={inside}"],
        "api /api/summary run_id (answers' counts)": [f"/api/summary?run_id={r}" for r, _ in answer_ids],
    }


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@contextmanager
def two_samples(store: Any) -> Iterator[None]:
    """Half the stored runs audited under a 50% sample, one run in a hundred capped; undone afterwards.

    The rollups are keyed by each run's sample and cap: they are rebuilt after the runs change
    (the time it took is printed) and put back as they were afterwards (a copy kept meanwhile).
    """
    from sqlalchemy import func, select, update

    from auditor.store import rebuild_rollups
    from auditor.store._schema import RunRecord

    with store.engine.begin() as conn:
        conn.execute(text(f"CREATE TABLE {SAVED_ROLLUPS} AS SELECT * FROM answer_rollups"))
        runs = int(conn.scalar(select(func.count()).select_from(RunRecord)) or 0)
        half = f"run-{runs // 2:07d}"
        conn.execute(
            update(RunRecord).where(RunRecord.id < half).values(sampling={"share": 0.5, "filter": None})
        )
        cap = {"limit": "1000000 tokens a day", "hit_at": "2026-11-20T12:00:00+00:00"}
        conn.execute(update(RunRecord).where(RunRecord.id.like("run-%00")).values(cap=cap))
    try:
        began = time.perf_counter()
        rebuild_rollups(store)
        print(f"  two samples: rollups rebuilt in {time.perf_counter() - began:.1f} s", flush=True)
        yield
    finally:
        with store.engine.begin() as conn:
            conn.execute(update(RunRecord).values(sampling=None, cap=None))
            conn.execute(text("DELETE FROM answer_rollups"))
            conn.execute(text(f"INSERT INTO answer_rollups SELECT * FROM {SAVED_ROLLUPS}"))
            conn.execute(text(f"DROP TABLE {SAVED_ROLLUPS}"))


def _time(client: Any, urls: dict[str, list[str]], repeat: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, asked in urls.items():
        began = time.perf_counter()
        status = client.get(asked[0]).status_code  # warm-up (and a check)
        # A route far over the target (seconds) is asked fewer times: its p95 is then its slowest.
        times: list[float] = []
        count = repeat if time.perf_counter() - began < SLOW_S else min(repeat, SLOW_REPEAT)
        for i in range(count):
            began = time.perf_counter()
            response = client.get(asked[i % len(asked)])
            times.append((time.perf_counter() - began) * 1000)
            status = max(status, response.status_code)
        out.append(
            {
                "route": name,
                "status": status,
                "p50_ms": _percentile(times, 0.5),
                "p95_ms": _percentile(times, 0.95),
                "mean_ms": statistics.fmean(times),
                "repeat": count,
            }
        )
        print(f"  {name}: p50 {out[-1]['p50_ms']:.1f} p95 {out[-1]['p95_ms']:.1f} ms", flush=True)
    return out


def time_routes(
    db_url: str, end: Any, repeat: int, only: tuple[str, ...] = (), samples: bool = True
) -> list[dict[str, Any]]:
    """Every route's p50 and p95 (ms) over ``repeat`` requests after a warm-up, and its p95 / the baseline's.

    ``only``: the routes whose name holds one of these (and the baseline). ``samples``: then the
    summaries and trends again with the runs under two samples and some capped (:func:`two_samples`).
    """
    from fastapi.testclient import TestClient

    from auditor.serve import create_app, serve_config
    from auditor.serve._server import receivers
    from auditor.store import AnswerFilter, Intake, list_answers

    rng = random.Random(7)
    with Store(db_url) as store:
        # A spread of answers for the answer routes: one an hour, at random hours of the last 30 days.
        picked: list[tuple[str, str]] = []
        for hours_back in rng.sample(range(1, 30 * 24), k=repeat * 3):
            since = end - timedelta(hours=hours_back)
            page = list_answers(store, AnswerFilter(since=since, until=since + timedelta(hours=1)), limit=1)
            picked.extend(zip(page.run_ids, (a.answer_id for a in page.answers), strict=True))
            if len(picked) == repeat:
                break
        if not picked:
            page = list_answers(store, AnswerFilter(), limit=repeat)
            picked = list(zip(page.run_ids, (a.answer_id for a in page.answers), strict=True))
        policy_sha = store.list_runs(1)[0].policy.sha256  # type: ignore[union-attr]
        found = {a.answer_id: a.trace_id for a in list_answers(store, AnswerFilter(), limit=repeat).answers}
        urls = routes(end, policy_sha, picked[:repeat] or [("none", "none")], list(found.values()))
        if only:
            urls = {k: v for i, (k, v) in enumerate(urls.items()) if i == 0 or any(o in k for o in only)}
        app = create_app(serve_config(db_url=db_url, quiet=3600.0), store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as client:
            out = _time(client, urls, repeat)
            if samples:
                # The samples behind the figures when the runs do not all share one: half the runs
                # under another sample, one in a hundred judged offline by a spending cap.
                with two_samples(store):
                    again = {
                        k: v for k, v in urls.items() if "summary" in k or ("/trend" in k and "day " not in k)
                    }
                    out += [
                        {**r, "route": f"two samples: {r['route']}"} for r in _time(client, again, repeat)
                    ]
    base = out[0]["p95_ms"]
    for row in out:
        row["p95_over_baseline"] = row["p95_ms"] / base
    return out


@contextmanager
def kept_schema(base_url: str, name: str) -> Iterator[str]:
    """A URL whose connections see only the schema ``name`` (made when missing), left in place afterwards."""
    admin = create_engine(base_url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{name}"'))
    admin.dispose()
    yield (
        make_url(base_url)
        .update_query_dict({"options": f"-csearch_path={name}"})
        .render_as_string(hide_password=False)
    )


def _kept_fill(url: str, answers: int, keep: Path | None) -> Filled:
    """``fill`` the store at ``url``, or, when ``keep`` names where a filled one is kept, what it holds.

    A kept store was filled by an earlier run with the same ``answers`` (its note beside the SQLite
    file or the schema says what :func:`fill` wrote); the code timed may have changed since.
    """
    if keep is None:
        return fill(url, answers)
    note = keep / f"{make_url(url).get_backend_name()}-{answers}.json"
    if note.exists():
        saved = json.loads(note.read_text())
        upgrade(url)  # a store kept from an earlier schema
        with Store(url) as store, store.engine.begin() as conn:
            fill_intake(conn)  # a store kept from before the fill wrote the intake's rows
        return Filled(**{**saved, "end": datetime.fromisoformat(saved["end"])})
    filled = fill(url, answers)
    note.write_text(json.dumps(vars(filled), default=str))
    return filled


def one_store(
    kind: str,
    work: Path,
    answers: int,
    repeat: int,
    keep: Path | None = None,
    fill_only: bool = False,
    only: tuple[str, ...] = (),
    samples: bool = True,
) -> dict[str, Any]:
    reused = keep is not None and (keep / f"{kind}-{answers}.json").exists()
    if kind == "sqlite":
        path = (keep or work) / f"bigstore-{answers}.db"
        url = f"sqlite:///{path}"
        filled = _kept_fill(url, answers, keep)
        timed = [] if fill_only else time_routes(url, filled.end, repeat, only, samples)
        size = path.stat().st_size
        if keep is None:
            path.unlink()
    else:
        schemas = kept_schema(PG_URL, f"bigstore_keep_{answers}") if keep else pg_schema(PG_URL)
        with schemas as url:
            filled = _kept_fill(url, answers, keep)
            timed = [] if fill_only else time_routes(url, filled.end, repeat, only, samples)
            engine = create_engine(url)
            with engine.connect() as conn:
                size = int(
                    conn.scalar(
                        text(
                            "select sum(pg_total_relation_size(c.oid)) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'"
                        )
                    )
                    or 0
                )
            engine.dispose()
    return {
        "store": kind,
        "answers": filled.answers,
        "runs": filled.runs,
        "traces": filled.traces,
        "rollup_rows": filled.rollup_rows,
        "fill_seconds": filled.seconds,
        "reused_store": reused,
        "store_mb": size / 1e6,
        "repeat": repeat,
        "routes": timed,
        "over_target": [r["route"] for r in timed if r["p95_ms"] > TARGET_MS],
    }


def run(
    work: Path,
    quick: bool,
    stores: tuple[str, ...] = ("sqlite", "postgresql"),
    answers: int | None = None,
    keep: Path | None = None,
    fill_only: bool = False,
    only: tuple[str, ...] = (),
    samples: bool = True,
) -> dict[str, Any]:
    count = answers or (QUICK_ANSWERS if quick else ANSWERS)
    repeat = 5 if quick else REPEAT
    results: dict[str, Any] = {"answers": count, "target_p95_ms": TARGET_MS, "stores": [], "skipped": {}}
    for kind in stores:
        if kind == "postgresql" and (why := pg_available()) is not None:
            results["skipped"][kind] = why
            continue
        results["stores"].append(one_store(kind, work, count, repeat, keep, fill_only, only, samples))
    return results


def table(result: dict[str, Any]) -> tuple[str, list[str], list[list[str]]]:
    """The section's title, header and rows: a route a row, a store a column."""
    stores = result["stores"]
    head = ["route"] + [f"{s['store']} p50 / p95 ms (p95 / baseline)" for s in stores]
    rows = []
    for i, route in enumerate(stores[0]["routes"] if stores else []):
        cells = [route["route"]]
        for s in stores:
            r = s["routes"][i]
            cells.append(f"{r['p50_ms']:.1f} / {r['p95_ms']:.1f} ({r['p95_over_baseline']:.1f}x)")
        rows.append(cells)
    title = f"Pages and API routes over {result['answers']:,} answers (p50 / p95 ms; p95 / baseline p95)"
    return title, head, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=ANSWERS)
    parser.add_argument("--store", choices=["sqlite", "postgresql"], action="append")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the filled stores (the SQLite file in DIR, the PostgreSQL schema bigstore_keep_N) and "
        "time them again on the next run with the same --keep and --answers instead of refilling",
    )
    parser.add_argument(
        "--routes",
        action="append",
        default=[],
        metavar="TEXT",
        help="time only the routes whose name holds TEXT",
    )
    parser.add_argument("--fill-only", action="store_true", help="with --keep: fill the stores, time nothing")
    parser.add_argument(
        "--one-sample",
        action="store_true",
        help="skip the second pass under two samples (it rebuilds the rollups: some 20 minutes a store at 1M)",
    )
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        result = run(
            Path(work),
            False,
            tuple(args.store or ("sqlite", "postgresql")),
            args.answers,
            args.keep,
            args.fill_only,
            tuple(args.routes),
            not args.one_sample,
        )
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(markdown_table(*table(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
