"""The million-answer benchmark's generator and timing, on a small store of each kind.

The generator writes the rollups itself (the templates' counts times their copies, for speed), so
they are checked here against :func:`auditor.store.rebuild_rollups` on the same answers, and each
answer's own ``counts`` column against :func:`auditor.metrics.answer_counts` of the answer read back; the
timing runs every route once and each must answer 200; the intake's rows the generator adds (a
live server's received traces and audit passes) and the two samples the timing sets for a while are
checked. No figure is asserted against a clock.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select

from auditor.metrics import answer_counts
from auditor.store import AnswerFilter, Intake, Store, list_answers, rebuild_rollups, samples_of
from auditor.store._live import counted
from auditor.store._received import ReceivedSpanRecord, ReceivedTraceRecord
from auditor.store._schema import AnswerRecord, EvidenceRecord, RollupRecord, RunRecord
from benchmarks import bigstore, bigstore_data
from tests.test_store import pg_schema, pg_url  # noqa: F401  (the session's PostgreSQL server)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'big.db'}"
        return
    with pg_schema(request.getfixturevalue("pg_url")) as schema_url:
        yield schema_url


def rows(url: str) -> dict[tuple[Any, ...], tuple[int, dict[str, int]]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(select(RollupRecord.__table__)).mappings().all()
            counted = {
                "answers": conn.scalar(select(func.count()).select_from(AnswerRecord)),
                "runs": conn.scalar(select(func.count()).select_from(RunRecord)),
                "evidence": conn.scalar(select(func.count()).select_from(EvidenceRecord)),
            }
    finally:
        engine.dispose()
    out: dict[tuple[Any, ...], tuple[int, Any]] = {
        (r["key"], r["bucket"], r["start"], r["service"], r["source_class"]): (r["answer_count"], r["counts"])
        for r in found
    }
    out[("tables",)] = (0, counted)
    return out


def test_the_generated_store_holds_the_rollups_a_rebuild_computes(url: str) -> None:
    filled = bigstore_data.fill(url, 300, days=3)
    before = rows(url)
    assert before[("tables",)][1]["answers"] == 300 == filled.answers
    assert before[("tables",)][1]["runs"] == filled.runs == 300 // bigstore_data.RUN_ANSWERS
    assert before[("tables",)][1]["evidence"] > 300
    with Store(url) as store:
        assert rebuild_rollups(store) == filled.rollup_rows
        # Each copy's own counts column: what the answer as read back gives.
        with store.engine.connect() as conn:
            kept = {
                (r, a): c
                for r, a, c in conn.execute(
                    select(AnswerRecord.run_id, AnswerRecord.answer_id, AnswerRecord.counts)
                )
            }
        page = list_answers(store, AnswerFilter(), limit=300)
        assert len(page.answers) == 300
        for run_id, answer in zip(page.run_ids, page.answers, strict=True):
            assert kept[(run_id, answer.answer_id)] == answer_counts(answer), answer.answer_id
    assert rows(url) == before


def test_every_route_answers_on_a_small_generated_store(url: str) -> None:
    filled = bigstore_data.fill(url, 400, days=2)
    timed = bigstore.time_routes(url, filled.end, repeat=2)
    names = list(bigstore.routes(filled.end, "x", [("r", "a")], ["t"]))
    again = [f"two samples: {n}" for n in names if "summary" in n or ("/trend" in n and "day " not in n)]
    assert [r["route"] for r in timed] == names + again
    assert {r["route"]: r["status"] for r in timed} == {r["route"]: 200 for r in timed}
    assert all(r["p95_ms"] >= r["p50_ms"] > 0 for r in timed)


def test_one_sample_times_the_routes_asked_without_the_second_pass(tmp_path: Path) -> None:
    out = tmp_path / "timed.json"
    argv = [
        "--answers",
        "200",
        "--store",
        "sqlite",
        "--routes",
        "api /api/summary",
        "--one-sample",
        "--out",
        str(out),
    ]
    assert bigstore.main(argv) == 0
    timed = json.loads(out.read_text())["stores"][0]["routes"]
    names = [r["route"] for r in timed]
    assert names[0].startswith("baseline") and len(names) > 2
    assert all(n.startswith(("baseline", "api /api/summary")) for n in names)  # none under two samples


def test_the_generated_store_has_a_live_servers_intake_and_two_samples_are_undone(url: str) -> None:
    filled = bigstore_data.fill(url, 200, days=2)
    with Store(url) as store:
        with store.engine.connect() as conn:
            received = int(conn.scalar(select(func.count(func.distinct(ReceivedSpanRecord.trace_id)))) or 0)
            traces = int(conn.scalar(select(func.count()).select_from(ReceivedTraceRecord)) or 0)
        assert 0 < received == traces <= filled.traces
        passes = Intake(store).audits()
        assert len(passes) == traces and all(p.run_id and p.error is None for p in passes)
        assert Intake(store).pending() == 0
        with store.engine.begin() as conn:
            assert bigstore_data.fill_intake(conn) == 0  # already there: nothing added
        runs = store.list_runs(1000)
        rollups = select(RollupRecord.__table__).order_by(RollupRecord.key)
        with store.engine.connect() as conn:
            before = conn.execute(rollups).all()
        with bigstore.two_samples(store):
            shares, capped = samples_of(store, AnswerFilter(), filled.answers)
            assert (shares, capped) == counted(store, AnswerFilter())  # the rollups follow the runs
            assert sorted(s.answers for s in shares) == [100, 100]  # half the runs each
            assert (
                capped.answers
                == sum(  # the runs whose id ends in 00
                    1 for r in runs if r.id.endswith("00")
                )
                * bigstore_data.RUN_ANSWERS
            )
        assert store.list_runs(1000) == runs
        with store.engine.connect() as conn:
            assert conn.execute(rollups).all() == before
