"""A whole offline audit from the command line, as a ratio to the offline judge alone, same run.

``auditor audit DEV --format records --judge offline --json -`` is run through the CLI itself
(click's runner, in this process, so interpreter start-up is not counted), with the store on in a
fresh ``AUDITOR_HOME`` (the default SQLite file, created and migrated before the clock starts),
and again with ``--no-store``; and once more with the console listing instead of the JSON (every
claim printed through rich), to show what the listing costs. Its claims/s (claims judged / wall seconds; also per CPU-second) are
divided by the offline judge's in-process claims/s on the same answers with evidence preparation
included (``OfflineJudge.judge_sync``, as in :mod:`benchmarks.judge`), measured in the same run.
The evidence-preparation and quote-check caches are cleared before every measurement, as a new process starts
with them empty. Each figure is the median of ``repeats`` runs, the judge's and the CLI's
interleaved. The ratio is also given per CPU-second
(the CLI's CPU, every thread, over the judge's), which a shared machine's load moves much less.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from auditor.cli import cli
from auditor.run import audit_async
from auditor.store import Store
from auditor.trace import FORMAT
from benchmarks import judge
from benchmarks.llm import _fresh_home, clear_caches


def _clear_caches() -> None:
    """Every per-process cache a fresh ``auditor`` process starts without (evidence, quotes, intervals)."""
    judge._clear_caches()
    clear_caches()


def _cli(dev: Path, *options: str) -> dict[str, float]:
    _clear_caches()
    with _fresh_home():
        if "--no-store" not in options:
            Store().close()
        started, cpu = time.perf_counter(), time.process_time()
        out = CliRunner().invoke(
            cli, ["audit", str(dev), "--format", "records", "--judge", "offline", *options]
        )
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    if out.exit_code not in (0, 3):  # 3: some claims unjudged (the audit ran)
        raise RuntimeError(f"auditor audit exited {out.exit_code}: {out.output[-2000:]}")
    return {"seconds": seconds, "cpu_seconds": cpu_seconds}


def run(dev: Path = judge.DEV, repeats: int = 3) -> dict[str, Any]:
    _, audits = asyncio.run(audit_async([dev], judge="offline", format=FORMAT, store=False))
    variants: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("store", ("--json", "-")),
        ("no_store", ("--json", "-", "--no-store")),
        ("listing", ()),
    )
    judged: list[float] = []
    judged_cpu: list[float] = []
    timed: dict[str, list[dict[str, float]]] = {name: [] for name, _ in variants}
    claims = 0
    # Interleaved (the judge, then each variant, repeat after repeat): a machine whose speed drifts
    # over the minute the table takes moves the judge's figure and the CLI's alike.
    for _ in range(repeats):
        _clear_caches()
        cpu = time.process_time()
        claims, seconds = judge._time_judge(audits)
        judged.append(seconds)
        judged_cpu.append(time.process_time() - cpu)
        for name, options in variants:
            timed[name].append(_cli(dev, *options))
    results: dict[str, Any] = {
        "dev_path": str(dev),
        "records": len(audits),
        "claims_judged": claims,
        "repeats": repeats,
        "judge_seconds": statistics.median(judged),
        "judge_claims_per_second": claims / statistics.median(judged),
        # CPU time moves less than wall time on a shared machine: the same ratio per CPU-second.
        "judge_cpu_seconds": statistics.median(judged_cpu),
        "judge_claims_per_cpu_second": claims / statistics.median(judged_cpu),
    }
    for name, _ in variants:
        seconds = statistics.median(t["seconds"] for t in timed[name])
        cpu = statistics.median(t["cpu_seconds"] for t in timed[name])
        results[name] = {
            "seconds": seconds,
            "cpu_seconds": cpu,
            "claims_per_second": claims / seconds,
            "claims_per_cpu_second": claims / cpu if cpu else None,
            "ratio_to_judge": claims / seconds / results["judge_claims_per_second"],
            "cpu_ratio_to_judge": (claims / cpu / results["judge_claims_per_cpu_second"]) if cpu else None,
        }
    return results


def table(ee: dict[str, Any]) -> tuple[str, list[str], list[list[Any]]]:
    """The title, header and rows of the printed table for :func:`run`'s results."""

    def row(what: str, r: dict[str, Any]) -> list[Any]:
        per_cpu = r["claims_per_cpu_second"]
        return [
            what,
            f"{r['seconds']:.2f}",
            f"{r['cpu_seconds']:.2f}",
            f"{r['claims_per_second']:.0f}",
            "-" if per_cpu is None else f"{per_cpu:.0f}",
            f"{r['ratio_to_judge']:.2f}",
            "-" if r.get("cpu_ratio_to_judge") is None else f"{r['cpu_ratio_to_judge']:.2f}",
        ]

    rows: list[list[Any]] = [
        [
            "offline judge alone (in process, evidence preparation included)",
            f"{ee['judge_seconds']:.2f}",
            "-",
            f"{ee['judge_claims_per_second']:.0f}",
            "-" if "judge_claims_per_cpu_second" not in ee else f"{ee['judge_claims_per_cpu_second']:.0f}",
            "1.00",
            "1.00",
        ],
        row("auditor audit --format records --judge offline --json - (store on)", ee["store"]),
        row("the same with --no-store", ee["no_store"]),
    ]
    if "listing" in ee:
        rows.append(row("the same with the console listing instead of --json - (store on)", ee["listing"]))
    title = (
        f"Offline audit end to end ({ee['claims_judged']} claims on {ee['records']} dev records, "
        f"median of {ee['repeats']})"
    )
    header = ["what", "wall s", "CPU s", "claims/s", "claims/CPU s", "ratio to the judge", "ratio per CPU s"]
    return title, header, rows
