"""The test session never touches the user's auditor home (issue 29, item 15).

Each case runs a small test session in a subprocess with this repository's ``tests/conftest.py`` as
its configuration and ``AUDITOR_HOME`` pointing at a directory that plays the user's real home, then
reads that directory back.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

pytest_plugins = ("pytester",)

TRACE = FIXTURES / "single_retrieval" / "openinference.otlp.jsonl"


def _files(home: Path) -> list[str]:
    return sorted(str(path.relative_to(home)) for path in home.rglob("*"))


def _run(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    home: Path,
    source: str,
    *,
    db_url: bool = False,
) -> pytest.RunResult:
    """``source`` as a test module under the repository's test configuration, the user's home ``home``."""
    pytester.makepyfile(test_inner=textwrap.dedent(source))
    monkeypatch.setenv("AUDITOR_HOME", str(home))
    if db_url:  # a user's own store URL is theirs as much as their home
        monkeypatch.setenv("AUDITOR_DB_URL", f"sqlite:///{home}/elsewhere.db")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return pytester.runpytest_subprocess("-p", "tests.conftest", "-q", "-p", "no:cacheprovider")


@pytest.mark.slow  # a pytest session in a subprocess
@pytest.mark.parametrize("db_url", [False, True], ids=["home", "home-and-db-url"])
def test_module_scoped_audit_stays_out_of_the_real_home(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, db_url: bool
) -> None:
    """A module-scoped fixture runs before any function-scoped one: it must already be isolated."""
    home = tmp_path / "real-home"
    home.mkdir()
    (home / "keep.txt").write_text("the user's file\n", encoding="utf-8")
    result = _run(
        pytester,
        monkeypatch,
        home,
        f"""
        import pytest
        from auditor.run import audit

        @pytest.fixture(scope="module")
        def result():
            return audit([{str(TRACE)!r}])

        def test_audited(result):
            assert result.answers
        """,
        db_url=db_url,
    )
    result.assert_outcomes(passed=1)
    assert _files(home) == ["keep.txt"]
    assert (home / "keep.txt").read_text(encoding="utf-8") == "the user's file\n"


@pytest.mark.slow  # a pytest session in a subprocess
@pytest.mark.parametrize("ci", [True, False], ids=["ci", "local"])
def test_a_write_into_the_real_home_is_reported_and_fails_under_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ci: bool
) -> None:
    """Whatever slips past the isolation is named; under CI (nothing else running) the session fails."""
    if ci:
        monkeypatch.setenv("CI", "true")
    else:
        monkeypatch.delenv("CI", raising=False)
    home = tmp_path / "real-home"
    home.mkdir()
    result = _run(
        pytester,
        monkeypatch,
        home,
        f"""
        from pathlib import Path

        def test_writes_behind_the_isolation():
            Path({str(home / "auditor.db")!r}).write_text("x", encoding="utf-8")
        """,
    )
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if ci else pytest.ExitCode.OK)
    result.stdout.fnmatch_lines(["*the user's auditor home changed during the tests*", "  added auditor.db"])
