"""The newcomer's paths through the docs, run from the pages themselves.

A fenced block preceded by ``<!-- docs-test: PATH -->`` (an HTML comment: the site shows nothing)
belongs to PATH, and the blocks of a path run in page order in one empty folder, as a newcomer
would paste them:

- ``<!-- docs-test: PATH file=NAME -->``: the block is written to ``NAME``;
- a block whose first line starts with ``$ ``: that command is run and what it prints (stdout and
  stderr, as a terminal shows them) must read as the rest of the block; a line ``...`` stands for
  any lines, and the parts that differ from run to run are blanked on both sides (:data:`VARYING`);
- a ``yaml`` block (a CI step): each ``run:`` step is run, and must exit 0;
- any other block: each line is a command (``\\`` continues it, ``  #`` starts a comment) and must
  exit 0, except ``pip install`` lines, whose local paths, extras and packages must be what this
  checkout and its environment hold (nothing is installed), ``export NAME=VALUE`` lines, which set
  the environment of the lines after them, and ``auditor serve``, which is started in the
  background and must answer on ``/healthz``. A ``$`` block whose command an earlier block ran
  is checked against that run (each command runs once).

The folder holds symbolic links to the checkout's ``examples/``, ``policies/`` and
``tests/fixtures/``, since the docs' commands run from the checkout, with the environment's
``auditor`` first on ``PATH``. What the tests change, and why: the agent's model is the tests'
local OpenAI-compatible server (``OPENAI_BASE_URL``), ``auditor serve``'s port 4318 becomes a free
port in every line, so a server already on this machine does not answer instead, and its
``AUDITOR_SERVE_QUIET`` is shortened. Nothing else of a command is rewritten.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import httpx
import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML, installed with mkdocs (the test extra)

from tests.conftest import ROOT
from tests.support.fake_openai import FakeOpenAI
from tests.support.serve import free_port

MARK = re.compile(
    r"^<!-- docs-test: (?P<path>[\w-]+)(?: file=(?P<file>\S+))? -->\n```(?P<lang>\w*)\n(?P<body>.*?)^```$",
    re.S | re.M,
)

#: What differs from run to run in printed output, blanked on both sides before comparing: ids of
#: answers, traces, evidence and runs (16 or 32 hex digits, or a run's 12-digit prefix where a
#: command names it), and pytest's duration.
VARYING = [
    (re.compile(r"(?<![0-9a-f])(?:[0-9a-f]{32}|[0-9a-f]{16})(?![0-9a-f])"), "<id>"),
    (re.compile(r"\b(auditor show|auditor export) [0-9a-f]{12}\b"), r"\1 <id>"),
    (re.compile(r" in \d+\.\d+s\b"), " in <t>s"),
]

#: The answer the agent's model gives in docs/own-traces.md (the page quotes it).
AGENT_REPLY = "Yes: order 10042 was refunded $95.00 on 2026-03-12. The refund went to your Visa card."


@dataclass
class Block:
    page: str
    path: str
    file: str | None
    lang: str
    body: str

    @property
    def command(self) -> str | None:
        """The ``$`` line's command, for a block that shows a command's output."""
        first = self.body.split("\n", 1)[0]
        return first[2:] if first.startswith("$ ") else None


def path_blocks(path: str) -> list[Block]:
    found = [
        Block(page.name, m["path"], m["file"], m["lang"], m["body"])
        for page in sorted((ROOT / "docs").glob("*.md"))
        for m in MARK.finditer(page.read_text(encoding="utf-8"))
        if m["path"] == path
    ]
    assert found, f"no docs page has a block marked <!-- docs-test: {path} -->"
    return found


def command_lines(body: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    lines = [line.split("  #")[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def normalise(text: str) -> list[str]:
    for pattern, blank in VARYING:
        text = pattern.sub(blank, text)
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def reads_as(printed: str, shown: str) -> bool:
    """Whether ``printed`` reads as ``shown``: the same lines, where a ``...`` line of ``shown``
    stands for any number of lines."""
    pattern = "".join(
        r"(?:.*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in normalise(shown)
    )
    return re.fullmatch(pattern, "\n".join(normalise(printed)) + "\n") is not None


@dataclass
class Newcomer:
    """An empty folder beside the checkout, an environment, and what the path started."""

    folder: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    servers: list[subprocess.Popen[str]] = field(default_factory=list)
    printed: dict[str, str] = field(default_factory=dict)  # by command, what its last run printed

    def line(self, command: str) -> str:
        return command.replace("4318", str(self.port))

    def run(self, command: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", self.line(command)],
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )

    def serve(self, command: str) -> None:
        line = self.line(command)
        if "--port" not in line:
            line += f" --port {self.port}"
        process = subprocess.Popen(
            ["bash", "-c", f"exec {line}"],
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.servers.append(process)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, f"{line}: {process.stderr.read() if process.stderr else ''}"
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        pytest.fail(f"{line}: no answer on /healthz within 60 s")

    def stop(self) -> None:
        for process in self.servers:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=30)


def check_install(line: str) -> None:
    """A ``pip install`` line names what this checkout and environment hold: local paths that
    exist with the extras their ``pyproject.toml`` defines, and packages that are installed."""
    for arg in shlex.split(line)[2:]:
        if arg.startswith("-"):
            continue
        name, _, extras = arg.partition("[")
        wanted = [e for e in extras.rstrip("]").split(",") if e]
        if name.startswith("."):
            pyproject = (ROOT / name / "pyproject.toml").read_text(encoding="utf-8")
            for extra in wanted:
                assert re.search(rf"^{re.escape(extra)} = \[", pyproject, re.M), f"{line}: no extra {extra}"
        else:
            metadata.version(re.split(r"[<>=!~ ]", name)[0])  # raises when not installed


def walk(path: str, newcomer: Newcomer, retry_output_for: float = 0) -> list[Block]:
    """Run the path's blocks in order; the blocks that were run (each checked as it ran).

    A ``$`` block whose command an earlier block ran is checked against that run's output; a
    command asking a server (``http://``) is run again for up to ``retry_output_for`` seconds until
    it prints what the page shows (a trace is audited a while after its spans arrive).
    """
    blocks = path_blocks(path)
    ran = newcomer.printed

    def run(where: str, command: str) -> None:
        done = newcomer.run(command)
        assert done.returncode == 0, f"{where}: `{command}` exited {done.returncode}\n{done.stdout}"
        ran[command] = done.stdout

    for block in blocks:
        where = f"{block.page} ({path})"
        if block.file:
            (newcomer.folder / block.file).write_text(block.body, encoding="utf-8")
        elif block.command:
            expected = block.body.split("\n", 1)[1]
            printed = ran[block.command] if block.command in ran else newcomer.run(block.command).stdout
            deadline = time.monotonic() + (retry_output_for if "http://" in block.command else 0)
            while not reads_as(printed, expected) and time.monotonic() < deadline:
                time.sleep(0.5)
                printed = newcomer.run(block.command).stdout
            ran[block.command] = printed
            diff = "\n".join(difflib.unified_diff(normalise(expected), normalise(printed), lineterm=""))
            assert reads_as(printed, expected), (
                f"{where}: `{block.command}` printed (+), not as shown (-):\n{diff}"
            )
        elif block.lang == "yaml":
            steps = [step["run"] for step in yaml.safe_load(block.body) if "run" in step]
            assert steps, f"{where}: a CI snippet without a run step"
            for step in steps:
                if step.startswith("pip install"):
                    check_install(step)
                else:
                    run(where, step)
        else:
            for line in command_lines(block.body):
                if line.startswith("pip install"):
                    check_install(line)
                elif line.startswith("export "):
                    name, _, value = line.removeprefix("export ").partition("=")
                    newcomer.env[name] = newcomer.line(value)
                elif line.startswith("auditor serve"):
                    newcomer.serve(line)
                else:
                    run(where, line)
    return blocks


@pytest.fixture
def newcomer(tmp_path: Path) -> Iterator[Newcomer]:
    for name in ("examples", "policies"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    # As a terminal shows it: 80 columns, and stdout unbuffered, so it interleaves with stderr in order.
    env |= {"COLUMNS": "80", "PYTHONUNBUFFERED": "1"}
    for name in ("AUDITOR_DB_URL", "OPENAI_BASE_URL", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST"):
        env.pop(name, None)
    person = Newcomer(tmp_path, env)
    try:
        yield person
    finally:
        person.stop()


def test_the_marked_blocks_are_well_formed() -> None:
    """Every marked block is found whole (a marker the pattern misses would drop a path's step)."""
    pages = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}
    markers = sum(len(re.findall(r"^<!-- docs-test:", text, re.M)) for text in pages.values())
    found = sum(len(MARK.findall(text)) for text in pages.values())
    assert markers == found > 0
    assert AGENT_REPLY in " ".join(pages["own-traces.md"].split())  # the page quotes it, wrapped


@pytest.mark.slow
@pytest.mark.serve_live
def test_own_traces_an_instrumented_agent_audited_from_its_file_and_by_serve(newcomer: Newcomer) -> None:
    with FakeOpenAI(offline_judge=True) as model:
        model.replies = [AGENT_REPLY]
        newcomer.env |= {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test"}
        newcomer.env["AUDITOR_SERVE_QUIET"] = "0.5"  # the page's 5 s, shortened: the audit is awaited
        walk("own-traces", newcomer, retry_output_for=60)
        assert model.by_kind["other"] == 2  # the agent asked its model twice: for the file, for serve
    assert (newcomer.folder / "traces.otlp.pb").stat().st_size > 500
    assert len(newcomer.servers) == 1


@pytest.mark.slow
def test_gate_the_ci_step(newcomer: Newcomer) -> None:
    """(The page's sample failure is checked by tests/test_docs.py.)"""
    blocks = walk("gate", newcomer)
    assert sum(1 for b in blocks if b.command) == 1  # the CI step's output
    junit = (newcomer.folder / "gate.xml").read_text(encoding="utf-8")
    # One case per question of the golden set (five: examples/golden/labels.jsonl) and per check: pass
    # rate, contradictions, undecided, and the two refusal thresholds examples/gate-policy.toml sets.
    assert junit.count("<testcase ") == 10 and "<failure" not in junit


@pytest.mark.slow
def test_pytest_the_plugin_example(newcomer: Newcomer) -> None:
    blocks = walk("pytest", newcomer)
    assert {b.file for b in blocks} >= {"test_answers.py", "golden.jsonl"}
    assert any(b.command and b.command.startswith("pytest") for b in blocks)


@pytest.mark.slow
@pytest.mark.ray
def test_ray_the_engine_command(newcomer: Newcomer) -> None:
    """The command starts a local Ray of its own (the docs' default), in its own process."""
    blocks = walk("ray", newcomer)
    command = next(b.command for b in blocks if b.command and "--engine ray" in b.command)
    clustered, alone = newcomer.printed[command], newcomer.run("auditor audit examples/traces").stdout

    def summary(printed: str) -> list[str]:
        lines = normalise(printed)
        return lines[next(i for i, line in enumerate(lines) if " summary " in line) :][:7]

    assert summary(clustered) == summary(alone)  # the page's claim: the figures of one process
