"""What the rollups cost on the answer write path of an offline audit (issue 33, migration 0023).

One ``auditor audit DEV --format records --judge offline --json -`` with the store on (click's runner,
in this process, as :mod:`benchmarks.e2e` runs it), in a fresh store: a SQLite file in a new
``AUDITOR_HOME``, or a new PostgreSQL schema (``--pg URL``). Timers wrap the store writer's
transactions (``StoreWriter._run``: the session, every write, the commit), ``Store.write_answers``,
``_rollups.record`` and, inside it, ``_rollups.deltas`` and ``_rollups.apply``; each takes the
writer thread's CPU time (``time.thread_time``) and the wall time. The process's whole CPU time
and the audit's wall time are given beside them.

It imports ``auditor`` from ``sys.path`` and nothing from ``benchmarks``, so it measures whichever
checkout ``PYTHONPATH`` names (the commit before 0023 as well as main)::

    PYTHONPATH=/work/wt/pre0023 python benchmarks/rollup_writes.py DEV [--pg URL]

and prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

Timers = dict[str, dict[str, float]]


def _timed(timers: Timers, name: str, wrapped: Callable[..., Any]) -> Callable[..., Any]:
    slot = timers.setdefault(name, {"calls": 0, "cpu": 0.0, "wall": 0.0})

    def timer(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return wrapped(*args, **kwargs)
        finally:
            slot["cpu"] += time.thread_time() - cpu
            slot["wall"] += time.perf_counter() - wall
            slot["calls"] += 1

    return timer


@contextmanager
def _pg_schema(base_url: str) -> Iterator[str]:
    """A URL whose connections see only a new schema of their own, dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"rollupw_{uuid.uuid4().hex[:10]}"
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


_ORIGINAL: dict[str, Callable[..., Any]] = {}


def _instrument(timers: Timers, rows: list[int]) -> None:
    from auditor.store import _rollups, _store, _writer

    _ORIGINAL.update(record=_rollups.record, deltas=_rollups.deltas, apply=_rollups.apply)
    _writer.StoreWriter._run = _timed(timers, "transaction", _writer.StoreWriter._run)  # type: ignore[method-assign]
    _store.Store.write_answers = _timed(timers, "write_answers", _store.Store.write_answers)  # type: ignore[method-assign]
    # write_answers calls rollups.record through the module, record calls deltas and apply by name.
    _rollups.record = _timed(timers, "rollups_record", _rollups.record)
    _rollups.deltas = _timed(timers, "rollups_deltas", _rollups.deltas)
    apply = _rollups.apply

    def counted(session: Any, changes: Any, sign: int = 1) -> None:
        rows.append(sum(1 for c in changes.values() if c))
        apply(session, changes, sign)

    _rollups.apply = _timed(timers, "rollups_apply", counted)


def audit(dev: Path, pg: str | None) -> dict[str, Any]:
    timers: Timers = {}
    rows: list[int] = []
    _instrument(timers, rows)
    from click.testing import CliRunner

    from auditor.cli import cli
    from auditor.store import Store

    with tempfile.TemporaryDirectory() as home:
        os.environ["AUDITOR_HOME"] = home
        with _pg_schema(pg) if pg else _no_schema() as url:
            if url:
                os.environ["AUDITOR_DB_URL"] = url
            Store(url, upgrade=True).close() if url else Store().close()
            for slot in timers.values():  # the migration's own writes (0023's fill) are not the audit's
                slot.update(calls=0, cpu=0.0, wall=0.0)
            rows.clear()
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu, wall = time.process_time(), time.perf_counter()
            out = CliRunner().invoke(
                cli, ["audit", str(dev), "--format", "records", "--judge", "offline", "--json", "-"]
            )
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            after = resource.getrusage(resource.RUSAGE_SELF)
            if out.exit_code not in (0, 3):
                raise RuntimeError(f"auditor audit exited {out.exit_code}: {out.output[-2000:]}")
            with Store(url) if url else Store() as store:
                counted = store.engine.connect()
                from sqlalchemy import text

                rollup_rows = counted.scalar(text("select count(*) from answer_rollups"))
                answers = counted.scalar(text("select count(*) from answers"))
                counted.close()
                alone = _record_alone(store)
    answer_count = int(answers or 0)
    per = {
        name: {
            "calls": t["calls"],
            "cpu_ms_per_answer": 1000 * t["cpu"] / answer_count,
            "wall_ms_per_answer": 1000 * t["wall"] / answer_count,
            "cpu_s": t["cpu"],
            "wall_s": t["wall"],
        }
        for name, t in timers.items()
    }
    return {
        "backend": "postgresql" if pg else "sqlite",
        "answers": answer_count,
        "rollup_rows_in_table": int(rollup_rows or 0),
        "rollup_rows_written": sum(rows),
        "audit_wall_s": wall,
        "audit_cpu_s": cpu,
        "audit_cpu_s_rusage": (after.ru_utime + after.ru_stime) - (usage.ru_utime + usage.ru_stime),
        "timers": per,
        "record_share_of_write_answers_cpu": timers["rollups_record"]["cpu"] / timers["write_answers"]["cpu"],
        "record_share_of_transaction_cpu": timers["rollups_record"]["cpu"] / timers["transaction"]["cpu"],
        "record_share_of_transaction_wall": timers["rollups_record"]["wall"] / timers["transaction"]["wall"],
        "record_alone": alone,
        "loadavg": os.getloadavg(),
    }


#: Answers per ``record`` call in :func:`_record_alone`: one (a transaction per answer, as a
#: server with one answer ready at a time) and :data:`auditor.store._writer.BATCH`.
ALONE_BATCHES = (1, 64)
ALONE_PASSES = 5


def _record_alone(store: Any) -> dict[str, Any]:
    """``_rollups.record`` of the audit's stored answers again, ``size`` answers a call, each call in
    a transaction rolled back (the rows are as the audit left them every time): CPU and wall ms per
    answer (the best of :data:`ALONE_PASSES` passes), and ``deltas``' CPU alone."""
    from sqlalchemy import select

    from auditor.store import _rollups
    from auditor.store._schema import RunRecord

    # The functions as they are, without the audit's timers.
    record, deltas = _ORIGINAL["record"], _ORIGINAL["deltas"]
    _rollups.deltas, _rollups.apply = deltas, _ORIGINAL["apply"]
    out: dict[str, Any] = {}
    with store._session() as session:
        run_id = session.scalars(select(RunRecord.id)).one()
        answers = _rollups.stored(session, run_id)
        dims = _rollups.run_dimensions(session, run_id)
    for size in ALONE_BATCHES:
        batches = [answers[i : i + size] for i in range(0, len(answers), size)]
        best_cpu = best_wall = best_deltas = float("inf")
        for _ in range(ALONE_PASSES):
            cpu, wall = time.process_time(), time.perf_counter()
            for batch in batches:
                session = store._sessions()
                try:
                    record(session, run_id, batch)
                finally:
                    session.rollback()
                    session.close()
            best_cpu = min(best_cpu, time.process_time() - cpu)
            best_wall = min(best_wall, time.perf_counter() - wall)
            cpu = time.process_time()
            for batch in batches:
                deltas(dims, batch, {})
            best_deltas = min(best_deltas, time.process_time() - cpu)
        out[str(size)] = {
            "record_cpu_ms_per_answer": 1000 * best_cpu / len(answers),
            "record_wall_ms_per_answer": 1000 * best_wall / len(answers),
            "deltas_cpu_ms_per_answer": 1000 * best_deltas / len(answers),
        }
    return out


@contextmanager
def _no_schema() -> Iterator[None]:
    yield None


_FIGURES = (
    ("transaction", "cpu_ms_per_answer"),
    ("transaction", "wall_ms_per_answer"),
    ("write_answers", "cpu_ms_per_answer"),
    ("write_answers", "wall_ms_per_answer"),
    ("rollups_record", "cpu_ms_per_answer"),
    ("rollups_record", "wall_ms_per_answer"),
    ("rollups_deltas", "cpu_ms_per_answer"),
    ("rollups_apply", "cpu_ms_per_answer"),
    ("rollups_apply", "wall_ms_per_answer"),
)


def compare(dev: Path, trees: dict[str, str], repeats: int, pg: str | None) -> dict[str, Any]:
    """Each checkout's audit in its own process, the checkouts interleaved repeat after repeat;
    the median of each figure."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(repeats):
        for name, tree in trees.items():
            command = [sys.executable, __file__, str(dev), *(["--pg", pg] if pg else [])]
            env = {**os.environ, "PYTHONPATH": tree}
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout))
    out: dict[str, Any] = {}
    for name, measured in runs.items():
        medians: dict[str, Any] = {
            f"{timer}.{figure}": statistics.median(r["timers"][timer][figure] for r in measured)
            for timer, figure in _FIGURES
        }
        for figure in (
            "audit_cpu_s",
            "audit_wall_s",
            "record_share_of_transaction_cpu",
            "record_share_of_write_answers_cpu",
        ):
            medians[figure] = statistics.median(r[figure] for r in measured)
        out[name] = {
            "tree": trees[name],
            "answers": measured[0]["answers"],
            "rollup_rows_in_table": measured[0]["rollup_rows_in_table"],
            "rollup_rows_written": statistics.median(r["rollup_rows_written"] for r in measured),
            "median": medians,
            "runs": measured,
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev", type=Path)
    parser.add_argument("--pg", default=None, help="a PostgreSQL URL: the store is a new schema there")
    parser.add_argument("--tree", action="append", default=[], help="NAME=CHECKOUT: compare checkouts")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.tree:
        trees = dict(t.split("=", 1) for t in args.tree)
        json.dump(compare(args.dev, trees, args.repeats, args.pg), sys.stdout)
    else:
        json.dump(audit(args.dev, args.pg), sys.stdout)
    print()


if __name__ == "__main__":
    main()
