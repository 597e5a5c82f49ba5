"""The repair check as it was before the readers could vouch for any text: a reference for tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import auditor.trace._assemble as assemble_module
from auditor.trace import Problem, Trace, repair_trace


@contextmanager
def full_repair_check() -> Iterator[None]:
    """Every trace and span checked in full, whatever its reader vouched for (``valid_text``,
    ``vouched``): reading a file inside it gives what reading it before the shortcuts gave."""

    def unvouched(trace: Trace, source: str, **_: Any) -> tuple[Trace, list[Problem]]:
        return repair_trace(trace, source)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(assemble_module, "repair_trace", unvouched)
        yield
