"""A real MLflow tracking server for the ``mlflow`` tests, from its own virtual environment.

The server (``mlflow`` from PyPI: the full package, with its web server, SQLAlchemy store and
pinned dependencies) is installed into a virtual environment of its own, ``.venv-mlflow`` at the
repository root (``AUDITOR_MLFLOW_VENV`` moves it), so it never changes the packages the auditor
is tested with (those have only ``mlflow-tracing``, the client). :func:`ensure_venv` creates it
when it is missing (``scripts/test`` calls it before the tests; the install's output goes to a
log, shown only when it fails). :class:`MlflowServer` runs ``mlflow server`` on loopback, on a free
port, with its SQLite backend store and artifacts in a temporary directory and its telemetry off.

``python -m tests.support.mlflow_server`` creates the environment and prints where it is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The MLflow release the tests run against (the client in the test extra is the same release's
#: ``mlflow-tracing``).
REQUIREMENT = "mlflow==3.17.2"


def venv_path() -> Path:
    return Path(os.environ.get("AUDITOR_MLFLOW_VENV") or ROOT / ".venv-mlflow")


def ensure_venv() -> Path:
    """The environment's ``mlflow`` command, installing :data:`REQUIREMENT` first when missing."""
    venv = venv_path()
    command = venv / "bin" / "mlflow"
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


def quiet_env() -> dict[str, str]:
    """This process's environment without MLflow's or OTel's settings, MLflow's telemetry off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "OTEL_"))}
    env["MLFLOW_DISABLE_TELEMETRY"] = "true"
    env["DO_NOT_TRACK"] = "true"
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"  # no job runner (seven huey consumers)
    return env


class MlflowServer:
    """``mlflow server`` in ``workdir``; ``url`` once :meth:`start` returned."""

    def __init__(self, command: Path, workdir: Path) -> None:
        self.command = command
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "mlflow.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> MlflowServer:
        args = [
            str(self.command),
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            "1",
            "--backend-store-uri",
            f"sqlite:///{self.workdir / 'mlflow.db'}",
            "--artifacts-destination",
            str(self.workdir / "artifacts"),
        ]
        with self.log.open("wb") as out:
            # A session of its own: ``mlflow server`` starts uvicorn and a job runner as children,
            # and :meth:`stop` ends that group (its id is the server's pid), not a process by name.
            self.process = subprocess.Popen(
                args,
                cwd=self.workdir,
                env=quiet_env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mlflow server exited ({self.process.returncode}):\n{self.tail()}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/health", timeout=2) as response,
            ):
                if response.status == 200:
                    return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"mlflow server did not answer within {timeout:.0f} s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """End the server's process group (the server, uvicorn, the job runner)."""
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


if __name__ == "__main__":
    print(ensure_venv().parent.parent)
