"""A plain (non-editable) install works from outside the source tree, package data included.

Builds a fresh virtual environment, installs the core and both adapters from the checkout the way
a user would (`pip install .`), then runs the installed `auditor` from an unrelated directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    source = tmp_path_factory.mktemp("src")
    # Install from a copy, so nothing can come from the checkout's own build or egg-info folders.
    for part in ("auditor", "adapters", "policies", "reports_templates", "pyproject.toml", "README.md"):
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(
                src, source / part, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build")
            )
        else:
            shutil.copy(src, source / part)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            str(source),
            str(source / "adapters" / "otel"),
            str(source / "adapters" / "langchain"),
        ],
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
