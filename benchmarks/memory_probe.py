"""Read one trace file through its adapter, keeping nothing, and print the process's peak RSS (VmHWM) as JSON.

Run in a fresh interpreter by :mod:`benchmarks.ingest`: ``python -m benchmarks.memory_probe FORMAT PATH``
(``PATH`` may be ``-`` to measure the interpreter with the adapters imported and nothing read).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from auditor.trace import Trace, get_adapter
from auditor.trace._ingest import iter_file


def _peak_kb() -> int:
    """The peak resident set of this process in kB.

    ``VmHWM`` from ``/proc/self/status`` where there is one: ``ru_maxrss`` survives ``fork`` + ``exec`` on
    Linux, so a child started by a large parent would report at least the parent's size.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def main(argv: list[str]) -> None:
    fmt, target = argv
    get_adapter(fmt)  # import the adapter even for the baseline
    spans = traces = problems = 0
    started = time.perf_counter()
    if target != "-":
        for item in iter_file(Path(target), fmt):
            if isinstance(item, Trace):
                traces += 1
                spans += len(item.spans)
            else:
                problems += 1
    peak_kb = _peak_kb()
    print(
        json.dumps(
            {
                "peak_rss_mb": peak_kb / 1024,
                "spans": spans,
                "traces": traces,
                "problems": problems,
                "seconds": time.perf_counter() - started,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
