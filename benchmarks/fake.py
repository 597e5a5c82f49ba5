"""The test suite's fake OpenAI server (``tests/support/fake_openai.py``), wherever it is installed.

A checkout imports it as ``tests.support.fake_openai``; a plain install (``pip install .``) ships
the same folder as ``benchmarks.support`` (``pyproject.toml``), so ``python -m benchmarks`` runs
from any folder without the source tree.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.fake_openai import FakeOpenAI
else:
    try:
        FakeOpenAI = import_module("benchmarks.support.fake_openai").FakeOpenAI
    except ImportError:
        from tests.support.fake_openai import FakeOpenAI

__all__ = ["FakeOpenAI"]
