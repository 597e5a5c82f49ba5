"""Shared test helpers: paths, an isolated app directory per session and per test, and the one Ray cluster.

The session's isolation (``tests/support/isolation.py``) is in place before any fixture of any scope
runs and fails the session if the user's own auditor home changed; each test then gets its own home.

The Ray tests (marker ``ray``) share one local cluster for the session, started by the first of them
(a start costs seconds on two cores), and run last, together: the cluster's processes never sit
beside the rest of the suite, and it is shut down once, at the end.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

pytest_plugins = ("tests.support.isolation",)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own app directory, so no test touches the user's store."""
    monkeypatch.setenv("AUDITOR_HOME", str(tmp_path_factory.mktemp("auditor-home")))


@pytest.fixture(scope="session", autouse=True)
def _ctrl_c_reaches_the_tests() -> Iterator[None]:
    """Ctrl-C (SIGINT) interrupts the tests and the processes they start, as a user's would, also
    when the runner was started with SIGINT ignored (``pytest &`` in a script or a non-interactive
    shell: Python then installs no handler, and children inherit the ignoring)."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A real local Ray cluster (``num_cpus=2``), the ``ray`` module; skipped without Ray (the ``ray``
    extra), a failure when ``CI`` is set, since CI installs it. One cluster serves every Ray test."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):  # CI installs the ray extra: these tests must run there
            pytest.fail("Ray is not installed: pip install -e '.[ray]' (scripts/test does)")
        pytest.skip("Ray is not installed (the ray extra)")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.hookimpl(trylast=True)  # after any reordering plugin (pytest-randomly): keeps its order
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests on the shared Ray cluster last, together, in their order."""
    on_ray = [item for item in items if "ray_cluster" in getattr(item, "fixturenames", ())]
    if on_ray:
        rest = [item for item in items if "ray_cluster" not in getattr(item, "fixturenames", ())]
        items[:] = [*rest, *on_ray]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The fault corpora's counts, when they ran (tests/test_fault_corpus.py, and per store
    tests/test_serve_fault_corpus.py)."""
    import sys

    corpus = next((m for name, m in sys.modules.items() if name.endswith("test_fault_corpus")), None)
    counts = getattr(corpus, "COUNTS", None)
    if counts:
        shown = ", ".join(f"{key} {value}" for key, value in sorted(counts.items()))
        terminalreporter.write_line(f"fault corpus: {shown}")
    served = next((m for name, m in sys.modules.items() if name.endswith("test_serve_fault_corpus")), None)
    for store, seen in sorted((getattr(served, "COUNTS", None) or {}).items()):
        shown = ", ".join(f"{key} {value}" for key, value in sorted(seen.items()))
        terminalreporter.write_line(f"serve fault corpus ({store}): {shown}")
