"""The pytest plugin, run as a user runs it: test files in a fresh directory, pytest via ``pytester``.

The plugin comes in through its ``pytest11`` entry point (the installed distribution), exactly as
in a user's project; nothing here registers it by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import auditor.run
from auditor.testing import NotGroundedError, assert_grounded
from auditor.trace import read_traces

pytest_plugins = ("pytester",)

REFUND = "Refunds are accepted within 30 days of purchase."
GOLDEN = [
    {"id": "refund", "question": "How long?", "sources": [{"id": "kb-1", "text": REFUND}], "answer": REFUND},
    {
        "id": "shipping",
        "question": "Is shipping free?",
        "sources": [{"id": "kb-2", "text": "Shipping costs 5 euros within the EU."}],
        "answer": "Shipping costs 12 euros within the EU.",
    },
]


@pytest.fixture(autouse=True, scope="module")
def _loaded(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Both kinds of audit once before the inline runs: pytester unloads the modules a run imports,
    and NumPy's and SciPy's extension modules cannot be loaded twice in one process."""
    assert_grounded(REFUND, [REFUND])
    path = tmp_path_factory.mktemp("warm") / "golden.jsonl"
    _golden(path)
    assert len(auditor.run.audit([path], store=False).answers) == 2


def _golden(path: Path, extra: str = "") -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in GOLDEN) + extra, encoding="utf-8")


def test_a_passing_and_a_failing_assert_grounded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_answers=f"""
        from auditor.testing import assert_grounded

        def test_grounded():
            assert_grounded({REFUND!r}, [{REFUND!r}])

        def test_made_up(grounding):
            grounding.assert_grounded(
                "Refunds are accepted within 60 days of purchase. Every order ships free.",
                [{{"id": "kb-refunds", "text": {REFUND!r}}}],
                question="What is the refund window?",
            )
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       auditor.testing.NotGroundedError: answer is not grounded: 0 of * judged claims supported*"
            "1 contradicted*judge offline (approximate)]",
            "E       unsupported claims:",
            "E         - contradicted: 'Refunds are accepted within 60 days of purchase'",
            "E             kb-refunds says: 'Refunds are accepted within 30 days of purchase.'",
            "E             why: 60 days differs from 30 days*",
            "E         - *: 'Every order ships free'",  # absent or undecided: not supported either way
        ]
    )
    # The failure points at the test's own line, not into the auditor.
    assert "_check.py" not in result.stdout.str()


def test_the_golden_set_marker_makes_one_case_per_answer(pytester: pytest.Pytester) -> None:
    _golden(pytester.path / "golden.jsonl", extra="not json\n")
    pytester.makepyfile(
        test_golden="""
        import pytest

        @pytest.mark.golden_set("golden.jsonl")
        def test_golden(golden_answer):
            assert golden_answer.question
            golden_answer.assert_grounded()
        """
    )
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, errors=1)  # the error: the line that was skipped
    result.stdout.fnmatch_lines(
        [
            "*test_golden.py::test_golden[[]refund[]] PASSED*",
            "*test_golden.py::test_golden[[]shipping[]] FAILED*",
            "*test_golden.py::test_golden[[]skipped:golden.jsonl:3[]] ERROR*",
        ]
    )
    out = result.stdout.str()
    assert "contradicted: 'Shipping costs 12 euros within the EU'" in out
    assert "golden.jsonl:3: not valid JSON" in out  # the skipped line, named


@pytest.mark.slow
def test_the_judge_and_policy_come_from_the_ini_and_the_command_line(pytester: pytest.Pytester) -> None:
    _golden(pytester.path / "golden.jsonl")
    pytester.makeini("[pytest]\nauditor_policy = strict\n")
    pytester.makepyfile(
        test_golden="""
        import pytest

        @pytest.mark.golden_set("golden.jsonl")
        def test_golden(golden_answer):
            golden_answer.assert_grounded()
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "shipping")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*[[]policy strict *, judge offline (approximate)]*"])
    bad = pytester.runpytest("-p", "no:cacheprovider", "--auditor-judge", "nonsense")
    assert bad.ret == pytest.ExitCode.INTERRUPTED  # a collection error, before any test runs
    bad.stdout.fnmatch_lines(["*golden set: Unknown judge 'nonsense': use 'offline' or 'openai:MODEL'*"])
    assert "Traceback" not in bad.stdout.str()


def test_a_golden_set_that_cannot_be_read_is_one_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_golden="""
        import pytest

        @pytest.mark.golden_set("missing/*.jsonl")
        def test_golden(golden_answer):
            golden_answer.assert_grounded()
        """,
        test_argument="""
        import pytest

        @pytest.mark.golden_set("golden.jsonl")
        def test_no_argument():
            pass
        """,
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        [
            "test_argument.py::test_no_argument: @pytest.mark.golden_set needs a `golden_answer` argument",
            "test_golden.py::test_golden: golden set: *missing/[*].jsonl: no file matches this pattern*",
        ],
        consecutive=False,
    )
    out = result.stdout.str()
    assert "Traceback" not in out and "During handling" not in out


def test_assert_grounded_on_a_trace_file_and_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    _golden(path)
    answers = assert_grounded(REFUND, path)
    assert [a.trace_id for a in answers] == ["refund"]
    trace = next(t for t in read_traces([path]).traces if t.trace_id == "shipping")
    with pytest.raises(NotGroundedError) as err:
        assert_grounded(None, trace, policy="default")
    assert isinstance(err.value, AssertionError)
    assert [a.trace_id for a in err.value.answers] == ["shipping"]
    assert "kb-2 says: 'Shipping costs 5 euros within the EU.'" in str(err.value)


def test_a_refusal_is_not_grounded() -> None:
    with pytest.raises(NotGroundedError, match="it makes no claim to judge"):
        assert_grounded("I don't have that information.", [REFUND])


def test_the_plugin_loads_nothing_of_the_auditor_at_start_up() -> None:
    code = "import sys, auditor.testing._plugin; print(sorted(m for m in sys.modules if m.startswith('auditor')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['auditor', 'auditor.testing', 'auditor.testing._plugin']"


def test_the_documented_snippet_runs_as_written(pytester: pytest.Pytester) -> None:
    section = (Path(__file__).parent.parent / "docs" / "pytest.md").read_text(encoding="utf-8")
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    records = section.split("file=golden.jsonl -->\n```json\n", 1)[1].split("```", 1)[0]
    for record in records.splitlines():
        json.loads(record)  # each documented record is valid JSON
    (pytester.path / "golden.jsonl").write_text(records, encoding="utf-8")
    pytester.makepyfile(test_answers=code)
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_golden[[]refund-1[]] PASSED*"])
