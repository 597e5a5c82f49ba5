"""Reading a large store through the server's read side: the answers page, filters and summary.

A SQLite store is filled with the fixtures' audits (``tests/fixtures/*/openinference.otlp.jsonl``,
offline judge) and then copied ``copies`` times in SQL (each copy a run of its own, its answers a
minute earlier than the previous copy's), so the store holds ``copies`` x 13 answers with their
evidence, claims and verdicts, as ``auditor audit`` writes them. Each query is timed as the
median of ``repeat`` runs through the public store functions the API and pages call
(:func:`auditor.store.list_answers`, :func:`auditor.metrics.summarise` over a filter), once with
migration 0008's indexes and once with them dropped; the figure is the ratio (no index / index),
which travels between machines better than seconds do.

    python -m benchmarks.browse [--copies 1500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, func, insert, literal, select, text

from auditor.metrics import summarise
from auditor.run import audit
from auditor.store import AnswerFilter, Store, iter_answers, list_answers

ROOT = Path(__file__).resolve().parent.parent
TABLES = ("runs", "answers", "evidence", "claims", "verdicts")
INDEXES = ("ix_answers_generated_at", "ix_answers_trace_id")


def build(db_url: str, copies: int) -> int:
    """Audit the fixtures into ``db_url`` and copy the run ``copies - 1`` times; the answers stored."""
    files = sorted((ROOT / "tests" / "fixtures").glob("*/openinference.otlp.jsonl"))
    audit(files, db_url=db_url)
    # SQLite only: strftime() shifts each copy's generation times in SQL.
    with Store(db_url) as store, store.engine.begin() as conn:
        tables = MetaData()
        tables.reflect(conn, only=TABLES)
        for k in range(1, copies):
            suffix = literal(f"-{k}")
            for name in TABLES:
                table = tables.tables[name]
                key = "id" if name == "runs" else "run_id"
                columns = []
                for column in table.columns:
                    if column.name == key:
                        columns.append(column + suffix)
                    elif name == "answers" and column.name == "generated_at":
                        columns.append(func.strftime("%Y-%m-%d %H:%M:%f", column, f"-{k} minutes"))
                    else:
                        columns.append(column)
                source = select(*columns).where(~table.c[key].contains("-"))
                conn.execute(insert(table).from_select([c.name for c in table.columns], source))
        return int(conn.scalar(text("select count(*) from answers")) or 0)


def _median(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def queries(store: Store) -> dict[str, Callable[[], object]]:
    newest = list_answers(store, AnswerFilter(), limit=1).answers[0]
    hour = AnswerFilter(since=newest.generated_at - timedelta(hours=1))
    return {
        "first page (50, newest first)": lambda: list_answers(store, AnswerFilter(), limit=50),
        "verdict + text filter page": lambda: list_answers(
            store, AnswerFilter(verdict="grounded", q="refund"), limit=50
        ),
        "trace id prefix": lambda: list_answers(store, AnswerFilter(trace_id=newest.trace_id[:8]), limit=50),
        "summary of the last hour": lambda: summarise(list(iter_answers(store, hour))),
    }


def run(work: Path, copies: int = 1500, repeat: int = 5) -> dict[str, Any]:
    db_url = f"sqlite:///{work / 'browse.db'}"
    answers = build(db_url, copies)
    with Store(db_url) as store:
        indexed = {name: _median(repeat, q) for name, q in queries(store).items()}
        with store.engine.begin() as conn:
            for index in INDEXES:
                conn.execute(text(f"DROP INDEX {index}"))
        bare = {name: _median(repeat, q) for name, q in queries(store).items()}
    return {
        "answers": answers,
        "repeat": repeat,
        "queries": [
            {"query": n, "indexed_s": indexed[n], "no_index_s": bare[n], "ratio": bare[n] / indexed[n]}
            for n in indexed
        ],
    }


def table(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    rows = [
        [q["query"], f"{q['indexed_s'] * 1000:.1f}", f"{q['no_index_s'] * 1000:.1f}", f"{q['ratio']:.1f}"]
        for q in result["queries"]
    ]
    return ["query", "indexed ms", "no index ms", "ratio (no index / indexed)"], rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        result = run(Path(work), args.copies, args.repeat)
    print(json.dumps(result, indent=2))
    head, rows = table(result)
    print(f"\n{result['answers']} answers, median of {result['repeat']}")
    for row in [head, *rows]:
        print(" | ".join(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
