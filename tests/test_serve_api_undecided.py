"""The JSON API says *undecided* (issue 28, item 7), through the real server over a real store.

Two audits go into one SQLite store: ``single_retrieval`` judged by the LLM judge through the real
``openai`` client against the local server, which refuses the call, so its one claim is
``unjudged: refused`` and the answer is undecided (no claim decided unsupported); and
``changed_figure`` judged offline, whose one claim is contradicted (not grounded, not undecided).
The API must say which is which, with the refused claim's reason in words, keep the old fields, and
select undecided answers with ``verdict=undecided`` (in SQL, on SQLite and PostgreSQL alike).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from auditor.run import audit
from auditor.serve import create_app, serve_config
from auditor.serve._server import receivers
from auditor.store import Intake, Store, upgrade
from tests.support.fake_openai import FakeOpenAI
from tests.support.serve_data import trace_file
from tests.test_store import pg_schema, pg_url  # noqa: F401  (the session's PostgreSQL server)

#: The sentence for ``refused``, written out here (not read back from the code that prints it).
REFUSED = "The judge model refused to judge this claim."
#: single_retrieval's answer (tests/fixtures/single_retrieval/expected.json).
RETURNS = "You can return an item within 30 days of delivery for a full refund."


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store URL: a SQLite file, or a new PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('undecided-db') / 'serve.db'}"
        return
    with pg_schema(request.getfixturevalue("pg_url")) as url:
        yield url


@pytest.fixture(scope="module")
def stored(backend: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The store URL, holding the two audits."""
    directory = tmp_path_factory.mktemp("undecided")
    db_url = backend
    upgrade(db_url)
    with FakeOpenAI() as server:
        server.enqueue("refuse")
        audit(
            [trace_file("single_retrieval", directory)],
            judge="openai:fake-judge",
            base_url=server.base_url,
            cascade=False,
            cache=False,
            db_url=db_url,
        )
    audit([trace_file("changed_figure", directory)], db_url=db_url)
    return db_url


@pytest.fixture(scope="module")
def api(stored: str) -> Iterator[TestClient]:
    db_url = stored
    with Store(db_url) as store:
        app = create_app(serve_config(db_url=db_url), store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as client:
            yield client


def _answers(api: TestClient) -> dict[str, dict[str, Any]]:
    response = api.get("/api/answers")
    assert response.status_code == 200, response.text
    return {a["text"]: a for a in response.json()["answers"]}


def test_the_list_says_undecided_and_why(api: TestClient) -> None:
    answers = _answers(api)
    assert len(answers) == 2
    undecided = answers[RETURNS]
    assert undecided["undecided"] is True and undecided["status"] == "undecided"
    # The old fields stay as they were: no judged claim, so no ratio; not grounded (fail closed).
    assert undecided["groundedness"] is None and undecided["grounded"] is False
    assert undecided["unjudged"] == 1
    (claim,) = [c for c in undecided["claims"] if not c["screened"]]
    assert claim["verdict"] == "unjudged" and claim["unjudged_reason"] == "refused"
    assert claim["unjudged_text"] == REFUSED
    (other,) = [a for text, a in answers.items() if text != RETURNS]
    assert other["undecided"] is False and other["status"] == "not_grounded"
    assert other["contradicted"] == 1
    assert all(c["unjudged_text"] is None for c in other["claims"])


def test_one_answer_says_undecided_and_why(api: TestClient) -> None:
    listed = _answers(api)[RETURNS]
    response = api.get(f"/api/answers/{listed['answer_id']}")
    assert response.status_code == 200, response.text
    one = response.json()
    assert one == listed
    assert one["status"] == "undecided"
    assert [c["unjudged_text"] for c in one["claims"] if not c["screened"]] == [REFUSED]


def test_the_summary_counts_undecided_and_names_the_reason(api: TestClient) -> None:
    response = api.get("/api/summary")
    assert response.status_code == 200, response.text
    body = response.json()
    summary = body["summary"]
    assert summary["undecided_answers"] == 1
    assert summary["unjudged_by_reason"] == {"refused": 1}
    assert body["unjudged_reasons"] == {"refused": REFUSED}
    # The undecided answer is out of "answers with an unsupported claim": 1 of 1 (the contradicted one).
    unsupported = summary["answers_with_unsupported_claim"]
    assert (unsupported["numerator"], unsupported["denominator"]) == (1, 1)


def test_the_verdict_filter_selects_undecided_answers(api: TestClient) -> None:
    def texts(verdict: str) -> list[str]:
        response = api.get("/api/answers", params={"verdict": verdict})
        assert response.status_code == 200, response.text
        return sorted(a["text"] for a in response.json()["answers"])

    both = sorted(_answers(api))
    assert texts("undecided") == [RETURNS]
    assert texts("ungrounded") == both  # undecided answers fail closed: still listed as not grounded
    assert texts("contradicted") == [t for t in both if t != RETURNS]
    summary = api.get("/api/summary", params={"verdict": "undecided"}).json()
    assert summary["filter"] == {"verdict": "undecided"}
    assert summary["summary"]["undecided_answers"] == summary["summary"]["answers"] == 1
    assert api.get("/api/answers", params={"verdict": "unsure"}).status_code == 422


def test_runs_count_their_undecided_answers(api: TestClient) -> None:
    response = api.get("/api/runs")
    assert response.status_code == 200, response.text
    by_judge = {r["judge"]["kind"]: r for r in response.json()["runs"]}
    assert by_judge["openai"]["undecided_answers"] == 1
    assert by_judge["openai"]["answers_with_claims"] == 0  # its one answer is out of that rate
    assert by_judge["offline"]["undecided_answers"] == 0
    page = api.get("/runs")
    assert page.status_code == 200
    assert page.text.count("· undecided 1<") == 1


def test_auditor_runs_counts_undecided_answers(stored: str) -> None:
    from click.testing import CliRunner

    from auditor.cli import cli

    listed = CliRunner().invoke(cli, ["runs", "--db", stored])
    assert listed.exit_code == 0, listed.output
    text = " ".join(listed.output.split())  # as a person reads it, whatever the console's width
    assert text.count("unsupported in - of 0 answers · 1 undecided openai:fake-judge") == 1
    assert text.count("unsupported in 100.0% of 1 answers offline") == 1  # contradicted, none undecided


def test_a_written_result_reads_back(tmp_path: Path, api: TestClient) -> None:
    """The derived fields are written, and a document holding them validates again (the contract)."""
    from auditor.results import AnswerOut

    listed = _answers(api)[RETURNS]
    listed.pop("run_id")
    again = AnswerOut.model_validate(listed)
    assert again.undecided and again.status == "undecided"
    assert again.model_dump(mode="json") == listed
