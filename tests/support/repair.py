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


def read(adapter: Any, data: bytes, name: str, *, vouched: bool) -> list[str]:
    """What ``adapter`` reads from ``data``, item by item, as comparable text; ``vouched=False``
    under :func:`full_repair_check`."""
    from contextlib import nullcontext
    from io import BytesIO

    with nullcontext() if vouched else full_repair_check():
        items = list(adapter.parse(BytesIO(data), name))
    return [
        item.model_dump_json() + repr(item.detached_parents) if isinstance(item, Trace) else repr(item)
        for item in items
    ]


def same_both_ways(adapter: Any, data: bytes, name: str) -> list[str]:
    """What ``adapter`` reads from ``data``, after checking the shortcuts change none of it."""
    vouched = read(adapter, data, name, vouched=True)
    assert vouched == read(adapter, data, name, vouched=False)
    return vouched
