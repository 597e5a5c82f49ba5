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

import os
import sys
from pathlib import Path

from tests.support.server_venv import ServerProcess, free_port
from tests.support.server_venv import ensure_venv as _ensure

ROOT = Path(__file__).resolve().parents[2]
#: The Phoenix release the tests run against (its REST API and client change between majors).
REQUIREMENT = "arize-phoenix==20.26.1"

__all__ = ["REQUIREMENT", "PhoenixServer", "ensure_venv", "free_port", "venv_path"]


def venv_path() -> Path:
    return Path(os.environ.get("AUDITOR_PHOENIX_VENV") or ROOT / ".venv-phoenix")


def ensure_venv() -> Path:
    """The environment's ``phoenix`` command, installing :data:`REQUIREMENT` first when missing."""
    return _ensure(venv_path(), REQUIREMENT, "phoenix")


class PhoenixServer(ServerProcess):
    """``phoenix serve`` in ``workdir`` (SQLite, telemetry and outside fetches off); ``url`` once started."""

    def __init__(self, command: Path, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
        env.update(
            PHOENIX_WORKING_DIR=str(workdir),
            PHOENIX_SQL_DATABASE_URL=f"sqlite:///{workdir / 'phoenix.db'}",
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(free_port()),
            PHOENIX_TELEMETRY_ENABLED="false",
            PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
        )
        super().__init__(
            "phoenix serve",
            [str(command), "serve"],
            workdir,
            env,
            f"{self.url}/healthz",
            workdir / "phoenix.log",
        )

    def start(self, timeout: float = 120.0) -> PhoenixServer:
        super().start(timeout)
        return self


if __name__ == "__main__":
    try:
        print(ensure_venv().parent.parent)
    except RuntimeError as err:
        log = venv_path().parent / f"{venv_path().name}-install.log"
        print(log.read_text(errors="replace")[-4000:] if log.exists() else "", file=sys.stderr)
        sys.exit(f"{err}")
