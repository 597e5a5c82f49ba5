"""Ingest: adapter throughput as a ratio to ``json.loads`` alone, and peak memory at two file sizes.

Inputs are generated from the repository's trace fixtures (``tests/fixtures/*``): the OTLP JSON
lines of every scenario (OpenInference and OpenLLMetry) and the LangChain run trees written as JSONL
(one run per line), copied until the file reaches the wanted size, each copy with fresh trace, span
and run ids so no trace repeats.

Throughput: the same bytes are (1) parsed line by line with ``json.loads`` only and (2) read through
the adapter (``auditor.trace._ingest.iter_file``), in the same process; the ratio is adapter time / json time,
in wall time (``ratio_to_json``) and in this process's CPU time (``cpu_ratio_to_json``, steadier when
other processes share the machine).
The adapter reads the file's first 50 lines once, untimed, before it is timed (loading it and what it
imports on first use is start-up, not throughput; ``json`` is imported before either).
Peak memory: a fresh interpreter reads the file through the adapter, keeping nothing, and reports its
peak resident set size (``VmHWM``); an interpreter that imports the same modules and reads
nothing gives the baseline. Measured at two sizes: a streaming reader shows the same peak at both.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from auditor.trace import Trace
from auditor.trace._ingest import iter_file

ROOT = Path(__file__).resolve().parent.parent
# A checkout's fixtures, or the copy a plain install ships as ``benchmarks/fixtures`` (pyproject.toml).
FIXTURES = next(
    (p for p in (ROOT / "tests" / "fixtures", Path(__file__).resolve().parent / "fixtures") if p.is_dir()),
    ROOT / "tests" / "fixtures",
)
_HEX32 = re.compile(rb'"(traceId|trace_id)":\s*"([0-9a-f]{8})([0-9a-f]{24})"')
_UUID = re.compile(rb"[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def otlp_template() -> list[bytes]:
    lines: list[bytes] = []
    for path in sorted(FIXTURES.glob("*/*.otlp.jsonl")):
        lines.extend(line for line in path.read_bytes().splitlines() if line.strip())
    return lines


def langchain_template() -> list[bytes]:
    lines: list[bytes] = []
    for path in sorted(FIXTURES.glob("*/runtree.json")):
        runs = json.loads(path.read_bytes())
        lines.extend(json.dumps(run, separators=(",", ":")).encode() for run in runs)
    return lines


def _copy(lines: list[bytes], fmt: str, k: int) -> Iterator[bytes]:
    prefix = b"%08x" % k
    for line in lines:
        if fmt == "otlp-json":
            yield _HEX32.sub(lambda m: b'"' + m.group(1) + b'":"' + prefix + m.group(3) + b'"', line)
        else:
            yield _UUID.sub(lambda m: prefix + m.group(1), line)


def generate(path: Path, fmt: str, megabytes: float) -> int:
    """Write a file of about ``megabytes`` MB in ``fmt``; return its size in bytes."""
    lines = otlp_template() if fmt == "otlp-json" else langchain_template()
    wanted = int(megabytes * 1_000_000)
    written = 0
    with path.open("wb") as out:
        k = 1
        while written < wanted:
            for line in _copy(lines, fmt, k):
                out.write(line + b"\n")
                written += len(line) + 1
            k += 1
    return written


def _warm_up(path: Path, fmt: str, lines: int = 50) -> None:
    """Read the first lines of ``path`` through the adapter, untimed: loading the adapter and what it
    imports on first use (its JSON reader) is start-up, measured by ``benchmarks/startup.py``."""
    sample = path.with_suffix(".warm-up" + path.suffix)
    with path.open("rb") as handle, sample.open("wb") as out:
        for _, line in zip(range(lines), handle, strict=False):
            out.write(line)
    for _ in iter_file(sample, fmt):
        pass
    sample.unlink()


def throughput(path: Path, fmt: str) -> dict[str, Any]:
    """Spans per second through the adapter, and the ratio of its time to ``json.loads`` alone."""
    _warm_up(path, fmt)
    started, cpu = time.perf_counter(), time.process_time()
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                json.loads(line)
    json_seconds = time.perf_counter() - started
    json_cpu = time.process_time() - cpu
    spans = traces = 0
    started, cpu = time.perf_counter(), time.process_time()
    for item in iter_file(path, fmt):
        if isinstance(item, Trace):
            traces += 1
            spans += len(item.spans)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu
    size = path.stat().st_size
    return {
        "format": fmt,
        "megabytes": size / 1e6,
        "spans": spans,
        "traces": traces,
        "seconds": seconds,
        "spans_per_second": spans / seconds,
        "megabytes_per_second": size / 1e6 / seconds,
        "json_seconds": json_seconds,
        "ratio_to_json": seconds / json_seconds,
        # The same ratio in CPU time (this process's), steadier than wall time on a shared machine.
        "cpu_seconds": cpu_seconds,
        "json_cpu_seconds": json_cpu,
        "cpu_ratio_to_json": cpu_seconds / json_cpu,
    }


def peak_memory(path: Path | None, fmt: str) -> dict[str, Any]:
    """Run :mod:`benchmarks.memory_probe` in a fresh interpreter; ``path=None`` gives the baseline."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory_probe", fmt, str(path) if path else "-"],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def run(workdir: Path, quick: bool) -> dict[str, Any]:
    speed_mb, sizes = (5.0, (10.0, 40.0)) if quick else (20.0, (50.0, 200.0))
    results: dict[str, Any] = {"throughput": [], "memory": []}
    for fmt in ("otlp-json", "langchain"):
        small = workdir / f"speed.{fmt}.jsonl"
        generate(small, fmt, speed_mb)
        results["throughput"].append(throughput(small, fmt))
        small.unlink()
        baseline = peak_memory(None, fmt)["peak_rss_mb"]
        for megabytes in sizes:
            path = workdir / f"memory.{fmt}.{int(megabytes)}.jsonl"
            size = generate(path, fmt, megabytes)
            probe = peak_memory(path, fmt)
            path.unlink()
            results["memory"].append(
                {
                    "format": fmt,
                    "megabytes": size / 1e6,
                    "baseline_rss_mb": baseline,
                    "growth_mb": probe["peak_rss_mb"] - baseline,
                    **probe,
                }
            )
    return results
