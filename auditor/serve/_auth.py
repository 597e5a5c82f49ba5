"""The token in front of the API and the web pages, when the server has one.

The API takes ``Authorization: Bearer <token>`` (scripts and exporters). A browser signs in once
with a form (``POST /login``, the token in the request body) that sets an HttpOnly, SameSite=Strict
cookie; a form rather than ``?token=`` because a token in a URL is kept in the browser's history,
in access logs and in ``Referer`` headers. The cookie holds an HMAC of the token, not the token,
so a copied cookie does not reveal the bearer token the exporters use; changing the token signs
every browser out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import parse_qs, quote

from fastapi import HTTPException, Request

COOKIE = "auditor_session"
#: Login bodies larger than this are refused (a token is short).
MAX_LOGIN_BODY = 4096


#: What a refused client is told, on every transport.
BEARER_HINT = "missing or wrong bearer token: send `Authorization: Bearer <AUDITOR_SERVE_TOKEN>`"


def bearer_matches(token: str | None, header: str | None) -> bool:
    """Whether ``header`` is ``Bearer <token>``; always true when no token is configured."""
    if token is None:
        return True
    scheme, _, value = (header or "").partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(value.strip().encode(), token.encode())


class Access:
    """Checks requests against ``token`` (None: everything is open, as on loopback by default)."""

    def __init__(self, token: str | None) -> None:
        self.token = token

    def _session(self) -> str:
        return hmac.new((self.token or "").encode(), b"auditor-serve-ui", hashlib.sha256).hexdigest()

    def bearer_ok(self, header: str | None) -> bool:
        return bearer_matches(self.token, header)

    def cookie_ok(self, request: Request) -> bool:
        if self.token is None:
            return True
        given = request.cookies.get(COOKIE, "")
        return secrets.compare_digest(given.encode(), self._session().encode())

    def api(self, request: Request) -> None:
        """A FastAPI dependency: the bearer token, or 401 saying how to send it."""
        if not self.bearer_ok(request.headers.get("authorization")):
            raise HTTPException(401, BEARER_HINT, headers={"WWW-Authenticate": "Bearer"})

    def page_ok(self, request: Request) -> bool:
        return self.cookie_ok(request) or self.bearer_ok(request.headers.get("authorization"))

    def check_login(self, body: bytes) -> bool:
        """Whether a login form body (``token=...``) carries the token."""
        if self.token is None:
            return True
        try:
            values = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4).get("token", [""])
        except ValueError:  # more fields than a sign-in form has
            return False
        return secrets.compare_digest(values[0].strip().encode(), self.token.encode())

    def session_value(self) -> str:
        return self._session() if self.token is not None else ""


def local_path(target: str | None) -> str:
    """``target`` when it is a path on this server, else ``/`` (no open redirect after login)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def login_url(request: Request) -> str:
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return "/login?next=" + quote(here, safe="")
