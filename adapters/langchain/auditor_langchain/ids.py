"""Run and trace ids, and run times, as the adapter keeps them: read once, then looked up.

Ids are normalised by :func:`normalise_id`: a UUID becomes its canonical lower-case form *with*
dashes (as LangSmith shows it), anything else is lower-cased as written. A run's ids are read many
times (its own, its children's parent id, its trace's, each segment of its ``dotted_order``) and
its start and end again as its events' times, so both are remembered by their text; each cache
holds at most :data:`_KEPT` entries (then starts afresh), so memory does not grow with the file.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

_IDS: dict[str, str] = {}
_TIMES: dict[str, datetime] = {}
#: :func:`parse_time`'s cache, for a loop that looks a time up before calling it.
KNOWN_TIMES = _TIMES
_KEPT = 8192
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def normalise_id(value: Any) -> str | None:
    """A run or trace id as a stable lower-case string (canonical dashed form for UUIDs)."""
    if type(value) is str:
        known = _IDS.get(value)  # ids are read many times per run (its own, its parent's, its trace's)
        if known is None:
            known = _normalise(value)
            if len(_IDS) >= _KEPT:
                _IDS.clear()
            _IDS[value] = known
        return known or None
    return _normalise(value) or None


def _normalise(value: Any) -> str:
    """:func:`normalise_id`, with ``""`` for no id."""
    if type(value) is str and len(value) == 36 and _CANONICAL_UUID.fullmatch(value):
        return value  # already what uuid.UUID would print
    if value is None or isinstance(value, bool | dict | list):
        return ""
    text = str(value).strip()
    if not text:
        return ""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return text.lower()


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string (naive means UTC) or epoch seconds/milliseconds, as aware UTC."""
    if type(value) is str:  # the common case, read once per text
        known = _TIMES.get(value)
        if known is not None:
            return known
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    known = _TIMES.get(value)
    if known is not None:
        return known
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    parsed = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    if len(_TIMES) >= _KEPT:
        _TIMES.clear()
    _TIMES[value] = parsed
    return parsed
