"""Audits on a local Ray cluster (``--engine ray``) against the single process, in the same run.

The records are the LLM benchmark's generated answers (:func:`benchmarks.llm.write_records`),
split over a few files. One local Ray (``ray.init(num_cpus=2)``) is started before any clock, and
one untimed audit on it first starts its worker processes; every row runs in a fresh app
directory with a fresh SQLite store, created before the clock starts.

- ``offline``: the offline judge on ``records`` answers, the single process (``auditor.run.audit``)
  and ``audit_on_ray`` with 1 and 2 workers: answers/s, the ratio to the single process, and the
  overhead per trace of one worker over the single process ((t_ray - t_single) / traces: the
  scans, the shard's read, the tasks and the driver's finish).
- ``llm``: the fake OpenAI server (its own process, ``latency`` per request, one judge call per
  answer: rules decomposer, no cascade, no cache) at a total concurrency of 32: the single process
  at C = 32 and 2 Ray workers at 16 each, answers/s as a ratio to the ideal 32 / latency.

Skipped, with one line, when Ray is not installed (the ``ray`` extra).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auditor.run import audit
from auditor.trace import FORMAT
from benchmarks.llm import _fresh_home, write_records
from benchmarks.server import ServerProcess

#: Files the records are split over (so two workers read different files).
FILES = 4


def available() -> str | None:
    """None when Ray is installed, else the line saying why the section is skipped."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return "scale skipped: Ray is not installed (pip install 'trace-auditor[ray]')"
    return None


def _write(folder: Path, answers: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    whole = folder / "all.jsonl"
    write_records(whole, answers)
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    whole.unlink()
    paths = []
    for n in range(FILES):
        path = folder / f"part-{n}.jsonl"
        path.write_text("".join(lines[n::FILES]), encoding="utf-8")
        paths.append(path)
    return paths


@contextmanager
def _home() -> Iterator[str]:
    with _fresh_home() as home:
        yield f"sqlite:///{home / 'bench.db'}"


def _timed(engine: str, paths: list[Path], db: str, **options: Any) -> dict[str, Any]:
    from auditor.scale import audit_on_ray
    from auditor.store import Store

    Store(db).close()  # created and migrated before the clock starts
    started = time.perf_counter()
    if engine == "single":
        result = audit(paths, format=FORMAT, db_url=db, **options)
    else:
        result = audit_on_ray(paths, format=FORMAT, db_url=db, **options)
    seconds = time.perf_counter() - started
    n = len(result.answers)
    llm = (result.run.usage or {}).get("llm", {})
    return {
        "answers": n,
        "seconds": seconds,
        "answers_per_second": n / seconds,
        "llm_calls": llm.get("calls", 0),
        "unjudged": result.summary.get("unjudged"),
    }


def run(workdir: Path, quick: bool = False, latency: float = 0.2) -> dict[str, Any]:
    import ray

    records = 60 if quick else 600
    llm_records = 64 if quick else 320
    offline = _write(workdir / "scale-offline", records)
    bound = _write(workdir / "scale-llm", llm_records)
    results: dict[str, Any] = {
        "records": records,
        "llm_records": llm_records,
        "latency_seconds": latency,
        "cpus": 2,
        "offline": {},
        "llm": {},
    }
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with _home() as db:  # untimed: starts Ray's worker processes and imports the auditor in them
            _timed("ray", offline[:1], db, workers=2)
        with _home() as db:
            single = _timed("single", offline, db)
        results["offline"]["single process"] = {**single, "ratio_to_single": 1.0}
        for workers in (1, 2):
            with _home() as db:
                row = _timed("ray", offline, db, workers=workers)
            row["ratio_to_single"] = row["answers_per_second"] / single["answers_per_second"]
            row["overhead_ms_per_trace"] = (row["seconds"] - single["seconds"]) * 1000 / row["answers"]
            results["offline"][f"ray, {workers} worker(s)"] = row
        llm = {"judge": "openai:bench-model", "cascade": False, "cache": False}
        ideal = 32 / latency
        with ServerProcess(latency) as server:
            llm["base_url"] = server.base_url
            with _home() as db:
                row = _timed("single", bound, db, concurrency=32, **llm)
            results["llm"]["single process, C = 32"] = {
                **row,
                "ratio_to_ideal": row["answers_per_second"] / ideal,
            }
            with _home() as db:
                row = _timed("ray", bound, db, workers=2, concurrency=16, **llm)
            results["llm"]["ray, 2 workers x C = 16"] = {
                **row,
                "ratio_to_ideal": row["answers_per_second"] / ideal,
            }
    finally:
        if started_here:
            ray.shutdown()
    return results


def table(sc: dict[str, Any]) -> tuple[str, list[str], list[list[Any]]]:
    """The section's table for ``python -m benchmarks``: title, header, rows."""
    rows: list[list[Any]] = []
    for name, r in sc["offline"].items():
        rows.append(
            [
                f"offline, {name}",
                r["answers"],
                f"{r['seconds']:.2f}",
                f"{r['answers_per_second']:.1f}",
                f"{r['ratio_to_single']:.2f} of single",
                f"{r['overhead_ms_per_trace']:.1f}" if "overhead_ms_per_trace" in r else "-",
            ]
        )
    for name, r in sc["llm"].items():
        rows.append(
            [
                f"LLM-bound, {name}",
                r["answers"],
                f"{r['seconds']:.2f}",
                f"{r['answers_per_second']:.1f}",
                f"{r['ratio_to_ideal']:.2f} of 32 / latency",
                "-",
            ]
        )
    title = (
        f"Ray engine vs the single process (local Ray, {sc['cpus']} CPUs; fake server latency "
        f"{sc['latency_seconds'] * 1000:.0f} ms, one judge call per answer)"
    )
    return title, ["run", "answers", "seconds", "answers/s", "ratio", "overhead ms/trace"], rows
