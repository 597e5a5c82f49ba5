"""The audit passes of ``auditor serve``, paged, on SQLite and PostgreSQL; and the waiting count.

``GET /api/audits`` pages the passes oldest first (by when, then trace and generation) with a
keyset cursor: every pass once, in order, however the pages fall on ties; a cursor the server did
not give is a one-line 400. ``Intake.pending`` on PostgreSQL reads the partial index of waiting
traces without starting parallel workers.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from auditor.errors import UsageError
from auditor.serve import create_app, serve_config
from auditor.serve._server import receivers
from auditor.store import Intake, Store
from auditor.store._received import ReceivedTraceRecord, TraceAuditRecord
from tests.test_store import db_url, fresh_pg_url, pg_url, store  # noqa: F401  (the shared store fixtures)

START = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def fill(opened: Store) -> list[tuple[datetime, str, int]]:
    """24 passes on 3 instants, two generations of four traces on each (ties on time and trace),
    inserted in a shuffled order; their keys in the order the API gives them."""
    keys = [
        (START + timedelta(seconds=second), f"{trace:02x}" * 16, 2 * n + generation)
        for n, second in enumerate((0, 1, 5))
        for trace in (3, 1, 2, 4)
        for generation in (2, 1)
    ]
    rows = [
        TraceAuditRecord(
            trace_id=t, generation=g, run_id=f"run-{t[:2]}-{g}", spans=g, audited_at=at, error=None
        )
        for at, t, g in keys
    ]
    random.Random(33).shuffle(rows)
    with Session(opened.engine) as session, session.begin():
        session.add_all(rows)
    return sorted(keys)


def walk(intake: Intake, limit: int, trace_id: str | None = None) -> list[tuple[str, int]]:
    seen: list[tuple[str, int]] = []
    after: str | None = None
    while True:
        page = intake.audit_page(trace_id, limit=limit, after=after)
        assert len(page.audits) <= limit
        seen.extend((a.trace_id, a.generation) for a in page.audits)
        if page.next is None:
            return seen
        assert page.audits, "a page with a next cursor holds passes"
        after = page.next


def test_paging_walks_every_pass_once_in_order(store: Store) -> None:  # noqa: F811
    expected = fill(store)
    intake = Intake(store)
    ordered = [(t, g) for _, t, g in expected]
    for limit in (1, 3, 4, 7, 24, 25):  # 4 and 24 end a page exactly on the last pass: no empty page after
        assert walk(intake, limit) == ordered, limit
    assert [(a.trace_id, a.generation) for a in intake.audits()] == ordered
    one = "01" * 16
    assert walk(intake, 2, one) == [(t, g) for t, g in ordered if t == one]
    assert intake.audit_page(limit=24).next is None and intake.audit_page(limit=23).next is not None
    # A pass recorded before the cursor after its page was read shifts nothing on the next pages.
    first = intake.audit_page(limit=5)
    with Session(store.engine) as session, session.begin():
        session.add(
            TraceAuditRecord(
                trace_id="00" * 16, generation=1, run_id=None, spans=1, audited_at=START, error=None
            )
        )
    rest = intake.audit_page(limit=100, after=first.next)
    assert [(a.trace_id, a.generation) for a in rest.audits] == ordered[5:]


def cursor(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


T = "2026-12-01T08:00:00+00:00"
BAD_CURSORS = [
    "not-a-cursor",
    cursor([T, "ab", "1"]),  # generation as text
    cursor([T, "ab", True]),  # a bool is not a generation
    cursor([T, "ab", 2**31]),  # past PostgreSQL's integer
    cursor([T, "ab", 2**70]),
    cursor([T, "ab", -1]),
    cursor([T, "ab", 1.5]),
    cursor([T, 7, 1]),
    cursor([T, "\ud800", 1]),
    cursor([T, "ab"]),
    cursor([T, "ab", 1, 2]),
    cursor(["9999-12-31T23:59:59-23:59", "ab", 1]),
    cursor([T, "run", "answer"]),  # an /api/answers cursor's shape
    base64.urlsafe_b64encode(b"[" * 5000).decode(),
]


@pytest.mark.parametrize("bad", BAD_CURSORS)
def test_a_cursor_the_server_did_not_give_is_a_usage_error(store: Store, bad: str) -> None:  # noqa: F811
    with pytest.raises(UsageError, match="is not a cursor this server gave"):
        Intake(store).audit_page(after=bad)


@pytest.fixture
def client(db_url: str) -> Iterator[tuple[TestClient, list[tuple[datetime, str, int]]]]:  # noqa: F811
    with Store(db_url, upgrade=True) as opened:
        expected = fill(opened)
        app = create_app(serve_config(db_url=db_url), opened, Intake(opened), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as test_client:
            yield test_client, expected


def test_the_api_pages_the_passes_and_refuses_a_bad_cursor(
    client: tuple[TestClient, list[tuple[datetime, str, int]]],
) -> None:
    c, expected = client
    everything = c.get("/api/audits").json()  # the default page holds a handful of passes whole
    assert everything["next"] is None
    assert [(a["trace_id"], a["generation"]) for a in everything["audits"]] == [
        (t, g) for _, t, g in expected
    ]
    seen: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 5}
    while True:
        body = c.get("/api/audits", params=params).json()
        seen.extend(body["audits"])
        if body["next"] is None:
            break
        params["next"] = body["next"]
    assert seen == everything["audits"]
    one = "02" * 16
    only = c.get("/api/audits", params={"trace_id": one, "limit": 1}).json()
    assert [a["trace_id"] for a in only["audits"]] == [one] and only["next"] is not None
    for bad in BAD_CURSORS:
        answer = c.get("/api/audits", params={"next": bad})
        assert answer.status_code == 400, (bad, answer.text)
        assert "is not a cursor this server gave" in answer.json()["detail"]
    # A cursor of the right shape holding what no pass holds (a NUL, which PostgreSQL text cannot
    # hold; far-off times) is a page, maybe empty, not a database error.
    for odd in (
        [T, "02\x00", 1],
        ["0001-01-01T00:00:00+00:00", "", 0],
        ["9999-12-31T23:59:59+00:00", "z", 0],
    ):
        answer = c.get("/api/audits", params={"next": cursor(odd)})
        assert answer.status_code == 200, (odd, answer.text)
    for limit in ("0", "1001", "x"):
        assert c.get("/api/audits", params={"limit": limit}).status_code == 422, limit
    names = {p["name"] for p in c.get("/openapi.json").json()["paths"]["/api/audits"]["get"]["parameters"]}
    assert names == {"trace_id", "limit", "next"}


def test_a_page_is_a_range_read_of_the_index_on_sqlite(tmp_path: Any) -> None:
    with Store(f"sqlite:///{tmp_path / 'plan.db'}", upgrade=True) as opened, opened.engine.connect() as conn:
        plan = " | ".join(
            str(row[3])
            for row in conn.execute(
                text(
                    "EXPLAIN QUERY PLAN SELECT * FROM trace_audits"
                    " WHERE (audited_at, trace_id, generation) > (:a, :t, :g)"
                    " ORDER BY audited_at, trace_id, generation LIMIT 101"
                ),
                {"a": "2026-12-01 08:00:00.000000", "t": "ab", "g": 1},
            )
        )
    assert "USING INDEX ix_trace_audits_audited_at" in plan and "TEMP B-TREE" not in plan, plan


def test_the_waiting_count_on_postgresql_starts_no_parallel_workers(fresh_pg_url: str) -> None:  # noqa: F811
    """Parallel plans made free, as the planner thinks them at 400,000 traces: the count still
    reads the partial index alone, with the same result; a plain count in the same setting does not."""
    options = " ".join(
        f"-c{setting}"
        for setting in (
            "session_preload_libraries=auto_explain",
            "auto_explain.log_min_duration=0",
            "auto_explain.log_level=notice",
            "client_min_messages=notice",
            "parallel_setup_cost=0",
            "parallel_tuple_cost=0",
            "min_parallel_table_scan_size=0",
            "min_parallel_index_scan_size=0",
        )
    )
    url = make_url(fresh_pg_url)
    url = url.update_query_dict({"options": f"{url.query['options']} {options}"})
    plans: list[str] = []
    with Store(fresh_pg_url, upgrade=True) as plain, Session(plain.engine) as session, session.begin():
        session.add_all(
            ReceivedTraceRecord(
                trace_id=f"{n:032x}",
                generation=1 + (n % 100 == 0),
                audited_generation=1,
                root_ended=True,
                first_span_at=START,
                last_span_at=START + timedelta(seconds=n),
            )
            for n in range(2000)
        )
    with Store(url.render_as_string(hide_password=False)) as watched:
        watched.engine.dispose()

        @event.listens_for(watched.engine, "connect")
        def listen(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.add_notice_handler(lambda notice: plans.append(str(notice.message_primary)))

        assert Intake(watched).pending() == 20
        counted = [p for p in plans if "generation > audited_generation" in p]
        assert counted and not any("Gather" in p for p in counted), counted
        plans.clear()
        with watched.engine.begin() as conn:  # the control: the same count as a plain statement
            conn.execute(text("SELECT count(*) FROM received_traces WHERE generation > audited_generation"))
        assert any("Gather" in p for p in plans), plans
