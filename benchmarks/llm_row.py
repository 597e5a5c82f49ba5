"""``python -m benchmarks.llm_row [--answers N] [--concurrency C] [--decomposer D] [--no-store] [--repeats R]``.

One default-settings row of the LLM table (the benchmark's own ``_audit_fresh``: cascade and
verdict cache on, a fresh app directory) against the fake server in its own process, printed as
a line per run. For alternated comparisons of two checkouts (run it from each in turn) and for
instruction counts (``valgrind --tool=cachegrind --cache-sim=no`` on two sizes: the difference
cancels start-up), which the whole benchmark is too long for.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import get_args

from auditor.judges import Decomposer
from auditor.llm import run_sync
from benchmarks import llm
from benchmarks.server import ServerProcess


async def _rows(answers: int, concurrency: int, decomposer: Decomposer, store: bool, repeats: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-row-"))
    path = workdir / "records.jsonl"
    llm.write_records(path, answers)
    with ServerProcess(0.2) as server:
        await llm.warm_up(server, workdir, 32, 8)  # as the benchmark does
        for _ in range(repeats):
            row = llm._bounded(
                await llm._audit_fresh(
                    path, server, decomposer=decomposer, concurrency=concurrency, store=store
                ),
                0.2,
            )
            print(
                f"{decomposer} C={concurrency} store={store} answers={answers}: "
                f"ratio to bound {row['ratio_to_bound']:.3f}, {row['answers_per_second']:.1f} answers/s, "
                f"auditor CPU {row['cpu_ms_per_answer']:.2f} ms/answer, "
                f"server CPU {row['server_cpu_ms_per_request']:.2f} ms/request",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.llm_row", description=__doc__)
    parser.add_argument(
        "--answers", type=int, default=None, help="records to audit (default: 24 rounds of C)"
    )
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--decomposer", choices=get_args(Decomposer), default="rules")
    parser.add_argument("--no-store", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    answers = args.answers or 24 * args.concurrency
    run_sync(lambda: _rows(answers, args.concurrency, args.decomposer, not args.no_store, args.repeats))


if __name__ == "__main__":
    main()
