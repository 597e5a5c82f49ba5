"""The server's read API over real stored audits, on SQLite and PostgreSQL.

Each filter is checked against the same selection made in Python from the audits' own results,
paging walks every answer once, the summary equals :func:`auditor.metrics.summarise` of the
answers it covers, and bad parameters are one line (400/422), never a traceback.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from auditor.metrics import summarise
from auditor.results import AnswerOut
from auditor.serve import create_app, serve_config
from auditor.serve._server import receivers
from auditor.store import AnswerFilter, Intake, Store, list_answers, recent_conversations
from tests.support.serve_data import Stored, store_audits
from tests.test_store import pg_schema, pg_url  # noqa: F401  (the session's PostgreSQL server)

Client = tuple[TestClient, Stored]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store URL with the audits in it: a SQLite file, or a new PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('api') / 'serve.db'}"
        return
    with pg_schema(request.getfixturevalue("pg_url")) as url:
        yield url


@pytest.fixture(scope="module")
def client(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    stored = store_audits(backend, tmp_path_factory.mktemp("traces"))
    with Store(backend) as store:
        app = create_app(serve_config(db_url=backend), store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as test_client:
            yield test_client, stored


def ids(answers: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((a["run_id"], a["answer_id"]) for a in answers)


def expect(stored: Stored, keep: Callable[[str, AnswerOut], bool]) -> list[tuple[str, str]]:
    return sorted((run, a.answer_id) for run, a in stored.answers if keep(run, a))


def listed(c: TestClient, **params: Any) -> list[dict[str, Any]]:
    response = c.get("/api/answers", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["next"] is None
    return list(body["answers"])


def excluded(a: AnswerOut) -> bool:
    return any(e.admitted is False for e in a.evidence)


def test_each_filter_selects_what_the_audits_say(client: Client) -> None:
    c, stored = client
    first_run = stored.answers[0][0]
    some = stored.answers[3][1]
    cases: list[tuple[dict[str, str], Callable[[str, AnswerOut], bool]]] = [
        ({}, lambda r, a: True),
        ({"verdict": "grounded"}, lambda r, a: a.grounded is True),
        ({"verdict": "ungrounded"}, lambda r, a: a.grounded is False),
        ({"verdict": "contradicted"}, lambda r, a: bool(a.contradicted)),
        ({"verdict": "refusal"}, lambda r, a: a.refusal is True),
        ({"question_type": "billing"}, lambda r, a: a.question_type == "billing"),
        (
            {"source_class": "retrieved-documents"},
            lambda r, a: any(e.source_class == "retrieved-documents" for e in a.evidence),
        ),
        ({"outcome": "excluded"}, lambda r, a: excluded(a)),
        ({"outcome": "all_admitted"}, lambda r, a: not excluded(a)),
        (
            {"outcome": "inadmissible_support"},
            lambda r, a: any(c.inadmissible_support for c in a.claims or []),
        ),
        ({"policy": stored.permissive_sha[:10]}, lambda r, a: r != first_run),
        ({"policy": "permissive"}, lambda r, a: r != first_run),
        ({"policy": stored.policy_sha}, lambda r, a: r == first_run),
        ({"run_id": first_run[:8]}, lambda r, a: r == first_run),
        ({"trace_id": some.trace_id[:6]}, lambda r, a: a.trace_id.startswith(some.trace_id[:6])),
        ({"q": "WARRANTY"}, lambda r, a: "warranty" in (a.text + " " + (a.question or "")).lower()),
        (
            {"verdict": "grounded", "question_type": "product"},
            lambda r, a: a.grounded is True and a.question_type == "product",
        ),
    ]
    for params, keep in cases:
        wanted = expect(stored, keep)
        assert ids(listed(c, **params)) == wanted, params
    # Every case above that names a value selects some answers but not all, so none passes vacuously.
    for params, keep in cases[1:]:
        assert 0 < len(expect(stored, keep)) < len(stored.answers), params


def test_service_and_time_range_filters(client: Client) -> None:
    c, stored = client
    for service, traces in stored.received.items():
        wanted = expect(stored, lambda r, a, traces=traces: a.trace_id in traces)
        assert wanted and ids(listed(c, service=service)) == wanted
    assert listed(c, service="no-such-service") == []
    assert listed(c, service='x"%_') == []  # quotes and LIKE wildcards are matched as text
    times = sorted({a.generated_at for _, a in stored.answers})
    since, until = times[1], times[-1]
    got = listed(c, since=since.isoformat(), until=until.isoformat())
    assert ids(got) == expect(stored, lambda r, a: since <= a.generated_at < until)
    naive = until.astimezone(UTC).replace(tzinfo=None).isoformat()  # no zone: taken as UTC
    assert ids(listed(c, until=naive)) == expect(stored, lambda r, a: a.generated_at < until)


def test_sessions_group_the_answers_by_conversation(client: Client, backend: str) -> None:
    _, stored = client
    groups: dict[str, list[AnswerOut]] = {}
    for _, a in stored.answers:
        if a.conversation_id:
            groups.setdefault(a.conversation_id, []).append(a)
    with Store(backend) as store:
        found = recent_conversations(store)
    assert {c.conversation_id: c.answers for c in found} == {k: len(v) for k, v in groups.items()}
    for c in found:
        answers = groups[c.conversation_id]
        assert (c.grounded, c.not_grounded) == (
            sum(a.grounded is True for a in answers),
            sum(a.grounded is False for a in answers),
        )
        assert c.last_at == max(a.generated_at for a in answers) and c.first_at.tzinfo is not None
    assert [c.last_at for c in found] == sorted((c.last_at for c in found), reverse=True)


def test_paging_walks_every_answer_once_newest_first(client: Client) -> None:
    c, stored = client
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor:
            params["next"] = cursor
        body = c.get("/api/answers", params=params).json()
        seen += body["answers"]
        cursor = body["next"]
        if cursor is None:
            break
    assert ids(seen) == expect(stored, lambda r, a: True) and len(seen) == len(stored.answers)
    stamps = [datetime.fromisoformat(a["generated_at"]) for a in seen]
    assert stamps == sorted(stamps, reverse=True)
    assert {"answer_id", "trace_id", "evidence", "claims", "grounded"} <= set(seen[0])


def test_the_summary_is_the_metrics_of_the_answers_it_covers(client: Client) -> None:
    c, stored = client
    for params, keep in [
        ({}, lambda r, a: True),
        ({"question_type": "billing"}, lambda r, a: a.question_type == "billing"),
    ]:
        body = c.get("/api/summary", params=params).json()
        answers = [a for r, a in stored.answers if keep(r, a)]
        assert body["summary"] == summarise(answers).model_dump(mode="json")
        assert body["filter"] == params
        headline = body["summary"]["answers_with_unsupported_claim"]
        assert headline["denominator"] > 0 and headline["wilson"]["method"] == "wilson"
        assert body["summary"]["groundedness_rate"]["denominator"] > 0


def test_one_answer_and_bad_parameters(client: Client) -> None:
    c, stored = client
    run, answer = stored.answers[-1]
    got = c.get(f"/api/answers/{answer.answer_id}", params={"run_id": run}).json()
    assert got["run_id"] == run and got["answer_id"] == answer.answer_id
    assert got["claims"] == [cl.model_dump(mode="json") for cl in answer.claims or []]
    missing = c.get("/api/answers/nope")
    assert missing.status_code == 404 and "GET /api/answers" in missing.json()["detail"]
    long_id = c.get("/api/answers/" + "x" * 20_000)  # the reason is one short line, not the id echoed
    assert long_id.status_code == 404 and len(long_id.json()["detail"]) < 200
    bad_cursor = c.get("/api/answers", params={"next": "not-a-cursor"})
    assert bad_cursor.status_code == 400 and "next=" in bad_cursor.json()["detail"]
    for params in ({"verdict": "fine"}, {"since": "yesterday"}, {"outcome": "x"}, {"limit": "0"}):
        assert c.get("/api/answers", params=params).status_code == 422, params
    assert c.get("/api/summary", params={"verdict": "fine"}).status_code == 422


def test_the_openapi_document_lists_the_read_api(client: Client) -> None:
    c, _ = client
    paths = c.get("/openapi.json").json()["paths"]
    assert {"/api/answers", "/api/answers/{answer_id}", "/api/runs", "/api/summary"} <= set(paths)
    names = {p["name"] for p in paths["/api/answers"]["get"]["parameters"]}
    assert {"trace_id", "verdict", "since", "until", "q", "policy", "limit", "next"} <= names
    assert "/" not in paths and "/trend" not in paths  # pages are not API
    assert c.get("/docs").status_code == 404  # Swagger UI loads from a CDN: off (tests/test_serve_guard.py)


def test_the_browse_benchmark_runs_on_a_small_store(tmp_path: Path) -> None:
    from benchmarks import browse

    result = browse.run(tmp_path, copies=2, repeat=1)
    with Store(f"sqlite:///{tmp_path / 'browse.db'}") as store:
        stored = list_answers(store, AnswerFilter(), limit=500).answers
    assert result["answers"] == len(stored) and len(stored) % 2 == 0  # the audit and one copy of it
    assert len({a.generated_at for a in stored}) > len(stored) // 2  # the copy is shifted in time
    assert result["queries"][0]["query"].startswith("first page")
    head, rows = browse.table(result)
    assert len(rows) == len(result["queries"]) and len(head) == 4


def cursor(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


HOSTILE_CURSORS = [
    cursor([[[[[[[[["2026-01-01T00:00:00+00:00"]]]]]]]], "r", "a"]),
    base64.urlsafe_b64encode(b"[" * 5000).decode(),  # nested past what json reads
    cursor(["2026-01-01T00:00:00+00:00", "\ud800", "a"]),  # a lone surrogate (json escapes it)
    cursor(["9999-12-31T23:59:59-23:59", "r", "a"]),  # past year 9999 in UTC
    cursor(["2026-01-01T00:00:00+00:00", ["r"], {"a": 1}]),
    cursor("just a string"),
]
EDGE_TIMES = ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59.999999-00:01"]


@pytest.mark.parametrize(
    "next_cursor", HOSTILE_CURSORS, ids=["nested", "too-deep", "surrogate", "year-10000", "types", "string"]
)
def test_a_bad_cursor_is_a_one_line_400_on_the_api_and_the_page(client: Client, next_cursor: str) -> None:
    c, _ = client
    answer = c.get("/api/answers", params={"next": next_cursor})
    assert answer.status_code == 400, answer.text
    assert "is not a cursor this server gave" in answer.json()["detail"]
    page = c.get("/", params={"next": next_cursor})
    assert page.status_code == 400 and "is not a cursor this server gave" in page.text


@pytest.mark.parametrize("when", EDGE_TIMES)
@pytest.mark.parametrize("name", ["since", "until"])
def test_a_time_out_of_range_in_utc_is_a_one_line_answer(client: Client, name: str, when: str) -> None:
    c, _ = client
    for path in ("/api/answers", "/api/summary"):
        answer = c.get(path, params={name: when})
        assert answer.status_code in (400, 422), (path, answer.text)
        assert "out of range" in answer.text and "Traceback" not in answer.text
    for path in ("/", "/trend"):
        page = c.get(path, params={name: when})
        assert page.status_code == 400, (path, page.text[:300])
        assert "out of range" in html.unescape(page.text)
