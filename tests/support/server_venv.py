"""A server the tests run from a virtual environment of its own (Phoenix, MLflow): the environment
made once and reused, and the server started on loopback, awaited on its health URL and stopped
with every process it started.

Each such server pins its own dependencies, which must never change the packages the auditor is
tested with; ``scripts/test`` makes the environments before the tests (the install's output goes
to a log, shown only when it fails).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.support.serve import free_port

__all__ = ["ServerProcess", "ensure_venv", "free_port"]


def ensure_venv(venv: Path, requirement: str, command: str) -> Path:
    """``venv``'s ``command``, installing ``requirement`` into ``venv`` first when missing."""
    executable = venv / "bin" / command
    marker = venv / "installed.txt"  # written last: a half-made environment is made again
    if executable.exists() and marker.exists() and marker.read_text().strip() == requirement:
        return executable
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
            requirement,
        ],
    ]
    with log.open("w") as out:
        for step in steps:
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, check=False).returncode:
                raise RuntimeError(f"installing {requirement} into {venv} failed; see {log}")
    marker.write_text(requirement + "\n")
    return executable


class ServerProcess:
    """``args`` run in ``workdir`` with ``env``, its output in ``log``; up once ``health`` answers 200."""

    def __init__(
        self, name: str, args: Sequence[str], workdir: Path, env: Mapping[str, str], health: str, log: Path
    ) -> None:
        self.name = name
        self.args = list(args)
        self.workdir = workdir
        self.env = dict(env)
        self.health = health
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> None:
        with self.log.open("wb") as out:
            # A session of its own: the servers start workers as children, and :meth:`stop` ends
            # that group (its id is the server's pid), not a process found by name.
            self.process = subprocess.Popen(
                self.args,
                cwd=self.workdir,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}):\n{self.tail()}")
            with contextlib.suppress(OSError), urllib.request.urlopen(self.health, timeout=2) as answer:
                if answer.status == 200:
                    return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer within {timeout:.0f} s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """End the server's process group: the server and every worker it started."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        deadline = time.monotonic() + 10  # the children outlive the parent by a moment
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
