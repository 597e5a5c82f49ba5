"""``python -m benchmarks.peers --python /tmp/peers-venv/bin/python``: the auditor beside its peers.

Audits the generated records at the CLI default (store on), with ``--no-store``, in fused mode and
with the LLM decomposer against the fake server (:mod:`benchmarks.server`), then runs each peer in
its own venv (:mod:`benchmarks.peers.run`) against :mod:`benchmarks.peers.server`, and prints one
table (written as JSON too with ``--out``). Optional: not run by ``python -m benchmarks`` or in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.llm import _audit, _fresh_home, write_records
from benchmarks.server import ROOT, ServerProcess

#: (row name, decomposer, store) of the auditor rows, at the default settings (cascade, cache).
AUDITOR_ROWS: list[tuple[str, str, bool]] = [
    ("auditor, rules decomposer (CLI default, store on)", "rules", True),
    ("auditor, same with --no-store", "rules", False),
    ("auditor, fused", "fused", True),
    ("auditor, LLM decomposer", "llm", True),
]
PEER_ROWS = {"ragas": "RAGAS faithfulness", "deepeval": "DeepEval faithfulness"}


class PeerServer:
    """:mod:`benchmarks.peers.server` in a child process; :meth:`take` reads and resets its counts."""

    def __init__(self, latency: float) -> None:
        self._child = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.peers.server", "--latency", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        self.base_url = f"http://127.0.0.1:{self._line()}/v1"

    def _line(self) -> str:
        if self._child.stdout is None:
            raise RuntimeError("the peers' server is not running")
        line = self._child.stdout.readline()
        if not line:
            raise RuntimeError(f"the peers' server stopped (exit status {self._child.wait(timeout=10)})")
        return line.strip()

    def take(self) -> tuple[int, int, int]:
        """Requests, prompt tokens and completion tokens since the last call."""
        if self._child.stdin is None:
            raise RuntimeError("the peers' server is not running")
        self._child.stdin.write("counts\n")
        self._child.stdin.flush()
        requests, prompt, completion = (int(x) for x in self._line().split())
        return requests, prompt, completion

    def close(self) -> None:
        if self._child.stdin is not None:
            self._child.stdin.close()
        self._child.wait(timeout=10)


async def auditor_rows(records: Path, concurrency: int, latency: float) -> list[dict[str, Any]]:
    rows = []
    with ServerProcess(latency) as server:
        for name, decomposer, store in AUDITOR_ROWS:
            with _fresh_home():
                row = await _audit(
                    records,
                    server,
                    decomposer=decomposer,  # type: ignore[arg-type]
                    cascade=True,
                    cache=True,
                    concurrency=concurrency,
                    store=store,
                )
            n = row["answers"]
            rows.append(
                {
                    "system": name,
                    "answers": n,
                    "failures": row["unjudged"] or 0,
                    "calls_per_answer": row["llm_calls"] / n,
                    "prompt_tokens_per_answer": row["prompt_tokens_per_answer"],
                    "answers_per_second": row["answers_per_second"],
                }
            )
    return rows


def peer_row(peer: str, python: str, records: Path, server: PeerServer, concurrency: int) -> dict[str, Any]:
    server.take()
    limit = ("--concurrency", str(concurrency))
    done = subprocess.run(
        [python, "-m", "benchmarks.peers.run", peer, str(records), "--base-url", server.base_url, *limit],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        return {"system": PEER_ROWS[peer], "error": done.stderr.strip().splitlines()[-1:]}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    requests, prompt, _ = server.take()
    n = out["answers"]
    return {
        "system": PEER_ROWS[peer],
        "answers": n,
        "failures": out["failures"],
        "first_failure": out["first_failure"],
        "calls_per_answer": requests / n,
        "prompt_tokens_per_answer": prompt / n,
        "answers_per_second": n / out["seconds"],
    }


def table(rows: list[dict[str, Any]], concurrency: int, latency: float) -> str:
    ideal = concurrency / latency
    lines = [
        "| system | calls / answer | prompt tokens / answer (incl. schema) | answers/s, ratio to C / latency | failed |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['system']} | - | - | did not run: {' '.join(r['error'])} | - |")
            continue
        lines.append(
            f"| {r['system']} | {r['calls_per_answer']:.2f} | {r['prompt_tokens_per_answer']:,.0f} | "
            f"{r['answers_per_second']:.1f}, **{r['answers_per_second'] / ideal:.2f}** | {r['failures']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--python", required=True, help="the interpreter of the peers' venv")
    parser.add_argument("--answers", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--peer", choices=sorted(PEER_ROWS), action="append", default=None)
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="auditor-peers-") as tmp:
        records = Path(tmp) / "records.jsonl"
        write_records(records, args.answers)
        rows = asyncio.run(auditor_rows(records, args.concurrency, args.latency))
        server = PeerServer(args.latency)
        try:
            for peer in args.peer or sorted(PEER_ROWS, reverse=True):
                rows.append(peer_row(peer, args.python, records, server, args.concurrency))
        finally:
            server.close()
    print(
        f"{args.answers} generated answers, C = {args.concurrency}, latency {args.latency * 1000:.0f} ms "
        f"(C / latency = {args.concurrency / args.latency:.0f} answers/s)\n"
    )
    print(table(rows, args.concurrency, args.latency))
    if args.out is not None:
        args.out.write_text(
            json.dumps(
                {
                    "answers": args.answers,
                    "concurrency": args.concurrency,
                    "latency_seconds": args.latency,
                    "rows": rows,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
