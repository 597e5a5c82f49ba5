"""``python -m benchmarks [--quick] [--out FILE] [--dev PATH] [--train PATH] [--only NAME]``: run and print.

The results are also written as JSON (default ``benchmarks/results/<UTC timestamp>.json``) with the
date and the machine (platform, CPU count, Python), so a later run can be compared with this one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.llm import run_sync
from benchmarks import e2e, ingest, judge, llm, quotes, scale, startup
from benchmarks.tables import markdown_table

# Sections that need a library of the test extra: a plain install runs without them, and says so.
MISSING: dict[str, str] = {}
try:
    from benchmarks import accuracy  # stop-words
except ImportError as err:
    accuracy = None  # type: ignore[assignment]
    MISSING["accuracy"] = str(err)
try:
    from benchmarks import serve  # httpx
except ImportError as err:
    serve = None  # type: ignore[assignment]
    MISSING["serve"] = str(err)
try:
    from benchmarks import bigstore  # numpy, fastapi (the serve extra)
except ImportError as err:
    bigstore = None  # type: ignore[assignment]
    MISSING["bigstore"] = str(err)
try:
    from benchmarks import report
except ImportError as err:
    report = None  # type: ignore[assignment]
    MISSING["report"] = str(err)

ROOT = Path(__file__).resolve().parent
#: Sections that read the labelled dev set (skipped, with a line saying so, when it is not there).
NEEDS_DEV = {"judge", "accuracy", "quotes", "e2e"}
#: Sections that read the source tree (``git archive``, ``tests/``): skipped from a plain install.
NEEDS_CHECKOUT = {"report", "bigstore"}
#: A source checkout (the benchmarks beside pyproject.toml), not a plain install.
CHECKOUT = (ROOT.parent / "pyproject.toml").is_file()
SECTIONS = [
    "startup",
    "ingest",
    "judge",
    "accuracy",
    "llm",
    "quotes",
    "e2e",
    "serve",
    "report",
    "scale",
    "bigstore",
]
#: Sections run only when named with ``--only``: a million answers on two stores takes about an hour.
OPT_IN = {"bigstore"}


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gb = None
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        memory_gb = round(pages * size / 1e9, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "memory_gb": memory_gb,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
    }


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def render(results: dict[str, Any]) -> str:
    """The tables of every section present in ``results``."""
    parts = []
    if "startup" in results:
        parts.append(render_startup(results["startup"]))
    if "ingest" in results:
        parts.append(render_ingest(results["ingest"]))
    if "offline_judge" in results:
        parts.append(render_judge(results["offline_judge"]))
    if "accuracy" in results:
        parts.append(render_accuracy(results["accuracy"]))
    if "llm" in results:
        parts.append(render_llm(results["llm"]))
    if "quotes" in results:
        parts.append(render_quotes(results["quotes"]))
    if "offline_e2e" in results:
        parts.append(markdown_table(*e2e.table(results["offline_e2e"])))
    if "serve" in results:
        parts.append(markdown_table(*serve.table(results["serve"])))
    if "report" in results:
        parts.append(markdown_table(*report.table(results["report"])))
    if "scale" in results:
        parts.append(markdown_table(*scale.table(results["scale"])))
    if "bigstore" in results:
        parts.append(render_bigstore(results["bigstore"]))
    return "\n".join(parts)


def render_bigstore(bs: dict[str, Any]) -> str:
    lines = [f"Target: every route under {bs['target_p95_ms']:.0f} ms at p95; the baseline is /healthz."]
    for name, why in bs.get("skipped", {}).items():
        lines.append(f"{name} skipped: {why}")
    for store in bs["stores"]:
        lines.append(
            f"{store['store']}: {store['answers']:,} answers, {store['runs']:,} runs, {store['rollup_rows']:,} "
            f"rollup rows, filled in {store['fill_seconds']:.0f} s, {store['store_mb']:.0f} MB; "
            f"over the target: {', '.join(store['over_target']) or 'none'}"
        )
    return markdown_table(*bigstore.table(bs)) + "\n".join(lines) + "\n"


def render_startup(st: dict[str, Any]) -> str:
    runs = [("before", st["before"]), ("after", st["after"])] if "before" in st else [("now", st["after"])]
    rows = []
    for name in startup.COMMANDS:
        for label, run in runs:
            r = run["commands"][name]
            rows.append(
                [
                    f"auditor {name}",
                    label,
                    _f(r["seconds"], 3),
                    _f(r["ratio_to_python"], 1) + "x",
                    r["modules"],
                    _f(r["import_seconds"], 3),
                    ", ".join(r["heavy"]) or "-",
                ]
            )
    title = f"Start-up (fresh interpreter; python -c pass = {runs[-1][1]['python_seconds'] * 1000:.0f} ms)"
    table = markdown_table(
        title,
        ["command", "code", "wall s", "ratio to python", "modules", "import s (self)", "heavy libraries"],
        rows,
    )
    if "speedup" in st:
        table += (
            "\nspeed-up of the ratio, before / after: "
            + ", ".join(f"{name} {value:.1f}x" for name, value in st["speedup"].items())
            + "\n"
        )
    return table


def render_ingest(ing: dict[str, Any]) -> str:
    parts = []
    parts.append(
        markdown_table(
            "Ingest throughput (same bytes, same run)",
            ["format", "MB", "spans", "spans/s", "MB/s", "json.loads s", "adapter s", "adapter / json"],
            [
                [
                    r["format"],
                    _f(r["megabytes"], 1),
                    r["spans"],
                    _f(r["spans_per_second"], 0),
                    _f(r["megabytes_per_second"], 1),
                    _f(r["json_seconds"]),
                    _f(r["seconds"]),
                    _f(r["ratio_to_json"], 1) + "x",
                ]
                for r in ing["throughput"]
            ],
        )
    )
    parts.append(
        markdown_table(
            "Ingest peak memory (fresh interpreter, VmHWM)",
            ["format", "file MB", "spans", "baseline MB", "peak MB", "growth MB", "growth / file size"],
            [
                [
                    r["format"],
                    _f(r["megabytes"], 0),
                    r["spans"],
                    _f(r["baseline_rss_mb"], 0),
                    _f(r["peak_rss_mb"], 0),
                    _f(r["growth_mb"], 0),
                    _f(r["growth_mb"] / r["megabytes"]),
                ]
                for r in ing["memory"]
            ],
        )
    )
    return "\n".join(parts)


def render_judge(jd: dict[str, Any]) -> str:
    return (
        f"### Offline judge speed\n\n{jd['claims_judged']} claims on {jd['records']} dev records: "
        f"{jd['claims_per_second_cold']:.0f} claims/s with evidence preparation, "
        f"{jd['claims_per_second_warm']:.0f} claims/s with it cached.\n"
    )


def render_accuracy(ac: dict[str, Any]) -> str:
    parts = [
        markdown_table(
            f"Offline judge on {name} (development figures; baseline t = {ac['baseline_threshold']:.2f}, chosen on dev)",
            accuracy.HEADER,
            accuracy.table_rows(split),
        )
        for name, split in ac["splits"].items()
    ]
    for name, ls in (ac.get("cascade") or {}).items():
        shown = f"{name}, generated: {ls['mix']['label']}" if "mix" in ls else name
        parts.append(
            f"Cascade on {shown} ({ls['answers']} answers, {ls['claims']} claims, fake server): "
            f"{_f(ls['llm_alone']['calls_per_answer'])} calls/answer alone, "
            f"{_f(ls['cascade']['calls_per_answer'])} through the cascade "
            f"({_f(ls['calls_saved_per_answer'])} saved per answer); agreement with the LLM alone "
            f"{_f(ls['agreement'])} ({ls['disagreements']} claims differ).\n"
        )
    return "\n".join(parts)


def render_llm(lm: dict[str, Any]) -> str:
    parts = []
    rows = [
        [
            name,
            r.get("concurrency", lm["concurrency"]),
            "on" if r.get("store") else "off",
            r["answers"],
            _f(r["answers_per_second"], 1),
            _f(r["ratio_to_ideal"]),
            _f(r.get("ratio_to_bound", r["ratio_to_ideal"])),
            _f(r.get("ratio_to_bare")),
            _f(r.get("cpu_ms_per_answer"), 1),
            _f(r.get("server_cpu_ms_per_request"), 1),
            _f(r["calls_per_answer"]),
            _f(r["prompt_tokens_per_answer"], 0),
            _f(r["completion_tokens_per_answer"], 0),
            ", ".join(f"{k} {v}" for k, v in sorted(r["by_kind"].items())),
        ]
        for name, r in lm["modes"].items()
    ]
    parts.append(
        markdown_table(
            f"LLM pipeline vs fake server (latency {lm['latency_seconds'] * 1000:.0f} ms, server in "
            f"{'its own process' if lm.get('server') == 'subprocess' else 'this process'}; ideal: "
            "C / latency; bound: what the calls allow, C / (2 x latency) for the llm decomposer)",
            [
                "mode",
                "C",
                "store",
                "answers",
                "answers/s",
                "ratio to ideal",
                "ratio to bound",
                "ratio to bare client",
                "auditor CPU ms/answer",
                "server CPU ms/request",
                "calls/answer",
                "prompt tok/answer",
                "completion tok/answer",
                "calls by kind",
            ],
            rows,
        )
    )
    rows = [
        [
            name,
            r["first_calls"],
            r["second_calls"],
            ", ".join(f"{k} {v}" for k, v in sorted(r["second_by_kind"].items())) or "-",
        ]
        for name, r in lm["second_audit"].items()
    ]
    parts.append(
        markdown_table(
            "Second audit of the same traces (verdict cache on)",
            ["mode", "first audit calls", "second audit calls", "second audit by kind"],
            rows,
        )
    )
    return "\n".join(parts)


def render_quotes(qt: dict[str, Any]) -> str:
    rows = [
        [
            name,
            r["claims"],
            r["given"],
            r["demoted"],
            r["demoted_agreed"],
            r["kept_supported_agreed"],
            r["kept_supported_disagreed"],
            f"{r.get('disagrees', 0)} ({r.get('disagrees_contradicted', 0)} / {r.get('disagrees_unjudged', 0)}; "
            f"{r.get('disagrees_agreed', 0)} humans said supported)",
        ]
        for name, r in qt["judges"].items()
    ]
    parts = [
        markdown_table(
            f"Quotes must carry the claim: demotions on the dev set ({qt['records']} records, "
            f"MIN_SHARE = {qt['min_share']:.1f}, MIN_QUOTE_CHARS = {qt['min_quote_chars']})",
            [
                "judge",
                "claims",
                "supported/contradicted given",
                "demoted by the check",
                "demoted, human label = judge's",
                "kept supported, humans agree",
                "kept supported, humans disagree",
                "supported turned by the agreement check (contradicted / unjudged)",
            ],
            rows,
        )
    ]
    if qt["sweep"]:
        shares = list(next(iter(qt["sweep"].values())))
        parts.append(
            markdown_table(
                "MIN_SHARE sweep: verdicts humans agree with that are demoted / "
                "supported verdicts humans reject that are kept",
                ["judge", *shares],
                [
                    [
                        name,
                        *(f"{s[k]['demoted_agreed']} / {s[k]['kept_supported_disagreed']}" for k in shares),
                    ]
                    for name, s in qt["sweep"].items()
                ],
            )
        )
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small inputs (smoke run, about a minute)")
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    parser.add_argument("--dev", type=Path, default=judge.DEV, help="the labelled dev set (read in place)")
    parser.add_argument(
        "--train",
        type=Path,
        default=accuracy.TRAIN if accuracy is not None else judge.DEV.with_name("train.jsonl"),
        help="the labelled train set (read in place)",
    )
    parser.add_argument("--only", choices=SECTIONS, action="append", default=None)
    parser.add_argument(
        "--soak",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the serve section's soak (default 30 s, 2 s with --quick; the issue's figure is 300)",
    )
    parser.add_argument(
        "--answers",
        type=int,
        default=None,
        help="answers in the bigstore section's stores (default 1,000,000)",
    )
    parser.add_argument(
        "--startup-before",
        type=Path,
        default=None,
        metavar="CHECKOUT",
        help="also measure start-up on another source tree (e.g. a git worktree of an older commit)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "auditor_version": __version__,
        "machine": machine(),
    }
    only = set(args.only or [s for s in SECTIONS if s not in OPT_IN])
    if not args.dev.is_file() and only & NEEDS_DEV:
        # A plain install has no ../shared beside it: the sections that need no data still run.
        print(f"{', '.join(sorted(only & NEEDS_DEV))} skipped: no dev set at {args.dev} (pass --dev PATH)")
        only -= NEEDS_DEV
    if not CHECKOUT and only & NEEDS_CHECKOUT:
        print(f"{', '.join(sorted(only & NEEDS_CHECKOUT))} skipped: needs a source checkout")
        only -= NEEDS_CHECKOUT
    if "scale" in only and scale.available() is not None:
        print(scale.available())  # the ray extra is not installed
        only.discard("scale")
    for name in sorted(only & set(MISSING)):
        print(f"{name} skipped: {MISSING[name]} (install the test extra)")
        only.discard(name)
    with tempfile.TemporaryDirectory(prefix="auditor-bench-") as tmp:
        work = Path(tmp)
        if "startup" in only:
            repeats = 3 if args.quick else 7
            if args.startup_before is not None:
                results["startup"] = startup.compare(args.startup_before, repeats)
            else:
                results["startup"] = {"after": startup.measure(None, repeats)}
        if "ingest" in only:
            results["ingest"] = ingest.run(work, args.quick)
        if "judge" in only:
            results["offline_judge"] = asyncio.run(judge.run(args.dev))
        if "accuracy" in only:
            results["accuracy"] = asyncio.run(
                accuracy.run(args.dev, args.train, llm_answers=12 if args.quick else 48)
            )
        if "llm" in only:
            results["llm"] = run_sync(  # the CLI's event loop (uvloop where installed)
                lambda: llm.run(
                    work, answers=16 if args.quick else 96, store_answers=16 if args.quick else 192
                )
            )
        if "quotes" in only:
            results["quotes"] = asyncio.run(quotes.run(args.dev, quick=args.quick))
        if "e2e" in only:
            results["offline_e2e"] = e2e.run(args.dev, repeats=1 if args.quick else 3)
        if "serve" in only:
            results["serve"] = serve.run(work, args.quick, soak_seconds=args.soak)
        if "report" in only:  # before: report.BEFORE_REV (git archive), when this is a full checkout
            results["report"] = report.run(
                report.BEFORE_REV if report.has_revision(report.BEFORE_REV) else None,
                sizes=(100,) if args.quick else report.SIZES,
                repeats=1 if args.quick else 3,
            )
        if "scale" in only:
            results["scale"] = scale.run(work, args.quick)
        if "bigstore" in only:
            results["bigstore"] = bigstore.run(work, args.quick, answers=args.answers)
    results["total_seconds"] = time.perf_counter() - started
    m = results["machine"]
    print(
        f"# trace-auditor {__version__} benchmarks, {results['date']}\n\nmachine: {m['platform']}; {m['cpu']}; "
        f"{m['cpu_count']} CPUs; {m['memory_gb']} GB; Python {m['python']}\n"
    )
    print(render(results))
    print(f"total {results['total_seconds']:.0f} s")
    # In a checkout, beside the earlier runs; from a plain install, in the current folder.
    folder = ROOT / "results" if CHECKOUT else Path("benchmark-results")
    out = args.out or folder / f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
