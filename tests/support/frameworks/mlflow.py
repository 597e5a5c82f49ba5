"""MLflow Tracing fixture: a plain-code agent traced by MLflow itself, as MLflow exports it over OTLP.

The agent is :mod:`tests.support.mlflow_agent` (the MLflow source's tests run the same one): the
OpenAI client on the scripted model with ``mlflow.openai.autolog()``, ``mlflow.trace`` on the tools
and the loop. MLflow needs a tracking server to trace into: a real one is started from
``.venv-mlflow`` (:mod:`tests.support.mlflow_server`), and MLflow's dual export
(``MLFLOW_TRACE_ENABLE_OTLP_DUAL_EXPORT``) sends the same spans over OTLP/HTTP to a loopback sink
that writes them as the Collector's file exporter would (``format: proto``: each request with its
4-byte length): ``agent.otlp.pb``.

    scripts/framework-fixtures mlflow     # mlflow.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.mlflow_server import ROOT, MlflowServer, ensure_venv, quiet_env
from tests.support.otlp_sink import OtlpSink


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    path = args.out / "agent.otlp.pb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="mlflow-server-") as workdir:
        server = MlflowServer(ensure_venv(), Path(workdir)).start()
        try:
            with OtlpSink(path) as sink:
                # A process of its own: MLflow exports the last batch as the process exits.
                agent = [sys.executable, "-m", "tests.support.mlflow_agent", "--tracking-uri", server.url]
                agent += ["--experiment", "support-agent", "--otlp-endpoint", sink.endpoint]
                subprocess.run(agent, cwd=ROOT, env=quiet_env(), check=True)
        finally:
            server.stop()
    print(f"{path}: {sink.requests} export request(s)")


if __name__ == "__main__":
    main()
