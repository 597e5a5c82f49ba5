"""Two ``auditor serve`` replicas on one PostgreSQL store, with one killed by ``kill -9`` mid-audit.

Real processes, the real PostgreSQL server (a fresh schema, dropped afterwards), the real OTel
HTTP exporter, and a slow judge (the fake OpenAI server with a delay on every call) so the kill
lands while the replica holds a trace and its run is open. Each trace's spans are split between
the replicas. Afterwards every trace has been audited exactly once: one recorded pass, one run,
each answer stored once, none lost.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SpanExportResult
from sqlalchemy import Engine, create_engine, text

from auditor.run import audit
from auditor.store import upgrade
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI
from tests.support.otlp_replay import sdk_spans
from tests.support.serve import running_server
from tests.test_serve import export
from tests.test_store import fresh_pg_url, pg_url  # noqa: F401  (the PostgreSQL fixtures)

pytestmark = pytest.mark.serve_live

FIXTURE = FIXTURES / "single_retrieval" / "openinference.otlp.jsonl"
TRACES = 4


def copies(tmp_path: Path, count: int) -> list[Path]:
    """The fixture's trace ``count`` times, each under its own trace id (one file each)."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    original = json.loads(lines[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    paths = []
    for n in range(count):
        path = tmp_path / f"trace-{n}.otlp.jsonl"
        path.write_text("\n".join(lines).replace(original, f"{n + 1:032x}") + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def run_replicas(db: str, engine: Engine, files: list[Path]) -> tuple[list[Any], list[Any], list[Any]]:
    """Export each trace half to each replica, kill the first mid-audit; the audits, runs and answer counts."""
    with FakeOpenAI(latency=0.5) as judge:
        args = ("--judge", "openai:fake-judge", "--base-url", judge.base_url, "--workers", "2")
        env = {"AUDITOR_SERVE_QUIET": "0.5", "AUDITOR_RUN_LEASE": "1.5", "OPENAI_API_KEY": "sk-test"}
        with running_server(db, *args, env=env) as doomed, running_server(db, *args, env=env) as survivor:
            for path in files:
                spans = sdk_spans(path)
                assert export(doomed, spans[::2]) is SpanExportResult.SUCCESS
                assert export(survivor, spans[1::2]) is SpanExportResult.SUCCESS

            # Kill the first replica once it holds a trace and that trace's run is open (mid-audit).
            pid = f"%:{doomed.process.pid}:%"
            deadline = time.monotonic() + 30
            while True:
                with engine.connect() as conn:
                    held = conn.scalar(
                        text(
                            "select count(*) from received_traces t join runs r on r.owner like :pid "
                            "where t.owner like :pid and r.status = 'running'"
                        ),
                        {"pid": pid},
                    )
                if held:
                    break
                assert time.monotonic() < deadline, "the first replica never started an audit"
                time.sleep(0.05)
            doomed.kill()

            done = survivor.wait_for("/api/audits", lambda d: len(d["audits"]) >= len(files), timeout=90)
            time.sleep(2.0)  # past a lease: nothing is audited again
            assert survivor.get("/api/audits") == done
    with engine.connect() as conn:
        runs = list(conn.execute(text("select id, status from runs")).all())
        per_answer = list(
            conn.execute(
                text("select trace_id, answer_id, count(*) from answers group by trace_id, answer_id")
            ).all()
        )
    return done["audits"], runs, per_answer


def test_two_replicas_share_the_work_and_a_killed_one_loses_nothing(
    tmp_path: Path,
    fresh_pg_url: str,  # noqa: F811
) -> None:
    db = fresh_pg_url
    upgrade(db)
    files = copies(tmp_path, TRACES)
    expected = {f"{n + 1:032x}": len(audit([path], store=False).answers) for n, path in enumerate(files)}
    assert all(expected.values())
    engine = create_engine(db)
    try:
        audits, runs, per_answer = run_replicas(db, engine, files)
    finally:
        engine.dispose()
    assert sorted(a["trace_id"] for a in audits) == sorted(expected)  # each trace once
    # Generation 2: each trace's spans came in two requests, to two replicas, before its audit.
    assert all(a["generation"] == 2 and a["spans"] == 17 and a["error"] is None for a in audits), audits
    assert len(runs) == TRACES and {status for _, status in runs} == {"finished"}  # one run per trace
    assert {a["run_id"] for a in audits} == {run_id for run_id, _ in runs}
    assert all(n == 1 for _, _, n in per_answer), per_answer  # no answer audited twice
    answers: dict[str, int] = {}
    for trace_id, _, _ in per_answer:
        answers[trace_id] = answers.get(trace_id, 0) + 1
    assert answers == expected  # none lost
