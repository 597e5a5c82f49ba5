"""The fake OpenAI server in a process of its own, for the LLM throughput figures.

In the benchmark's process the server's work (reading the prompt, the offline judge behind each
verdict, JSON) would share the interpreter lock with the auditor it is serving, and the figure
would measure both; a real endpoint is another machine. ``python -m benchmarks.server --latency
0.2`` prints its port on the first line, then answers each line on stdin with the number of chat
requests served so far (how the benchmark counts HTTP requests); end of input stops it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parent.parent


class ServerProcess:
    """``tests.support.fake_openai.FakeOpenAI`` (verdicts from the offline judge) in a child process.

    Args:
        latency: seconds each request waits before it is answered.
    """

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self._child: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> ServerProcess:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        self._child = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.server", "--latency", str(self.latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self.port = int(self._line())
        return self

    def _line(self) -> str:
        if self._child is None or self._child.stdout is None:
            raise RuntimeError("the fake server is not running")
        line = self._child.stdout.readline()
        if not line:
            raise RuntimeError(f"the fake server stopped (exit status {self._child.wait(timeout=10)})")
        return line.strip()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> int:
        """Chat requests the server has answered so far."""
        if self._child is None or self._child.stdin is None:
            raise RuntimeError("the fake server is not running")
        self._child.stdin.write("requests\n")
        self._child.stdin.flush()
        return int(self._line())

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


def main() -> None:
    from benchmarks.fake import FakeOpenAI

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    with FakeOpenAI(port=0, latency=args.latency, offline_judge=True) as server:
        print(server.port, flush=True)
        for _ in sys.stdin:
            print(server.requests, flush=True)


if __name__ == "__main__":
    main()
