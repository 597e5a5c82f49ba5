"""A pytest plugin that keeps a whole test session away from the user's auditor settings and home.

``pytest_configure`` runs before any fixture of any scope, so a module- or session-scoped fixture that
audits (and so writes a store and a verdict cache) already sees the session's own ``AUDITOR_HOME``:
a function-scoped autouse fixture alone comes too late for those. Every ``AUDITOR_*`` setting of
:data:`auditor.settings.SETTINGS` (and the API key) is cleared for the session, since a user's
``AUDITOR_DB_URL`` names their store as surely as their home does. At the end the user's home is read
again and anything changed under it is listed. With ``CI`` set (a machine that runs nothing else)
that fails the session; elsewhere it is a warning line, since the user's own ``auditor`` commands,
or another checkout's test run, may have written there meanwhile.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from auditor.settings import SETTINGS, app_dir

#: path under the home -> (size, modification time in ns); a directory's entry has size -1.
Snapshot = dict[str, tuple[int, int]]

_REAL_HOME = pytest.StashKey[tuple[Path, Snapshot]]()
_SESSION_HOME = pytest.StashKey[Path]()
_SAVED = pytest.StashKey[dict[str, str]]()


def snapshot(home: Path) -> Snapshot:
    """What is under ``home`` (nothing when it does not exist)."""
    found: Snapshot = {}
    for path in sorted(home.rglob("*")) if home.is_dir() else []:
        stat = path.lstat()
        found[str(path.relative_to(home))] = (-1 if path.is_dir() else stat.st_size, stat.st_mtime_ns)
    return found


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """One line per path added, removed or modified."""
    lines = [f"added {path}" for path in sorted(after.keys() - before.keys())]
    lines += [f"removed {path}" for path in sorted(before.keys() - after.keys())]
    lines += [
        f"modified {path}" for path in sorted(before.keys() & after.keys()) if before[path] != after[path]
    ]
    return lines


def pytest_configure(config: pytest.Config) -> None:
    real = app_dir()  # before the environment changes: the home the user's own commands use
    config.stash[_REAL_HOME] = (real, snapshot(real))
    variables = {variable for variable, _ in SETTINGS.values()}
    config.stash[_SAVED] = {name: os.environ.pop(name) for name in variables if name in os.environ}
    home = Path(tempfile.mkdtemp(prefix="auditor-test-home-"))
    config.stash[_SESSION_HOME] = home
    os.environ["AUDITOR_HOME"] = str(home)  # subprocesses the tests start inherit it too


def pytest_sessionfinish(session: pytest.Session) -> None:
    real, before = session.config.stash[_REAL_HOME]
    changed = changes(before, snapshot(real))
    if not changed:
        return
    fail = bool(os.environ.get("CI"))
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        why = "" if fail else " (by these tests, or by another process: the check fails only under CI)"
        reporter.write_line(f"the user's auditor home changed during the tests{why}: {real}", red=True)
        for line in changed:
            reporter.write_line(f"  {line}", red=True)
    if fail:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_SESSION_HOME, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)
        os.environ.pop("AUDITOR_HOME", None)
        os.environ.update(config.stash[_SAVED])
