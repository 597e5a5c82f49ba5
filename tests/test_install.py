"""A plain (non-editable) install works from outside the source tree, package data included.

Builds the core's and both adapters' wheels from a copy of the checkout into a local folder, then
installs `trace-auditor[serve]`, `auditor-otel` and `auditor-langchain` from that folder into a fresh
virtual environment, the way a user installs from an index (the extras resolve by the distribution's
name), and runs the installed `auditor` from an unrelated directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT

DISTRIBUTIONS = ("auditor-otel", "auditor-langchain")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    source = tmp_path_factory.mktemp("src")
    # Install from a copy, so nothing can come from the checkout's own build or egg-info folders.
    parts = (
        "auditor",
        "adapters",
        "policies",
        "reports_templates",
        "benchmarks",
        "pyproject.toml",
        "README.md",
    )
    for part in (*parts, "tests/support", "tests/fixtures"):  # tests/: shipped inside `benchmarks`
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(
                src,
                source / part,
                ignore=shutil.ignore_patterns(
                    "*.egg-info", "__pycache__", "build", *(["results"] if part == "benchmarks" else [])
                ),
            )
        else:
            shutil.copy(src, source / part)
    wheels = tmp_path_factory.mktemp("wheels")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    adapters = [str(source / "adapters" / name) for name in ("otel", "langchain")]
    subprocess.run(
        [*pip, "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(source), *adapters],
        check=True,
        timeout=600,
    )
    subprocess.run(
        [*pip, "install", "--quiet", "--find-links", str(wheels), "trace-auditor[serve]", *DISTRIBUTIONS],
        check=True,
        timeout=600,
    )
    return env_dir / "bin" / "auditor"


def run(auditor: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(auditor), *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )


def test_installed_command_runs_outside_the_source_tree(installed: Path, tmp_path: Path) -> None:
    assert run(installed, "--help", cwd=tmp_path).returncode == 0
    adapters = run(installed, "adapters", cwd=tmp_path)
    assert {"otlp-json", "otlp-proto", "langchain"} <= {
        line.split()[0] for line in adapters.stdout.splitlines()
    }
    example = tmp_path / "trace.jsonl"
    shutil.copy(ROOT / "tests" / "fixtures" / "multi_hop" / "openinference.otlp.jsonl", example)
    out = run(installed, "evidence", str(example), "--policy", "strict", "--json", "-", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert '"get_refund"' in out.stdout and '"strict"' in out.stdout
    assert sys.prefix not in str(installed)


def test_phoenix_without_its_extra_is_one_line_naming_it(installed: Path, tmp_path: Path) -> None:
    # auditor-otel installed without its phoenix extra: the phoenix:// source is registered, and
    # Phoenix's client is missing.
    out = run(installed, "audit", "--from", "phoenix://127.0.0.1:6006/default", "--no-store", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "Error: phoenix://127.0.0.1:6006/default: reading Phoenix needs its client: "
        "pip install 'auditor-otel[phoenix]'."
    ]


def test_the_serve_extra_installs_by_the_distribution_name(installed: Path, tmp_path: Path) -> None:
    python = installed.parent / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = subprocess.run(
        [str(python), "-c", "import fastapi, uvicorn, grpc, auditor_otel; print('ok')"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert found.stdout.strip() == "ok", found.stderr
    assert run(installed, "serve", "--help", cwd=tmp_path).returncode == 0


def test_benchmarks_run_from_a_plain_install(installed: Path, tmp_path: Path) -> None:
    """``python -m benchmarks`` outside the source tree: the sections that need no checkout run, the
    results JSON keeps its keys, and the fake server comes from the installed ``benchmarks.support``."""
    from tests.test_benchmarks_smoke import write_dev

    python = installed.parent / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = subprocess.run(
        [str(python), "-c", "from benchmarks.fake import FakeOpenAI; print(FakeOpenAI.__module__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert found.stdout.strip() == "benchmarks.support.fake_openai", found.stderr
    dev = tmp_path / "dev.jsonl"
    write_dev(dev)
    out = tmp_path / "results.json"
    sections = ["--only", "ingest", "--only", "e2e"]
    done = subprocess.run(
        [str(python), "-m", "benchmarks", "--quick", *sections, "--dev", str(dev), "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert {"date", "auditor_version", "machine", "ingest", "offline_e2e", "total_seconds"} <= set(results)
    assert {row["format"] for row in results["ingest"]["throughput"]} == {"otlp-json", "langchain"}
    assert all(row["spans"] > 0 for row in results["ingest"]["throughput"])
    assert results["offline_e2e"]["claims_judged"] > 0
    assert "Ingest throughput" in done.stdout


def test_the_readme_demo_runs_from_a_copy_of_the_checkout(installed: Path, tmp_path: Path) -> None:
    """The README's first command, ``scripts/demo``, in a copy of the checkout, set up in this
    module's fresh venv (``AUDITOR_VENV``; its dependencies are there, so only the three local
    distributions are built): quiet, it prints the audit and where the report is. Last in the
    module: it reinstalls the same three distributions, from source, into the shared venv."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## The two commands") :].split("```bash\n", 1)[1].split("```", 1)[0]
    command = next(
        line.split("#")[0].strip() for line in block.splitlines() if line.startswith("scripts/demo")
    )
    clone = tmp_path / "clone"
    parts = ("auditor", "adapters", "policies", "reports_templates", "benchmarks", "examples", "scripts")
    for part in (*parts, "tests/support", "tests/fixtures"):
        ignore = shutil.ignore_patterns(
            "*.egg-info", "__pycache__", "build", *(["results"] if part == "benchmarks" else [])
        )
        shutil.copytree(ROOT / part, clone / part, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, clone / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["AUDITOR_VENV"] = str(installed.parent.parent)
    done = subprocess.run(
        ["bash", "-c", command], cwd=clone, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    printed = done.stdout + done.stderr
    assert printed.startswith("Setting up "), printed[:500]
    assert " summary " in printed and f"The report: {clone}/audit-report.html" in printed
    assert "warning" not in printed.lower(), printed  # pip's and setuptools' stay in the install log
    assert (clone / "audit-report.html").stat().st_size > 10_000
