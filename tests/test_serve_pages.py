"""The server's pages over real stored audits (no browser): the sign-in, the headers, the figures.

The browser tests (tests/test_serve_browser.py) drive the same pages in Chromium; these check
what a browser does not show: the token and cookie rules, the Content-Security-Policy, escaping of
what a request echoes, and that the trend's figures are the metrics of each hour's answers.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime

import pytest
from fastapi.testclient import TestClient

from auditor.metrics import Headline, summarise
from auditor.results import AnswerOut
from auditor.serve import create_app, serve_config
from auditor.serve._server import receivers
from auditor.store import Intake, SignIns, Store
from tests.support.serve_data import Stored, store_audits

TOKEN = "s3cret-token"
PAGES = ("/", "/runs", "/trend", "/trend?bucket=day", "/policy")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Stored]:
    directory = tmp_path_factory.mktemp("pages")
    db = f"sqlite:///{directory / 'serve.db'}"
    return db, store_audits(db, directory / "traces")


def client_for(db: str, token: str | None) -> Iterator[TestClient]:
    with Store(db) as store:
        app = create_app(serve_config(db_url=db, token=token), store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318", follow_redirects=False) as client:
            yield client


@pytest.fixture
def open_client(stored: tuple[str, Stored]) -> Iterator[TestClient]:
    yield from client_for(stored[0], None)


@pytest.fixture
def guarded(stored: tuple[str, Stored]) -> Iterator[TestClient]:
    yield from client_for(stored[0], TOKEN)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_every_page_renders_with_the_csp_and_no_script(open_client: TestClient) -> None:
    for path in PAGES:
        response = open_client.get(path)
        assert response.status_code == 200, path
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp and "frame-ancestors 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "<script" not in response.text and "http://" not in response.text.split("</head>")[0]


def test_with_a_token_pages_need_the_sign_in_and_the_cookie_is_httponly(guarded: TestClient) -> None:
    for path in PAGES:
        response = guarded.get(path)
        assert response.status_code == 303 and response.headers["location"].startswith("/login?next="), path
    wrong = guarded.post("/login?next=/runs", content=b"token=nope", headers=FORM)
    assert wrong.status_code == 401 and "not the server" in wrong.text and "set-cookie" not in wrong.headers
    right = guarded.post("/login?next=/runs", content=f"token={TOKEN}".encode(), headers=FORM)
    assert right.status_code == 303 and right.headers["location"] == "/runs"
    cookie = right.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
    assert guarded.get("/runs").status_code == 200  # the client keeps the cookie
    # The API still takes only the bearer token: a browser cookie is not an API credential.
    assert guarded.get("/api/answers").status_code == 401
    assert guarded.get("/api/answers", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    guarded.post("/logout")
    assert guarded.get("/runs").status_code == 303


def test_the_sign_in_never_redirects_off_the_server(guarded: TestClient) -> None:
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil"):
        response = guarded.post(
            "/login", params={"next": target}, content=f"token={TOKEN}".encode(), headers=FORM
        )
        assert response.headers["location"] == "/", target
    huge = guarded.post("/login", content=b"token=" + b"x" * 10_000, headers=FORM)
    assert huge.status_code == 413
    crowded = guarded.post("/login", content=b"a=1&b=2&c=3&d=4&e=5&token=" + TOKEN.encode(), headers=FORM)
    assert crowded.status_code == 401 and "set-cookie" not in crowded.headers


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def test_echoed_filters_are_escaped_and_bad_ones_are_one_line(open_client: TestClient) -> None:
    hostile = '"><script>alert(1)</script>'
    page = open_client.get("/", params={"q": hostile})
    assert page.status_code == 200 and "<script>alert" not in page.text and "&lt;script&gt;" in page.text
    for params, needle in [
        ({"verdict": "fine"}, "verdict='fine' is not one of grounded"),
        ({"since": "yesterday"}, "since='yesterday' is not a time"),
        ({"next": "garbage"}, "is not a cursor this server gave"),
    ]:
        bad = open_client.get("/", params=params)
        assert bad.status_code == 400 and needle in html.unescape(bad.text), params
        assert "Traceback" not in bad.text
    assert open_client.get("/trend", params={"bucket": "week"}).status_code == 400
    assert open_client.get("/answers/nope").status_code == 404


def test_the_detail_and_attribution_pages_show_the_answer(
    open_client: TestClient, stored: tuple[str, Stored]
) -> None:
    run, answer = next(
        (r, a) for r, a in stored[1].answers if a.claims and any(c.citations for c in a.claims)
    )
    page = open_client.get(f"/answers/{answer.answer_id}", params={"run": run})
    assert page.status_code == 200
    shown = text_of(page.text)
    cited = next(c for c in answer.claims or [] if c.citations)
    assert cited.citations[0].quote.split()[0] in shown and answer.evidence[0].evidence_id in page.text
    report = open_client.get(f"/answers/{answer.answer_id}/attribution", params={"run": run})
    assert (
        report.status_code == 200
        and "script-src 'unsafe-inline'" in report.headers["content-security-policy"]
    )
    assert answer.answer_id in report.text or "data-claim" in report.text


def hourly(answers: list[AnswerOut]) -> dict[datetime, list[AnswerOut]]:
    out: dict[datetime, list[AnswerOut]] = defaultdict(list)
    for a in answers:
        out[a.generated_at.replace(minute=0, second=0, microsecond=0)].append(a)
    return out


def test_the_trend_is_the_metrics_of_each_hour(open_client: TestClient, stored: tuple[str, Stored]) -> None:
    from auditor.serve._figures import trend
    from auditor.store import AnswerFilter

    with Store(stored[0]) as store:
        _, points = trend(store, AnswerFilter(), "hour")
    answers = [a for _, a in stored[1].answers]
    newest = max(a.generated_at for a in answers)
    window = {h: g for h, g in hourly(answers).items() if (newest - h).total_seconds() < 48 * 3600}
    assert [p.start for p in points] == sorted(window, reverse=True) and len(points) >= 3
    for p in points:
        assert p.summary == Headline.of(summarise(window[p.start]))
    page = text_of(open_client.get("/trend").text)
    first = points[0].summary.answers_with_unsupported_claim
    assert f"{first.numerator} / {first.denominator}" in page
    days = text_of(open_client.get("/trend", params={"bucket": "day"}).text)
    assert days.count(" UTC ") >= 2  # the fixture answers span two days


def test_the_policy_page_shows_the_policy_in_force_with_its_hash(open_client: TestClient) -> None:
    from auditor.policy import load_policy

    policy = load_policy()
    page = open_client.get("/policy").text
    assert policy.sha256 in page and policy.name in page
    assert f"/?policy={policy.sha256}" in page


def test_a_signed_in_page_checks_its_cookie_once_and_off_the_event_loop(
    guarded: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check is a query on the store: asked twice per page, on the loop, it held every request up.
    checks: list[bool] = []
    valid = SignIns.valid

    def counted(self: SignIns, session_id: str, token_mac: str) -> bool:
        try:
            asyncio.get_running_loop()
            checks.append(True)  # on the event loop
        except RuntimeError:
            checks.append(False)
        return valid(self, session_id, token_mac)

    monkeypatch.setattr(SignIns, "valid", counted)
    assert guarded.post("/login", content=f"token={TOKEN}".encode(), headers=FORM).status_code == 303
    for path in PAGES:
        checks.clear()
        response = guarded.get(path)
        assert response.status_code == 200 and "Sign out" in response.text, path
        assert checks == [False], path
