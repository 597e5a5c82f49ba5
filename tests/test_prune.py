"""Retention (``auditor db prune`` and :func:`auditor.store.prune`) on SQLite and PostgreSQL.

A store holds four real runs (fixture traces audited with the offline judge) and three received
traces, moved back in time by SQL so each rule has something to reach: run A old and finished
(pruned, with its answers and kept traces), run B recent (kept), run C old but still ``running``
(kept: resumable), run D old but the latest audit of a received trace that is kept (kept); the
received trace R1 old and audited (pruned), R2 old but pending (kept), R3 recent (kept). Expected
counts are read from the store's rows before pruning, not from the pruner. The hourly rollups
still count every answer afterwards: figures outlive the rows they were made from.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from auditor.cli import cli
from auditor.errors import UsageError
from auditor.run import audit
from auditor.store import BodyQueue, Intake, Retention, Skipped, Store, parse_age, prune, upgrade
from auditor.store._runs import now
from auditor.trace import ReceivedSpan
from tests.conftest import FIXTURES
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (SQLite and PostgreSQL stores)

OLD, RECENT = timedelta(days=100), timedelta(days=1)
TABLES = (
    "runs",
    "answers",
    "claims",
    "traces",
    "trace_contents",
    "received_spans",
    "received_traces",
    "trace_audits",
)
RULES = Retention(spans=timedelta(days=7), answers=timedelta(days=90))


def _run(db: str, scenario: str) -> str:
    return audit([FIXTURES / scenario / "openinference.otlp.jsonl"], db_url=db).run.id


def _spans(trace_id: str, count: int) -> list[ReceivedSpan]:
    return [ReceivedSpan(trace_id, f"{n + 1:016x}", None, 1, "{}") for n in range(count)]


def _rolled_up(db: str) -> int:
    """Answers the hourly rollups count (each answer once, in its ``*`` / ``*`` / ``*`` / ``*`` slice)."""
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            query = (
                "select coalesce(sum(answer_count), 0) from answer_rollups "
                "where bucket = 'hour' and service = '*' and source_class = '*' and outcome = '*' and verdict = '*'"
            )
            return int(conn.scalar(text(query)) or 0)
    finally:
        engine.dispose()


def _counts(db: str) -> dict[str, int]:
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            counts = {table: int(conn.scalar(text(f"select count(*) from {table}")) or 0) for table in TABLES}
    finally:
        engine.dispose()
    with Store(db) as store, store.bodies_engine.connect() as conn:  # a SQLite store's are in a file apart
        counts["received_bodies"] = int(conn.scalar(text("select count(*) from received_bodies")) or 0)
    return counts


@pytest.fixture
def store_with_ages(db_url: str) -> tuple[str, dict[str, str], dict[str, int]]:  # noqa: F811
    """The store described in the module docstring; the run ids, and what run A holds."""
    upgrade(db_url)
    runs = {
        "A": _run(db_url, "single_retrieval"),
        "B": _run(db_url, "refusal"),
        "C": _run(db_url, "changed_figure"),
        "D": _run(db_url, "user_message_support"),
    }
    with Store(db_url) as store:
        intake = Intake(store)
        intake.receive(_spans("a1" * 16, 3) + _spans("a2" * 16, 2) + _spans("a3" * 16, 4))
        BodyQueue(store).put("otlp-proto", b"\x0a\x00", 1)  # acknowledged, not yet read
        at = now()
        with store.bodies_engine.begin() as conn:
            conn.execute(text("update received_bodies set received_at = :t"), {"t": at - OLD})
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            for run in ("A", "C", "D"):
                conn.execute(
                    text("update runs set started_at = :t, finished_at = :t where id = :id"),
                    {"t": at - OLD, "id": runs[run]},
                )
            conn.execute(
                text("update runs set status = 'running', finished_at = null where id = :id"),
                {"id": runs["C"]},
            )
            conn.execute(text("update traces set first_seen_at = :t"), {"t": at - OLD})
            audited = "update received_traces set audited_generation = generation, run_id = :run, last_span_at = :t where trace_id = :id"
            conn.execute(text(audited), {"run": runs["A"], "t": at - timedelta(days=10), "id": "a1" * 16})
            conn.execute(text(audited), {"run": runs["D"], "t": at - RECENT, "id": "a3" * 16})
            conn.execute(
                text("update received_traces set last_span_at = :t where trace_id = :id"),
                {"t": at - timedelta(days=10), "id": "a2" * 16},
            )
            held = {
                "answers": conn.scalar(
                    text("select count(*) from answers where run_id = :id"), {"id": runs["A"]}
                ),
                "traces": conn.scalar(
                    text("select count(*) from run_traces where run_id = :id"), {"id": runs["A"]}
                ),
                "other traces": conn.scalar(
                    text("select count(distinct trace_key) from run_traces where run_id <> :id"),
                    {"id": runs["A"]},
                ),
            }
    finally:
        engine.dispose()
    assert all(held.values()), held
    return db_url, runs, {k: int(v or 0) for k, v in held.items()}


def test_prune_deletes_what_is_old_and_says_what_it_kept_and_why(
    store_with_ages: tuple[str, dict[str, str], dict[str, int]],
) -> None:
    db, runs, held = store_with_ages
    before = _counts(db)
    assert _rolled_up(db) == before["answers"]
    expected = {
        "received traces": 1,  # R1: old and audited
        "received spans": 3,
        "runs": 1,  # A
        "answers": held["answers"],
        "kept traces": held["traces"],
    }
    kept = (
        Skipped("received traces", 1, "waiting for an audit (or held by a worker)"),
        Skipped("received bodies", 1, "acknowledged, not yet read into spans"),
        Skipped("runs", 1, "still running, or interrupted and resumable"),
        Skipped("runs", 1, "the latest audit of a received trace that is kept (--spans)"),
        Skipped(
            "kept traces", held["other traces"], "read by a stored run (they go once its answers are pruned)"
        ),
    )
    with Store(db) as store:
        dry = prune(store, RULES, dry_run=True)
        assert dry.dry_run and dry.pruned == expected and dry.skipped == kept
        assert _counts(db) == before  # a dry run deletes nothing
        done = prune(store, RULES)
        assert not done.dry_run and done.pruned == expected and done.skipped == kept
        assert prune(store, RULES).pruned == {k: 0 for k in expected}  # nothing left to prune
    after = _counts(db)
    assert after["runs"] == before["runs"] - 1 and after["answers"] == before["answers"] - held["answers"]
    assert after["traces"] == before["traces"] - held["traces"] == after["trace_contents"]
    assert after["received_spans"] == before["received_spans"] - 3 and after["received_traces"] == 2
    assert after["received_bodies"] == 1
    assert _rolled_up(db) == before["answers"]  # rollups outlive the answers they counted
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            left = set(conn.scalars(text("select id from runs")))
            orphans = conn.scalar(
                text(
                    "select count(*) from claims where not exists (select 1 from answers a where a.run_id = claims.run_id)"
                )
            )
    finally:
        engine.dispose()
    assert left == {runs["B"], runs["C"], runs["D"]} and orphans == 0


def test_the_cli_prints_the_counts_and_the_reasons(
    store_with_ages: tuple[str, dict[str, str], dict[str, int]],
) -> None:
    db, _, held = store_with_ages
    before = _counts(db)
    result = CliRunner().invoke(
        cli, ["db", "prune", "--db", db, "--spans", "7d", "--answers", "90d", "--dry-run"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == (
        f"Would prune: 1 received traces, 3 received spans, 1 runs, {held['answers']} answers, "
        f"{held['traces']} kept traces"
    )
    assert "Kept 1 received traces: waiting for an audit (or held by a worker)." in lines
    assert "Kept 1 runs: still running, or interrupted and resumable." in lines
    assert _counts(db) == before
    nothing = CliRunner().invoke(cli, ["db", "prune", "--db", db])
    assert nothing.exit_code == 2 and "--spans, --answers or --traces" in nothing.output


def test_ages_are_a_number_and_a_unit() -> None:
    assert parse_age("7d") == timedelta(days=7)
    assert parse_age("12h") == timedelta(hours=12)
    assert parse_age("2w") == timedelta(days=14)
    assert parse_age("90 m") == timedelta(minutes=90)
    for bad in ("7", "d", "-1d", "0d", "7 days", ""):
        with pytest.raises(UsageError, match="not an age"):
            parse_age(bad)


def test_serve_prunes_on_its_own_when_a_retention_age_is_set(tmp_path: Path) -> None:
    """``AUDITOR_RETAIN_SPANS`` on a running server: an old audited received trace goes at start-up."""
    from tests.support.serve import running_server

    db = f"sqlite:///{tmp_path / 'serve.db'}"
    upgrade(db)
    with Store(db) as store:
        Intake(store).receive(_spans("b1" * 16, 2))
    engine = create_engine(db)
    try:
        with engine.begin() as conn:
            conn.execute(
                text("update received_traces set audited_generation = generation, last_span_at = :t"),
                {"t": now() - timedelta(days=30)},
            )
        env = {"AUDITOR_RETAIN_SPANS": "7d", "AUDITOR_SERVE_QUIET": "600"}
        with running_server(db, env=env) as server:
            server.wait_for("/healthz", lambda d: d["status"] == "ok")
            deadline = now() + timedelta(seconds=20)
            while _counts(db)["received_traces"] and now() < deadline:
                time.sleep(0.1)
        assert _counts(db)["received_spans"] == 0
    finally:
        engine.dispose()
