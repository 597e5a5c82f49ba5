"""The console of ``auditor audit``: progress lines, --quiet / --verbose, the summary, and Ctrl-C.

Ctrl-C is tested the honest way: a real ``auditor`` process, slowed by the fake OpenAI server's
latency, is sent SIGINT while it audits; its message must name the run and a command that, run
as printed, resumes the run and audits only what is left.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.cli.interrupt import EXIT_INTERRUPTED
from auditor.store import Store
from tests.conftest import FIXTURES, ROOT
from tests.support.fake_openai import FakeOpenAI

INPUTS = sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))
LABELS = ROOT / "examples" / "golden" / "labels.jsonl"
AUDITOR = Path(sys.executable).parent / "auditor"


def invoke(*args: str, columns: int = 80) -> tuple[int, str, str]:
    result = CliRunner(env={"COLUMNS": str(columns)}).invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_by_default_only_answers_with_problems_are_shown_and_the_rest_counted(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    code, out, _ = invoke("audit", *map(str, INPUTS), "--db", db, columns=200)
    assert code == 0
    _, verbose, _ = invoke("audit", *map(str, INPUTS), "--db", db, "--verbose", columns=200)
    shown = out.count("─ answer ")
    every = verbose.count("─ answer ")
    assert 0 < shown < every  # the fixtures hold grounded and ungrounded answers
    assert f"{every - shown} answer(s) without problems not shown (--verbose shows every answer)" in out
    assert "not shown" not in verbose
    assert "NOT grounded" in out and out.count("NOT grounded") == verbose.count("NOT grounded")


def test_the_listing_skips_highlighting_only_where_colour_is_not_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from rich.console import Console

    from auditor.cli.audit import print_audit
    from auditor.cli.output import listing_console
    from auditor.run import audit

    result = audit(INPUTS, store=False)
    highlighted = Console(file=io.StringIO(), width=100)
    print_audit(result, highlighted, "all")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setenv("COLUMNS", "100")
    piped = listing_console()
    assert piped.color_system is None
    print_audit(result, piped, "all")
    listing = sys.stdout.getvalue()
    assert listing == highlighted.file.getvalue() and "─ answer " in listing  # the same text
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = listing_console()
    assert coloured.color_system is not None
    coloured.print("refund 120.00 approved", end="")
    assert "\x1b[" in sys.stdout.getvalue()[len(listing) :]  # a terminal keeps rich's highlighter


def test_start_up_objects_are_frozen_for_the_audit_and_thawed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    import auditor.run

    frozen: list[int] = []
    real = auditor.run.audit

    def counting(*args: object, **kwargs: object) -> object:
        frozen.append(gc.get_freeze_count())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(auditor.run, "audit", counting)
    before = gc.get_freeze_count()
    code, out, _ = invoke("audit", *map(str, INPUTS), "--db", f"sqlite:///{tmp_path / 'a.db'}", "-q")
    assert code == 0 and "groundedness rate:" in out
    assert frozen and frozen[0] > before  # the audit ran with start-up's objects out of the collector's way
    assert gc.get_freeze_count() == before  # and the command gave them back (tests run it in-process)


def test_quiet_prints_the_summary_only(tmp_path: Path) -> None:
    code, out, err = invoke("audit", *map(str, INPUTS), "--db", f"sqlite:///{tmp_path / 'a.db'}", "-q")
    assert code == 0
    assert "─ answer " not in out and "groundedness rate:" in out
    assert "audited " not in err and "stored" not in err  # no progress, no chatter


def test_quiet_and_verbose_together_is_a_usage_error() -> None:
    code, _, err = invoke("audit", str(INPUTS[0]), "-q", "-v", "--no-store")
    assert code == 2 and "--quiet and --verbose contradict each other" in err


def test_progress_in_a_pipe_is_plain_lines_with_counts(tmp_path: Path) -> None:
    code, _, err = invoke("audit", *map(str, INPUTS), "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("audited ")]
    # The first answer, then at most one line per 10 s, then the last: not a line per answer.
    total = lines[-1].split()[1].split("/")[1]
    assert 2 <= len(lines) < int(total), err
    assert lines[0].startswith("audited 1/") and "ETA" in lines[0]
    assert lines[-1].startswith(f"audited {total}/{total} answers") and "claims judged" in lines[-1]
    assert "\x1b[" not in err  # no bar, no colour codes in a pipe


def test_labels_add_refusal_accuracy_and_over_refusal_to_the_summary(tmp_path: Path) -> None:
    refusal = FIXTURES / "refusal" / "openinference.otlp.jsonl"
    labels = tmp_path / "labels.jsonl"
    from auditor.run import audit

    found = audit([refusal], store=False)
    labels.write_text(f'{{"trace_id": "{found.answers[0].trace_id}", "answerable": false}}\n')
    code, out, _ = invoke("audit", str(refusal), "--labels", str(labels), "--no-store", columns=200)
    assert code == 0
    assert "refusal accuracy: 100.0% (1/1) unanswerable questions refused" in out
    assert "over-refusal: n/a (0/0) answerable questions refused" in out
    _, without, _ = invoke("audit", str(refusal), "--no-store", columns=200)
    assert "refusal accuracy" not in without


@pytest.fixture
def slow_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(offline_judge=True, latency=0.4) as server:
        yield server


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watchdog = threading.Timer(90, process.kill)  # a hung child fails the test instead of hanging it
    watchdog.daemon = True
    watchdog.start()
    return process


def _first_progress(process: subprocess.Popen[str]) -> str:
    """Stderr up to and including the first progress line ("" if the process ended first)."""
    assert process.stderr is not None
    seen = ""
    for line in iter(process.stderr.readline, ""):
        seen += line
        if line.startswith("audited "):
            return seen
    return seen


@pytest.mark.slow
def test_ctrl_c_says_what_was_saved_and_the_command_that_resumes(
    slow_server: FakeOpenAI, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    env = {**os.environ, "OPENAI_API_KEY": "test", "AUDITOR_HOME": str(tmp_path / "home")}
    env.pop("COLUMNS", None)
    args = [
        str(AUDITOR),
        "audit",
        *(str(p.relative_to(ROOT)) for p in INPUTS[:6]),  # relative: the command is run from ROOT
        "--judge",
        "openai:fake-judge",
        "--base-url",
        slow_server.base_url,
        "--no-cascade",
        "--concurrency",
        "1",
        "--db",
        db,
        "--no-resume",  # never in the printed command: it would start over
    ]
    process = _start(args, env)
    first = _first_progress(process)  # progress goes to stderr, a line after the first answer
    assert first.splitlines()[-1].startswith("audited 1/"), first
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=60)
    err = first + rest
    assert process.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err and "Aborted!" not in err
    with Store(db) as store:
        (row,) = store.list_runs()
    assert row.status == "interrupted" and row.answers_saved >= 1
    assert f"{row.answers_saved} of " in err and f"saved in run {row.id}" in err
    command = err.strip().splitlines()[-1].strip()
    assert command.startswith("auditor audit ") and "--no-resume" not in command
    assert "--judge openai:fake-judge" in command and f"--db {db}" in command

    words = shlex.split(command)
    resumed = subprocess.run(
        [str(AUDITOR), *words[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    lines = [line for line in resumed.stderr.splitlines() if line.startswith("audited ")]
    assert f"({row.answers_saved} resumed)" in lines[-1]
    with Store(db) as store:
        (again,) = store.list_runs()
    assert again.id == row.id and again.status == "finished"


@pytest.mark.slow
def test_ctrl_c_without_a_store_says_nothing_was_saved(slow_server: FakeOpenAI, tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": "test", "AUDITOR_HOME": str(tmp_path / "home")}
    args = [
        str(AUDITOR),
        "audit",
        *map(str, INPUTS),
        "--judge",
        "openai:fake-judge",
        "--base-url",
        slow_server.base_url,
        "--concurrency",
        "1",
        "--no-cascade",
        "--no-store",
    ]
    process = _start(args, env)
    assert "audited 1/" in _first_progress(process)
    process.send_signal(signal.SIGTERM)  # a container stopping: the same path as Ctrl-C
    _, rest = process.communicate(timeout=60)
    assert process.returncode == EXIT_INTERRUPTED, rest
    assert "nothing was saved (--no-store)" in rest and "--no-store" in rest.strip().splitlines()[-1]


@pytest.mark.slow
def test_sigterm_stops_a_background_job_of_a_shell_script(slow_server: FakeOpenAI, tmp_path: Path) -> None:
    """``auditor audit ... &`` in a script: the shell starts the job with SIGINT ignored, which must
    not make SIGTERM ignored too (it once took the Ctrl-C path by re-raising SIGINT)."""
    env = {**os.environ, "OPENAI_API_KEY": "test", "AUDITOR_HOME": str(tmp_path / "home")}
    audit = [str(AUDITOR), "audit", *map(str, INPUTS), "--judge", "openai:fake-judge"]
    audit += ["--base-url", slow_server.base_url, "--concurrency", "1", "--no-cascade", "--no-store"]
    script = '"$@" & echo "$!" >&2; wait "$!"; echo "status $?" >&2'
    process = _start(["sh", "-c", script, "sh", *audit], env)
    assert process.stderr is not None
    pid = int(process.stderr.readline())
    assert "audited 1/" in _first_progress(process)
    os.kill(pid, signal.SIGINT)  # ignored, as the shell meant: the audit goes on
    assert "audited " in _first_progress(process)  # a further progress line: still running
    os.kill(pid, signal.SIGTERM)
    _, rest = process.communicate(timeout=60)
    assert f"status {EXIT_INTERRUPTED}" in rest, rest
    assert "Interrupted." in rest and "nothing was saved (--no-store)" in rest
    assert "Traceback" not in rest


def test_on_a_terminal_the_bar_shows_eta_answers_claims_calls_and_tokens() -> None:
    import io

    from rich.console import Console

    from auditor.cli.progress import Tracker, progress_reporter
    from auditor.run import Progress

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160)
    tracker = Tracker()
    with progress_reporter(console, tracker=tracker) as show:
        for done in range(1, 4):
            show(Progress(2, 10, done, 0, 4 * done, 2 * done, llm_tokens=1500 * done, run_id="r1"))
        assert tracker.last is not None and tracker.last.answers_done == 3
        eta = tracker.eta_seconds()
        assert eta is not None and eta > 0
    drawn = screen.getvalue()
    assert "answers" in drawn and "3/10" in drawn and "ETA" in drawn
    assert "12 claims judged; 6 LLM calls, 4,500 tokens" in drawn


def test_a_pipe_gets_a_line_at_most_every_interval() -> None:
    import io

    from rich.console import Console

    from auditor.cli.progress import clock, progress_reporter
    from auditor.run import Progress

    screen = io.StringIO()
    with progress_reporter(Console(file=screen, width=200), every=3600) as show:
        for done in range(1, 101):
            show(Progress(5, 100, done, 0, done, 0))
    lines = screen.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == ["1/100", "100/100"]
    assert clock(3725) == "1:02:05" and clock(65) == "1:05"
