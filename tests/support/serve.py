"""Start ``auditor serve`` as a real process on a free loopback port, for the serve tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

#: Generous bounds: start-up imports FastAPI and the pipeline; an audit of a fixture takes well under a second.
START_TIMEOUT = 30.0
WAIT_TIMEOUT = 30.0


def drain(store: Any, timeout: float = WAIT_TIMEOUT) -> None:
    """Wait until the server has read every acknowledged body of ``store`` into spans (it answers
    once a body is committed, and reads it right after)."""
    from auditor.store import BodyQueue

    deadline = time.monotonic() + timeout
    while BodyQueue(store).backlog()[0]:
        if time.monotonic() > deadline:
            raise AssertionError(f"acknowledged bodies still unread after {timeout} s")
        time.sleep(0.02)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    headers: dict[str, str]
    grpc_port: int | None = None  # with ``running_server(..., grpc=True)``

    def get(self, path: str, **params: Any) -> Any:
        response = httpx.get(self.url + path, params=params, headers=self.headers, timeout=10)
        response.raise_for_status()
        return response.json()

    def wait_for(self, path: str, done: Any, timeout: float = WAIT_TIMEOUT, **params: Any) -> Any:
        """Poll ``path`` until ``done(json)`` holds; the last JSON."""
        deadline = time.monotonic() + timeout
        while True:
            data = self.get(path, **params)
            if done(data):
                return data
            if time.monotonic() > deadline:
                raise AssertionError(f"{path} never satisfied the condition; last: {data}")
            time.sleep(0.1)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


@contextmanager
def running_server(
    db_url: str,
    *args: str,
    env: dict[str, str] | None = None,
    token: str | None = None,
    grpc: bool = False,
) -> Iterator[Server]:
    """``auditor serve --db db_url ARGS`` on a free port, stopped (SIGTERM, then SIGKILL) afterwards.

    With ``grpc``, OTLP/gRPC is served too (``--grpc --grpc-port``, a second free port).
    """
    port = free_port()
    grpc_port = free_port() if grpc else None
    if grpc_port is not None:
        args = (*args, "--grpc", "--grpc-port", str(grpc_port))
    environment = {**os.environ, **(env or {})}
    if token is not None:
        environment["AUDITOR_SERVE_TOKEN"] = token
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "serve",
            "--port",
            str(port),
            "--db",
            db_url,
            *args,
        ],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server = Server(
        f"http://127.0.0.1:{port}", process, {"Authorization": f"Bearer {token}"} if token else {}, grpc_port
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise AssertionError(
                    f"auditor serve exited: {process.stderr.read().decode() if process.stderr else ''}"
                )
            try:
                if httpx.get(server.url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("auditor serve did not start")
            time.sleep(0.1)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        if process.stderr is not None:
            process.stderr.close()
