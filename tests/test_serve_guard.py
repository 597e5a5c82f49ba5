"""The server's guard rails against hostile browsers and clients (issue 29, items 9 to 11 and 16).

Everything goes through the real application (FastAPI's ``TestClient`` over a SQLite store), the
way a browser or a script would reach it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

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
