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
