"""The README's ten-line tour, run line by line as a newcomer would paste it.

Each command runs in a shell from a folder that holds the checkout's ``examples/`` (so the report it
writes lands there), with the venv's ``auditor`` first on ``PATH``; the LLM judge's line talks to the
tests' local OpenAI-compatible server through ``AUDITOR_BASE_URL``; ``auditor serve`` runs until its
health route answers. The expected exit statuses are the ones the README states.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.support.fake_openai import FakeOpenAI

#: What each command exits with on the bundled examples, as the README says: every line runs (0);
#: the golden set passes the gate's thresholds.
EXPECTED_STATUS: dict[str, int] = {}


def tour_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## A ten-line tour") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the README's tour lost its command block"
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("source ")]


def test_the_tour_names_commands_that_exist() -> None:
    assert [line.split()[1] for line in tour_lines()] == [
        "evidence",
        "inspect",
        "audit",
        "audit",
        "gate",
        "runs",
        "serve",
    ]


@pytest.fixture
def newcomer(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    env.pop("AUDITOR_DB_URL", None)
    return env


def run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_every_tour_line_works_as_the_readme_says(newcomer: dict[str, str], tmp_path: Path) -> None:
    lines = tour_lines()
    with FakeOpenAI(offline_judge=True) as server:
        for line in lines:
            command = line.split()[1]
            if command == "serve":
                continue
            env = dict(newcomer)
            if "--judge openai:" in line:
                env |= {"AUDITOR_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
            done = run(line, tmp_path, env)
            expected = EXPECTED_STATUS.get(command, 0)
            assert done.returncode == expected, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            assert "Traceback" not in done.stderr, line
        assert server.requests > 0  # the LLM line really asked the judge
    assert (tmp_path / "audit.html").stat().st_size > 10_000
    listing = run("auditor runs", tmp_path, newcomer).stdout
    assert listing.count("offline") >= 2 and "gpt-4.1-mini" in listing


@pytest.mark.slow
def test_the_tour_serve_line_starts_the_service(newcomer: dict[str, str], tmp_path: Path) -> None:
    line = next(line for line in tour_lines() if line.split()[1] == "serve")
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 4318)) == 0:
            pytest.skip("port 4318, auditor serve's default, is taken on this machine")
    process = subprocess.Popen(
        ["bash", "-c", f"exec {line}"], cwd=tmp_path, env=newcomer, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                if httpx.get("http://127.0.0.1:4318/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            pytest.fail("auditor serve did not answer on 127.0.0.1:4318 within 60 s")
        assert httpx.get("http://127.0.0.1:4318/", timeout=5).status_code == 200  # the web app
    finally:
        process.terminate()
        process.communicate(timeout=30)  # also closes the stderr pipe
