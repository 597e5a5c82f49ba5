"""The fake OpenAI server in a process of its own, for the LLM throughput figures.

In the benchmark's process the server's work (reading the prompt, the offline judge behind each
verdict, JSON) would share the interpreter lock with the auditor it is serving, and the figure
would measure both; a real endpoint is another machine. ``python -m benchmarks.server --latency
0.2`` prints its port on the first line, then answers each line on stdin: ``requests`` with the
number of chat requests served so far (how the benchmark counts HTTP requests), ``bodies N PATH``
by writing the request bodies from the N-th on to ``PATH`` (JSON lines) and printing how many (how
the bare-client row replays the auditor's own requests), ``cpu`` with the CPU seconds the server
process has used (its share of the machine's two cores); end of input stops it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

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
        return int(self._ask("requests"))

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds the server process has used so far (every thread of it)."""
        return float(self._ask("cpu"))

    def bodies(self, since: int, path: Path) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests from the ``since``-th on, as the server received them."""
        self._ask(f"bodies {since} {path}")
        with path.open(encoding="utf-8") as lines:
            return [json.loads(line) for line in lines]

    def _ask(self, command: str) -> str:
        if self._child is None or self._child.stdin is None:
            raise RuntimeError("the fake server is not running")
        self._child.stdin.write(command + "\n")
        self._child.stdin.flush()
        return self._line()

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
        for line in sys.stdin:
            command, *rest = line.rstrip("\n").split(" ", 2)
            if command == "bodies":
                bodies = server.bodies[int(rest[0]) :]
                with open(rest[1], "w", encoding="utf-8") as out:
                    out.writelines(json.dumps(b) + "\n" for b in bodies)
                print(len(bodies), flush=True)
            elif command == "cpu":
                print(time.process_time(), flush=True)
            else:
                print(server.requests, flush=True)


if __name__ == "__main__":
    main()
