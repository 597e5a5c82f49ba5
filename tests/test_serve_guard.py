"""The server's guard rails against hostile browsers and clients (issue 29, items 9 to 11 and 16).

Everything goes through the real application (FastAPI's ``TestClient`` over a SQLite store), the
way a browser or a script would reach it.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from auditor.serve import create_app, serve_config
from auditor.serve._server import receivers
from auditor.store import Intake, Store


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[TestClient]:
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    with Store(url) as store:
        app = create_app(serve_config(db_url=url), store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as client:
            yield client


# --- item 16: no page loads anything from another host ----------------------------------------------


def test_no_page_loads_a_script_or_style_from_another_host(app_client: TestClient) -> None:
    """Swagger UI and ReDoc pull their scripts from a CDN: off, so the pages work offline under the CSP."""
    assert app_client.get("/docs").status_code == 404
    assert app_client.get("/redoc").status_code == 404
    assert app_client.get("/docs/oauth2-redirect").status_code == 404
    assert "/api/answers" in app_client.get("/openapi.json").json()["paths"]  # the schema stays
    for path in ("/", "/runs", "/trend", "/policy", "/login"):
        page = app_client.get(path)
        assert page.status_code == 200, path
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page.text), path


# --- item 9: DNS rebinding and cross-site posts ----------------------------------------------------


def guarded_client(tmp_path: Path, **settings: Any) -> Iterator[TestClient]:
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    with Store(url) as store:
        app = create_app(serve_config(db_url=url, **settings), store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318", follow_redirects=False) as client:
            yield client


def status(client: TestClient, method: str, path: str, host: str, **headers: str) -> int:
    response = client.request(method, path, headers={"Host": host, **headers})
    return response.status_code


REBOUND = ("evil.example", "evil.example:4318", "127.0.0.1.nip.io:4318", "localhost.evil.example")


def test_loopback_server_answers_only_its_own_names(app_client: TestClient) -> None:
    """A page whose name was re-resolved to 127.0.0.1 gets nothing: pages, API, receiver, health."""
    for host in REBOUND:
        for method, path in (
            ("GET", "/"),
            ("GET", "/api/answers"),
            ("GET", "/healthz"),
            ("POST", "/v1/traces"),
        ):
            response = app_client.request(method, path, headers={"Host": host})
            assert response.status_code == 400, (host, path)
            assert "AUDITOR_SERVE_HOSTS" in response.json()["detail"]
    for host in ("127.0.0.1:4318", "127.0.0.1", "localhost:4318", "LOCALHOST.", "[::1]:4318", "127.0.0.2"):
        assert status(app_client, "GET", "/api/answers", host) == 200, host


def test_configured_names_and_wildcard_binds(tmp_path: Path) -> None:
    for client in guarded_client(tmp_path / "a", hosts="auditor.internal, Metrics.Example"):
        assert status(client, "GET", "/healthz", "auditor.internal:4318") == 200
        assert status(client, "GET", "/healthz", "metrics.example") == 200
        assert status(client, "GET", "/healthz", "evil.example") == 400
    for client in guarded_client(tmp_path / "b", hosts="*"):
        assert status(client, "GET", "/healthz", "evil.example") == 200
    for client in guarded_client(tmp_path / "c", host="0.0.0.0", insecure=True):
        assert status(client, "GET", "/healthz", "10.1.2.3:4318") == 200  # an address cannot be rebound
        assert status(client, "GET", "/healthz", "[fd00::5]:4318") == 200
        assert status(client, "GET", "/healthz", socket.gethostname()) == 200
        assert status(client, "GET", "/healthz", "evil.example") == 400
    for client in guarded_client(tmp_path / "d", host="192.0.2.7", insecure=True):
        assert status(client, "GET", "/healthz", "192.0.2.7:4318") == 200
        assert status(client, "GET", "/healthz", "192.0.2.8:4318") == 400


CROSS_SITE = (
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site", "Origin": "http://other.127.0.0.1:4318"},
    {"Origin": "http://evil.example"},  # an older browser: no Sec-Fetch-Site
    {"Origin": "http://127.0.0.1:9999"},  # another port is another origin
    {"Origin": "null"},  # a sandboxed frame or a data: URL
)


def test_state_changing_requests_from_another_site_are_refused(tmp_path: Path) -> None:
    for client in guarded_client(tmp_path, token="s3cret"):
        for headers in CROSS_SITE:
            for path, body in (("/logout", b""), ("/login", b"token=s3cret"), ("/v1/traces", b"{}")):
                response = client.post(
                    path,
                    content=body,
                    headers={**headers, "Content-Type": "application/json"}
                    if path == "/v1/traces"
                    else {**headers, "Content-Type": "application/x-www-form-urlencoded"},
                )
                assert response.status_code == 403, (path, headers, response.text)
                assert "from another site is refused" in response.json()["detail"]
                assert "set-cookie" not in response.headers
        same = {"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:4318"}
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        signed_in = client.post("/login", content=b"token=s3cret", headers={**same, **form})
        assert signed_in.status_code == 303 and "auditor_session" in signed_in.headers["set-cookie"]
        old_browser = client.post(
            "/login", content=b"token=s3cret", headers={"Origin": "http://127.0.0.1:4318", **form}
        )
        assert old_browser.status_code == 303
        assert (
            client.post("/logout", headers={"Sec-Fetch-Site": "none"}).status_code == 303
        )  # typed by the user
        # Exporters and scripts send neither header: the receiver still answers them (and checks the token).
        assert (
            client.post("/v1/traces", content=b"{}", headers={"Content-Type": "application/json"}).status_code
            == 401
        )
        assert (
            client.get("/healthz", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 200
        )  # reads pass


# --- item 11: a signed-out session is over ----------------------------------------------------------


def test_sign_out_revokes_the_session_cookie(tmp_path: Path) -> None:
    """A cookie copied before sign-out (another tab, a stolen copy) no longer opens a page after it."""
    for client in guarded_client(tmp_path, token="s3cret"):
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        first = client.post("/login", content=b"token=s3cret", headers=form)
        second = client.post("/login", content=b"token=s3cret", headers=form)
        cookie_a = first.cookies["auditor_session"]
        cookie_b = second.cookies["auditor_session"]
        assert cookie_a != cookie_b  # one session per sign-in, not a value derived from the token alone
        assert "s3cret" not in cookie_a
        client.cookies.clear()

        def page(cookie: str, client: TestClient = client) -> int:
            return client.get("/runs", headers={"Cookie": f"auditor_session={cookie}"}).status_code

        assert page(cookie_a) == 200 and page(cookie_b) == 200
        out = client.post("/logout", headers={"Cookie": f"auditor_session={cookie_a}"})
        assert out.status_code == 303
        assert page(cookie_a) == 303  # back to /login: revoked
        assert page(cookie_b) == 200  # the other sign-in is its own session
        assert page("forged") == 303 and page("") == 303
