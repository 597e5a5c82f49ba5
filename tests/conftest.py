"""Shared test helpers: paths and a small builder for normalised traces."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own app directory, so no test touches the user's store."""
    monkeypatch.setenv("AUDITOR_HOME", str(tmp_path_factory.mktemp("auditor-home")))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The fault corpus's counts, when it ran (tests/test_fault_corpus.py)."""
    import sys

    corpus = next((m for name, m in sys.modules.items() if name.endswith("test_fault_corpus")), None)
    counts = getattr(corpus, "COUNTS", None)
    if counts:
        shown = ", ".join(f"{key} {value}" for key, value in sorted(counts.items()))
        terminalreporter.write_line(f"fault corpus: {shown}")
