"""Launch Debian's Chromium under Playwright for the report's browser tests (no browser download).

Locally the browser tests skip when ``/usr/bin/chromium`` or the ``playwright`` package is missing;
with ``CI=true`` a missing browser is a failure, because CI installs it (``apt-get install chromium``).
``AUDITOR_CHROMIUM`` points at another Chromium binary. ``AUDITOR_SCREENSHOTS`` names a folder the
tests copy their screenshots into (scripts/test sets ``build/screenshots``, so CI keeps them); without
it they stay in pytest's temporary folders.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_path() -> str | None:
    configured = os.environ.get("AUDITOR_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    for candidate in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if Path(candidate).is_file():
            return candidate
    return shutil.which("chromium")


def require_browser() -> str:
    """The Chromium executable; skips the test when unavailable, fails instead when ``CI=true``."""
    problem = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "the playwright package is not installed (pip install -e '.[test]')"
    executable = chromium_path()
    if problem is None and executable is None:
        problem = "no Chromium found (apt-get install chromium, or point AUDITOR_CHROMIUM at one)"
    if problem is not None or executable is None:
        message = f"browser tests need Chromium: {problem}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return executable


@contextmanager
def launched(executable: str) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def keep_screenshot(taken: Path, name: str) -> None:
    """Copy a screenshot a test took to ``$AUDITOR_SCREENSHOTS/name`` (the folder is made), when set."""
    folder = os.environ.get("AUDITOR_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(taken, Path(folder) / name)
