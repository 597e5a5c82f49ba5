"""The HTML report at scale: bytes and time to first render for 100 and 1,000 answers, before and after.

The same generated run (``tests/support/many_answers.py``: conversations sharing a system prompt
and earlier turns, every verdict, conflicts, misattributed markers) is rendered by this checkout
and, with ``before``, by another source tree (``git archive`` of a revision unpacked, by default
:data:`BEFORE_REV`, the last commit whose report drew every answer as markup; or any checkout),
each in a fresh interpreter with that tree first on ``PYTHONPATH``. Each page is then opened in
headless Chromium (Debian's, through Playwright, as the browser tests do): *first render* is the
page's own clock (``performance.now()``, from navigation start) once the load event has fired and
the first answer card is in the document; first contentful paint is reported beside it. Figures
are medians of ``repeats`` loads; bytes per answer and the ratio after / before travel between
machines, the milliseconds less so.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "tests" / "support" / "many_answers.py"
SIZES = (100, 1000)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

# Run in the tree measured: load the generator by path (the older tree may not have it), render.
_RENDER = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("many_answers", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
from auditor.report import render_report
result = module.generated_result(int(sys.argv[2]))
started = time.perf_counter()
page = render_report(result)
seconds = time.perf_counter() - started
open(sys.argv[3], "w", encoding="utf-8").write(page)
print(seconds)
"""

_FIRST_ANSWER = "document.querySelector('article.answer') !== null"


#: The "before" of the report figures: the last commit before the report embedded its answers as
#: data (a fixed revision, so the comparison means the same after later commits).
BEFORE_REV = "5a3ce49"


def archive(into: Path, rev: str) -> Path:
    """``git archive REV`` of this checkout unpacked in ``into``, templates where the wheel puts them."""
    tar = into / "before.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(tar), rev], check=True)
    tree = into / "before"
    with tarfile.open(tar) as archive:
        archive.extractall(tree, filter="data")
    _place_templates(tree)
    return tree


def has_revision(rev: str) -> bool:
    """Whether this is a git checkout that holds ``rev`` (not a plain install, not a shallow clone without it)."""
    if not (ROOT / ".git").exists():
        return False
    found = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}^{{commit}}"], capture_output=True, check=False
    )
    return found.returncode == 0


def _place_templates(tree: Path) -> None:
    # the editable install maps auditor.reports_templates to this checkout's folder: give the other
    # tree its own copy inside its package, where a wheel would have it, so it renders its own page
    inside = tree / "auditor" / "reports_templates"
    if not inside.exists() and (tree / "reports_templates").is_dir():
        shutil.copytree(tree / "reports_templates", inside)


def render(tree: Path | None, answers: int, out: Path) -> float:
    """Render the generated run with ``tree``'s code (this checkout when None); the render seconds."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(
        [sys.executable, "-P", "-c", _RENDER, str(GENERATOR), str(answers), str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tree or ROOT,
    )
    if done.returncode:
        raise RuntimeError(f"rendering {answers} answers failed: {done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def chromium() -> str:
    found = os.environ.get("AUDITOR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(found).is_file():
        raise RuntimeError("the report benchmark needs Chromium: apt-get install chromium")
    return found


def first_render(pages: list[Path], repeats: int) -> list[dict[str, float]]:
    """Median first-render and first-contentful-paint milliseconds of each page."""
    from playwright.sync_api import sync_playwright

    figures = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)
        try:
            for path in pages:
                ready, paint = [], []
                for _ in range(repeats):
                    page = browser.new_page(viewport={"width": 1366, "height": 900})
                    page.goto(path.resolve().as_uri(), wait_until="load")
                    page.wait_for_function(_FIRST_ANSWER)
                    ready.append(float(page.evaluate("performance.now()")))
                    fcp = page.evaluate(
                        "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null"
                    )
                    paint.append(float(fcp) if fcp is not None else float("nan"))
                    page.close()
                figures.append(
                    {"first_render_ms": statistics.median(ready), "fcp_ms": statistics.median(paint)}
                )
        finally:
            browser.close()
    return figures


def run(
    before: Path | str | None = BEFORE_REV, sizes: tuple[int, ...] = SIZES, repeats: int = 3
) -> dict[str, Any]:
    """Measure this checkout and, unless ``before`` is None, another tree: a directory, or a git
    revision of this checkout (``git archive``)."""
    results: dict[str, Any] = {"sizes": list(sizes), "repeats": repeats, "codes": {}}
    with tempfile.TemporaryDirectory(prefix="auditor-report-bench-") as tmp:
        work = Path(tmp)
        trees: dict[str, Path | None] = {"after": None}
        if isinstance(before, str):
            trees = {"before": archive(work, before), **trees}
        elif before is not None:
            copy = work / "before"
            shutil.copytree(Path(before), copy, ignore=shutil.ignore_patterns(".git", ".venv"))
            _place_templates(copy)
            trees = {"before": copy, **trees}
        for label, tree in trees.items():
            pages = [work / f"{label}-{n}.html" for n in sizes]
            seconds = [render(tree, n, page) for n, page in zip(sizes, pages, strict=True)]
            loads = first_render(pages, repeats)
            results["codes"][label] = {
                str(n): {
                    "bytes": page.stat().st_size,
                    "bytes_per_answer": page.stat().st_size / n,
                    "render_seconds": s,
                    **load,
                }
                for n, page, s, load in zip(sizes, pages, seconds, loads, strict=True)
            }
    if "before" in results["codes"]:
        results["ratio"] = {
            str(n): {
                key: results["codes"]["after"][str(n)][key] / results["codes"]["before"][str(n)][key]
                for key in ("bytes_per_answer", "first_render_ms")
            }
            for n in sizes
        }
    results["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return results


def table(rp: dict[str, Any]) -> tuple[str, list[str], list[list[Any]]]:
    """The title, header and rows of the printed table for :func:`run`'s results."""
    rows: list[list[Any]] = []
    for n in rp["sizes"]:
        for label, code in rp["codes"].items():
            r = code[str(n)]
            ratio = rp.get("ratio", {}).get(str(n)) if label == "after" else None
            rows.append(
                [
                    n,
                    label,
                    f"{r['bytes'] / 1e6:.2f}",
                    f"{r['bytes_per_answer']:.0f}",
                    "-" if ratio is None else f"{ratio['bytes_per_answer']:.2f}",
                    f"{r['render_seconds']:.2f}",
                    f"{r['first_render_ms']:.0f}",
                    f"{r['fcp_ms']:.0f}",
                    "-" if ratio is None else f"{ratio['first_render_ms']:.2f}",
                ]
            )
    title = f"HTML report at scale (generated run, headless Chromium, median of {rp['repeats']} loads)"
    header = [
        "answers",
        "code",
        "MB",
        "bytes/answer",
        "bytes/answer after/before",
        "render s (Python)",
        "first render ms",
        "first paint ms",
        "first render after/before",
    ]
    return title, header, rows


if __name__ == "__main__":  # python -m benchmarks.report: this section alone
    from benchmarks.tables import markdown_table

    print(markdown_table(*table(run())))
