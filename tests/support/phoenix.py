"""A real Arize Phoenix server for the ``phoenix`` tests, from its own virtual environment.

Phoenix (``arize-phoenix`` from PyPI: a web server with its own pinned dependencies) is installed
into a virtual environment of its own, ``.venv-phoenix`` at the repository root
(``AUDITOR_PHOENIX_VENV`` moves it), so it never changes the packages the auditor is tested
with. :func:`ensure_venv` creates it when it is missing (``scripts/test`` calls it before the
tests; the install's output goes to a log, shown only when it fails). :class:`PhoenixServer`
runs ``phoenix serve`` on loopback, on free ports, with its SQLite database and working directory
in a temporary directory, its telemetry and fetches from the internet turned off.

``python -m tests.support.phoenix`` creates the environment and prints where it is.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The Phoenix release the tests run against (its REST API and client change between majors).
REQUIREMENT = "arize-phoenix==20.26.1"


def venv_path() -> Path:
    return Path(os.environ.get("AUDITOR_PHOENIX_VENV") or ROOT / ".venv-phoenix")


def ensure_venv() -> Path:
    """The environment's ``phoenix`` command, installing :data:`REQUIREMENT` first when missing."""
    venv = venv_path()
    command = venv / "bin" / "phoenix"
    marker = venv / "installed.txt"  # written last: a half-made environment is made again
    if command.exists() and marker.exists() and marker.read_text().strip() == REQUIREMENT:
        return command
    log = venv.parent / f"{venv.name}-install.log"
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            REQUIREMENT,
        ],
    ]
    with log.open("w") as out:
        for step in steps:
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, check=False).returncode:
                raise RuntimeError(f"installing {REQUIREMENT} into {venv} failed; see {log}")
    marker.write_text(REQUIREMENT + "\n")
    return command


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PhoenixServer:
    """``phoenix serve`` in ``workdir``; ``url`` once :meth:`start` returned."""

    def __init__(self, command: Path, workdir: Path) -> None:
        self.command = command
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "phoenix.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> PhoenixServer:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
        env.update(
            PHOENIX_WORKING_DIR=str(self.workdir),
            PHOENIX_SQL_DATABASE_URL=f"sqlite:///{self.workdir / 'phoenix.db'}",
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(free_port()),
            PHOENIX_TELEMETRY_ENABLED="false",
            PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
        )
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(self.command), "serve"], cwd=self.workdir, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"phoenix serve exited ({self.process.returncode}):\n{self.tail()}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer,
            ):
                if answer.status == 200:
                    return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"phoenix serve did not answer within {timeout:.0f} s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


if __name__ == "__main__":
    try:
        print(ensure_venv().parent.parent)
    except RuntimeError as err:
        log = venv_path().parent / f"{venv_path().name}-install.log"
        print(log.read_text(errors="replace")[-4000:] if log.exists() else "", file=sys.stderr)
        sys.exit(f"{err}")
