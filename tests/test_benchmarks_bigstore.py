"""The million-answer benchmark's generator and timing, on a small store of each kind.

The generator writes the rollups itself (the templates' counts times their copies, for speed), so
they are checked here against :func:`auditor.store.rebuild_rollups` on the same answers; the
timing runs every route once and each must answer 200. No figure is asserted against a clock.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select

from auditor.store import Store, rebuild_rollups
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
    assert rows(url) == before


def test_every_route_answers_on_a_small_generated_store(url: str) -> None:
    filled = bigstore_data.fill(url, 400, days=2)
    timed = bigstore.time_routes(url, filled.end, repeat=2)
    assert [r["route"] for r in timed] == list(bigstore.routes(filled.end, "x", [("r", "a")]))
    assert {r["route"]: r["status"] for r in timed} == {r["route"]: 200 for r in timed}
    assert all(r["p95_ms"] >= r["p50_ms"] > 0 for r in timed)
