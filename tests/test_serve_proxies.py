"""``X-Forwarded-For`` is believed only from the proxies ``AUDITOR_SERVE_PROXIES`` names (issue 29, item 10).

Against a real ``auditor serve`` process: uvicorn believed the header from any loopback peer by
default, so one client could take a fresh rate-limit bucket per request by naming a new address.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from auditor.errors import UsageError
from auditor.serve import serve_config
from tests.support.serve import Server, running_server

PROTO = {"Content-Type": "application/x-protobuf"}
#: One request a second per client: the second from the same client within the second is a 429.
ENV = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_RATE": "1"}


def statuses(server: Server, forwarded: list[str]) -> list[int]:
    """Empty OTLP requests (valid, no spans), each claiming to be forwarded for one address."""
    return [
        httpx.post(
            server.url + "/v1/traces", content=b"", headers={**PROTO, "X-Forwarded-For": address}, timeout=10
        ).status_code
        for address in forwarded
    ]


def test_a_forwarded_address_from_an_untrusted_peer_is_ignored(tmp_path: Path) -> None:
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=ENV) as server:
        got = statuses(server, [f"203.0.113.{n}" for n in range(1, 5)])
        assert got[0] == 200 and 429 in got[1:], got  # one client (this loopback peer), one bucket


def test_a_configured_proxy_is_believed(tmp_path: Path) -> None:
    env = {**ENV, "AUDITOR_SERVE_PROXIES": "127.0.0.0/8, ::1"}
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=env) as server:
        assert statuses(server, [f"203.0.113.{n}" for n in range(1, 5)]) == [200] * 4  # four clients
        again = statuses(server, ["198.51.100.9"] * 4)
        assert again[0] == 200 and 429 in again[1:], again  # one client behind the proxy, one bucket


@pytest.mark.parametrize("value", ["everyone", "10.0.0.0/33", "*"])
def test_a_bad_proxy_list_is_one_line(value: str) -> None:
    with pytest.raises(UsageError, match="AUDITOR_SERVE_PROXIES"):
        serve_config(proxies=value)
