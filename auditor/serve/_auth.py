"""The token in front of the API and the web pages, when the server has one.

The API takes ``Authorization: Bearer <token>`` (scripts and exporters). A browser signs in once
with a form (``POST /login``, the token in the request body) that sets an HttpOnly, SameSite=Strict
cookie; a form rather than ``?token=`` because a token in a URL is kept in the browser's history,
in access logs and in ``Referer`` headers. The cookie holds a random session id, one per sign-in,
kept in the store (:class:`auditor.store.SignIns`: only its hash, for 12 hours): signing out
revokes it on every replica, so a copy of the cookie taken before is worth nothing after, and
changing the token signs every browser out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import parse_qs, quote

from fastapi import HTTPException, Request

from auditor.store import SignIns

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
    """Checks requests against ``token`` (None: everything is open, as on loopback by default).

    Sign-ins live in ``sign_ins`` (the store); without it (a token but no store) no cookie is valid.
    """

    def __init__(self, token: str | None, sign_ins: SignIns | None = None) -> None:
        self.token = token
        self.sign_ins = sign_ins

    def _token_mac(self) -> str:
        return hmac.new((self.token or "").encode(), b"auditor-serve-ui", hashlib.sha256).hexdigest()

    def bearer_ok(self, header: str | None) -> bool:
        return bearer_matches(self.token, header)

    def cookie_ok(self, request: Request) -> bool:
        if self.token is None:
            return True
        given = request.cookies.get(COOKIE, "")
        return self.sign_ins is not None and self.sign_ins.valid(given, self._token_mac())

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
        """A new sign-in's cookie value (empty when there is no token: nothing to sign in to)."""
        if self.token is None or self.sign_ins is None:
            return ""
        return self.sign_ins.open(self._token_mac())

    def sign_out(self, request: Request) -> None:
        """Revoke the sign-in the request's cookie holds, if any."""
        given = request.cookies.get(COOKIE, "")
        if self.sign_ins is not None and given:
            self.sign_ins.revoke(given)


def local_path(target: str | None) -> str:
    """``target`` when it is a path on this server, else ``/`` (no open redirect after login)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def login_url(request: Request) -> str:
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return "/login?next=" + quote(here, safe="")
