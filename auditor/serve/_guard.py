"""The server's front door against hostile web pages: which ``Host`` it answers, which sites may post.

**DNS rebinding.** A page on ``evil.example`` can have its name re-resolve to ``127.0.0.1`` and then
read a loopback server as its own origin: the browser sends ``Host: evil.example``. So every HTTP
request's ``Host`` must name this server: the address it is bound to (any loopback address and
``localhost`` when bound to loopback; any IP address, ``localhost`` and the machine's host name when
bound to every interface), or a name listed in ``AUDITOR_SERVE_HOSTS`` (``*``: any). An IP address
cannot be rebound, so only names need listing. Anything else is a 400 naming the setting.

**Cross-site requests.** A page on another site can make the browser *post* to this server (a form,
``fetch`` in ``no-cors`` mode) even when it cannot read the answer: sign the user out, sign them in
as someone else, or feed spans to the receiver. Requests with a method other than GET, HEAD and
OPTIONS are refused (403) when the browser says they come from another site: ``Sec-Fetch-Site`` is
``cross-site`` or ``same-site``, or, from older browsers that send no ``Sec-Fetch-Site``, ``Origin`` is
``null`` or names another host. Clients that send neither (OTLP exporters, scripts) are not browsers
and pass; the bearer token still applies to them.

A pure ASGI middleware (not Starlette's ``BaseHTTPMiddleware``, which buffers streamed bodies), over
HTTP only: the gRPC receiver is not reachable from a browser.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

#: Methods a browser may send from any site: they must not change anything (they do not here).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


def split_host(value: str) -> str:
    """The host name or address of a ``Host`` header (or an origin's netloc), lower-cased, no port."""
    value = value.strip().lower()
    if value.startswith("["):  # [v6]:port
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        value = value.rsplit(":", 1)[0]
    return value.rstrip(".")


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


@dataclass(frozen=True)
class HostPolicy:
    """Which ``Host`` values a server bound to ``bound`` answers (module docstring)."""

    bound: str
    names: frozenset[str]  # configured names, lower-cased; "*" allows any
    local_names: frozenset[str]  # names this machine answers to by itself

    @classmethod
    def build(cls, bound: str, configured: Iterable[str]) -> HostPolicy:
        bound = split_host(bound)
        local = {"localhost"}
        if bound in WILDCARD_BINDS:
            local.add(socket.gethostname().lower())
        elif _address(bound) is None:
            local.add(bound)  # bound by name: that name
        return cls(bound, frozenset(split_host(n) for n in configured if n.strip()), frozenset(local))

    def allows(self, host: str) -> bool:
        if "*" in self.names or host in self.names or host in self.local_names:
            return True
        address = _address(host)
        if address is None:
            return False
        if self.bound in WILDCARD_BINDS:
            return True
        bound = _address(self.bound)
        return address == bound or (address.is_loopback and (bound is None or bound.is_loopback))


def cross_site(headers: dict[str, str], host: str) -> str | None:
    """Why a request is from another site, as the browser reports it; None when it is not."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return f"Sec-Fetch-Site: {fetch_site}" if fetch_site in ("cross-site", "same-site") else None
    origin = headers.get("origin")
    if origin is None:
        return None  # not a browser, or a browser that sends neither: nothing to go on
    if origin == "null":
        return "Origin: null"
    netloc = urlsplit(origin).netloc.lower()
    return None if netloc == host.strip().lower() else f"Origin: {origin}"


class RequestGuard:
    """ASGI middleware applying :class:`HostPolicy` and :func:`cross_site` to every HTTP request."""

    def __init__(self, app: ASGIApp, hosts: HostPolicy) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if host and not self.hosts.allows(split_host(host)):
            await _refuse(
                send,
                400,
                f"Host {split_host(host)!r} is not a name this server answers to: if it is this "
                "server's, add it to AUDITOR_SERVE_HOSTS (comma-separated; --allowed-host).",
            )
            return
        if scope["method"] not in SAFE_METHODS and (why := cross_site(headers, host)) is not None:
            await _refuse(
                send,
                403,
                f"{scope['method']} {scope['path']} from another site is refused ({why}): "
                "open this server's own page to do that.",
            )
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
