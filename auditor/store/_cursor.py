"""Opaque keyset cursors: the sort key of a page's last row, for the ``next`` of a paged read.

A cursor is URL-safe base64 of a JSON list, a UTC time first, then texts and integers. Reading one
checks its whole shape, so anything a client makes up (garbage, deep nesting, other types, a lone
surrogate a store cannot encode, a time out of range in UTC, an integer past the column's) is the
same one-line :class:`~auditor.errors.UsageError`, never a database error.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Any

from auditor.errors import UsageError
from auditor.trace import repair_text

#: The integers a cursor may hold: those an ``Integer`` column holds on every store (PostgreSQL's int4).
INT_MAX = 2**31 - 1


def make_cursor(stamp: datetime, *key: str | int) -> str:
    """The cursor of a row sorted by ``stamp`` then ``key``."""
    raw = json.dumps([stamp.isoformat(), *key]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def read_cursor(cursor: str, *kinds: type[str] | type[int]) -> tuple[Any, ...]:
    """The sort key ``cursor`` names: a UTC time, then one value of each of ``kinds``.

    Raises:
        UsageError: ``cursor`` is not one :func:`make_cursor` gave for this shape.
    """
    try:
        stamp, *key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if len(key) != len(kinds) or not isinstance(stamp, str) or repair_text(stamp) is not stamp:
            raise ValueError("not the cursor's shape")
        for value, kind in zip(key, kinds, strict=True):
            if kind is str and not (isinstance(value, str) and repair_text(value) is value):
                raise ValueError("a cursor's text is not text")
            if kind is int and not (type(value) is int and 0 <= value <= INT_MAX):
                raise ValueError("a cursor's integer is not one a store holds")
        when = datetime.fromisoformat(stamp)
        return (when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)), *key
    except (binascii.Error, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise UsageError(
            f"next={cursor[:80]!r} is not a cursor this server gave: pass the `next` value of the previous page."
        ) from exc
