"""Filter text the stores cannot compare the same way gets the same answer on SQLite and PostgreSQL.

SQLite's ``LIKE`` stops reading a pattern at a NUL, so ``q=%00`` matched every answer; PostgreSQL
text cannot hold a NUL at all (the store keeps one as U+FFFD), so it matched none (issue 29, item 12).
A filter value holding a NUL is now one line, 400 on the API and on the pages, on both stores.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from auditor.errors import UsageError
from auditor.run import audit
from auditor.serve import create_app, serve_config
from auditor.serve._server import receivers
from auditor.store import AnswerFilter, Intake, Store, list_answers, upgrade
from tests.conftest import FIXTURES
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (SQLite and the session's PostgreSQL)

TRACE = FIXTURES / "single_retrieval" / "openinference.otlp.jsonl"
TEXT_FILTERS = (
    "q",
    "trace_id",
    "run_id",
    "policy",
    "source_class",
    "question_type",
    "service",
    "conversation_id",
)


@pytest.fixture
def client(db_url: str) -> Iterator[TestClient]:  # noqa: F811
    upgrade(db_url)  # a new PostgreSQL schema starts empty
    assert audit([TRACE], db_url=db_url).answers
    with Store(db_url) as store:
        app = create_app(serve_config(db_url=db_url), store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as test_client:
            yield test_client


def test_a_nul_in_any_filter_is_one_line_on_both_stores(client: TestClient) -> None:
    assert len(client.get("/api/answers").json()["answers"]) == 1
    assert client.get("/api/answers", params={"q": "refund"}).status_code == 200
    for name in TEXT_FILTERS:
        for value in ("\x00", "ref\x00und"):
            for path in ("/api/answers", "/api/summary", "/", "/trend"):
                response = client.get(path, params={name: value})
                assert response.status_code == 400, (path, name, response.text[:300])
                shown = response.json()["detail"] if path.startswith("/api") else response.text
                assert f"{name} holds a NUL character" in shown, (path, name)


def test_the_store_refuses_a_nul_in_filter_text(client: TestClient, db_url: str) -> None:  # noqa: F811
    with (
        Store(db_url) as store,
        pytest.raises(UsageError, match=r"^q holds a NUL character .*: remove it\.$"),
    ):
        list_answers(store, AnswerFilter(q="\x00"))
