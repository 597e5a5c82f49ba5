"""The fault corpus (tests/support/faults.py) keeps the promise for bad input.

For every generated case: a known exit status (0, 2, 3 or 4), no traceback, a failure said in one
line, a time bound, and the traces a clean copy of the file yields still audited where the damage
is confined to other lines. Judge faults (every scripted fault of ``tests/support/fake_openai.py``
and its dishonest standing switches, through the real openai client) must fail closed: every claim
has a verdict or an ``unjudged`` reason, and every quote that stands is in its item. CI runs a
fixed sample; ``AUDITOR_FAULTS=full`` runs the whole corpus.
The counts (tried / clean error / recorded problem / clean) are printed at the end of the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from tests.conftest import ROOT
from tests.support.faults import Case, corpus, sample

FULL = os.environ.get("AUDITOR_FAULTS") == "full"
CASES = sample(corpus(per_base=150 if FULL else 40), 0 if FULL else 160)
#: Seconds one case may take before it counts as a hang.
HANG_SECONDS = 60
#: What the corpus saw, printed by ``pytest_terminal_summary`` in conftest.py.
COUNTS: Counter[str] = Counter()

_clean_answers: dict[bytes, set[str]] = {}


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang(f"no result within {HANG_SECONDS} s")


def _argv(case: Case, folder: Path) -> list[str]:
    return [part.replace("{dir}", str(folder)) for part in case.argv]


def _run(case: Case, folder: Path) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of the case's command; a traceback or a hang fails the test."""
    argv = _argv(case, folder)
    if case.isolate:
        try:
            done = subprocess.run(
                [sys.executable, "-c", "from auditor.cli import main; main()", *argv],
                capture_output=True,
                text=True,
                timeout=HANG_SECONDS,
                cwd=ROOT,
                env=dict(os.environ),
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{case.id}: hang (no result within {HANG_SECONDS} s)")
        return done.returncode, done.stdout, done.stderr
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        result = CliRunner().invoke(cli, argv, catch_exceptions=True)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if isinstance(result.exception, Hang):
        pytest.fail(f"{case.id}: hang ({result.exception})")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        pytest.fail(f"{case.id}: traceback: {type(result.exception).__name__}: {result.exception}")
    return result.exit_code, result.stdout, result.stderr


def _answers(stdout: str) -> tuple[set[str], int]:
    document = json.loads(stdout)
    return {a["answer_id"] for a in document["answers"]}, len(document["run"]["problems"])


def _silent_zero(stdout: str, code: int) -> str | None:
    """Why the result is a silent zero (traces read, no answer, nothing said), else None; and exit
    status 4 exactly when a trace with model calls yielded no answer."""
    document = json.loads(stdout)
    run = document["run"]
    named = {p["trace_id"] for p in run["problems"] if p.get("code") == "no_answer"}
    if (code == 4) != bool(named) or run["unanswered_traces"] != len(named):
        return f"exit {code} with {len(named)} unanswered trace(s) named, counted {run['unanswered_traces']}"
    read = sum(i["traces"] for i in run["inputs"])
    if read and not document["answers"] and not run["problems"]:
        return f"{read} trace(s) read, no answer, and no problem recorded"
    return None


def _clean(case: Case, folder: Path) -> set[str]:
    assert case.keep is not None
    data = case.files[case.keep]
    if data not in _clean_answers:
        argv = [a if "mutant." not in a else str(folder / case.keep) for a in _argv(case, folder)]
        result = CliRunner().invoke(cli, argv, catch_exceptions=False)
        assert result.exit_code in (0, 3, 4), result.output
        _clean_answers[data] = _answers(result.stdout)[0]
    return _clean_answers[data]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fault_case_keeps_the_promise(case: Case, tmp_path: Path) -> None:
    case_dir = tmp_path
    for name, data in case.files.items():
        (case_dir / name).write_bytes(data)
    code, stdout, stderr = _run(case, case_dir)
    COUNTS["tried"] += 1
    assert "Traceback" not in stdout + stderr, f"{case.id}: traceback printed:\n{stderr[-2000:]}"
    assert code in (0, 2, 3, 4), f"{case.id}: exit {code}\n{stderr[-2000:]}"
    if case.absent_after is not None:
        absent = Path(case.absent_after.replace("{dir}", str(case_dir)))
        assert not absent.exists(), f"{case.id}: created {absent}"
    if code == 2:
        errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and len(errors[0]) < 600, f"{case.id}: not one clear line:\n{stderr[-2000:]}"
        COUNTS["clean error"] += 1
        return
    if "--json" not in case.argv:
        COUNTS["clean"] += 1
        return
    found, problems = _answers(stdout)
    silent = _silent_zero(stdout, code)
    assert silent is None, f"{case.id}: a silent zero: {silent}"
    COUNTS["recorded problem" if problems else "clean"] += 1
    if case.keep is not None:
        missing = _clean(case, case_dir) - found
        assert not missing, f"{case.id}: good answers lost: {sorted(missing)[:5]}"


# -- judge faults: the real openai client against the local server, one scripted fault per case ----

#: Faults ``FakeOpenAI.enqueue`` scripts, each applied to every request of one audit.
JUDGE_FAULTS = (
    "429",
    "500",
    "401",
    "hang",
    "length",
    "malformed",
    "refuse",
    "fake_quote",
    "bad_label",
    "common_knowledge",
    "unknown_id",
    "bad_offsets",
)
#: Standing switches of the server that make a dishonest or hijacked judge.
JUDGE_SWITCHES = (
    "obey_injection",
    "always_supported_tiny_quote",
    "always_supported_unrelated_quote",
    "reject_json_schema",
)
JUDGE_INPUTS = [ROOT / "tests" / "fixtures" / s / "runtree.json" for s in ("changed_figure", "multi_hop")]
VERDICTS = {"supported", "contradicted", "absent", "unjudged"}


def _judge_audit(server: Any, decomposer: str) -> tuple[int, str, str]:
    argv = [
        "audit",
        *map(str, JUDGE_INPUTS),
        "--judge",
        "openai:fake-judge",
        "--base-url",
        server.base_url,
        "--decomposer",
        decomposer,
        "--no-cascade",
        "--no-store",
        "--json",
        "-",
    ]
    case = Case(id="judge", family="judge", files={}, argv=tuple(argv))
    return _run(case, Path("."))


@pytest.mark.parametrize("decomposer", ["rules", "fused"])
@pytest.mark.parametrize("fault", JUDGE_FAULTS + JUDGE_SWITCHES)
def test_judge_fault_keeps_the_promise(fault: str, decomposer: str) -> None:
    from tests.support.fake_openai import FakeOpenAI

    with FakeOpenAI(offline_judge=True, hang_seconds=0.5) as server:
        if fault in JUDGE_SWITCHES:
            setattr(server, fault, True)
        else:
            for _ in range(200):  # every request of the audit, retries included
                server.enqueue(fault, retry_after="0")
        code, stdout, stderr = _judge_audit(server, decomposer)
    COUNTS["tried"] += 1
    assert "Traceback" not in stdout + stderr
    if code == 2:  # the endpoint check refused to start (e.g. a bad key): one line, nothing judged
        assert len([line for line in stderr.splitlines() if line.startswith("Error:")]) == 1, stderr
        COUNTS["clean error"] += 1
        return
    assert code in (0, 3), stderr
    document = json.loads(stdout)
    evidence = {e["evidence_id"]: e["text"] for a in document["answers"] for e in a["evidence"]}
    for answer in document["answers"]:
        for claim in answer["claims"] or []:
            if claim["screened"]:
                continue
            assert claim["verdict"] in VERDICTS, claim
            if claim["verdict"] == "unjudged":
                assert claim["unjudged_reason"], claim  # fail closed, with the reason
            if fault.startswith("always_supported") and "$95.00" in claim["text"]:
                assert claim["verdict"] != "supported", claim  # the changed figure: no quote carries it
            for cite in claim["citations"]:  # every quote that stands is really in its item
                text = " ".join(evidence[cite["evidence_id"]].split()).casefold()
                assert " ".join(cite["quote"].split()).casefold() in text, cite
    COUNTS["recorded problem" if code == 3 else "clean"] += 1
