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

import os
from pathlib import Path

from tests.support.server_venv import ServerProcess, free_port
from tests.support.server_venv import ensure_venv as _ensure

ROOT = Path(__file__).resolve().parents[2]
#: The MLflow release the tests run against (the client in the test extra is the same release's
#: ``mlflow-tracing``).
REQUIREMENT = "mlflow==3.17.2"

__all__ = ["REQUIREMENT", "MlflowServer", "ensure_venv", "free_port", "quiet_env", "venv_path"]


def venv_path() -> Path:
    return Path(os.environ.get("AUDITOR_MLFLOW_VENV") or ROOT / ".venv-mlflow")


def ensure_venv() -> Path:
    """The environment's ``mlflow`` command, installing :data:`REQUIREMENT` first when missing."""
    return _ensure(venv_path(), REQUIREMENT, "mlflow")


def quiet_env() -> dict[str, str]:
    """This process's environment without MLflow's or OTel's settings, MLflow's telemetry off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "OTEL_"))}
    env["MLFLOW_DISABLE_TELEMETRY"] = "true"
    env["DO_NOT_TRACK"] = "true"
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"  # no job runner (seven huey consumers)
    return env


class MlflowServer(ServerProcess):
    """``mlflow server`` in ``workdir`` (SQLite store, artifacts beside it); ``url`` once started."""

    def __init__(self, command: Path, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [
            str(command), "server", "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1",
            "--backend-store-uri", f"sqlite:///{workdir / 'mlflow.db'}",
            "--artifacts-destination", str(workdir / "artifacts"),
        ]  # fmt: skip
        super().__init__(
            "mlflow server", args, workdir, quiet_env(), f"{self.url}/health", workdir / "mlflow.log"
        )

    def start(self, timeout: float = 120.0) -> MlflowServer:
        super().start(timeout)
        return self


if __name__ == "__main__":
    print(ensure_venv().parent.parent)
