"""An evidence item taken apart for the state and value readers: the JSON record it opens with, pair
by pair with the record's subject, and the prose after it, sentence by sentence.

A record's subject is every key and scalar of the record and of the records around it, so a pair
deep in ``{"order": {"id": "1042", "status": "paid"}}`` is about order 1042.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from auditor.evidence import without_call
from auditor.text import normalise

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")


def split_item(text: str) -> tuple[str, Any, str]:
    """``text`` without its call line, the JSON record it opens with (None when it opens with none)
    and the text after the record (a note, a planted instruction), read as prose."""
    body = without_call(text)
    if body.lstrip()[:1] in ("{", "["):
        start = len(body) - len(body.lstrip())
        try:
            data, end = json.JSONDecoder().raw_decode(body, start)
        except ValueError:
            pass
        else:
            return body, data, body[end:]
    return body, None, body


def sentences(prose: str) -> Iterator[str]:
    """The sentences of ``prose`` that hold anything, as written."""
    return (sentence for sentence in _SENTENCE.split(prose) if sentence.strip())


def record_pairs(data: Any, around: str = "") -> Iterator[tuple[str, Any, str]]:
    """Each scalar pair of a record (lists and nested records walked): key, value and the
    normalised subject of the record that holds it."""
    if isinstance(data, list):
        for element in data:
            yield from record_pairs(element, around)
        return
    if not isinstance(data, dict):
        return
    subject = normalise(f"{around} {' '.join(data)} {_scalars(data)}")
    for key, value in data.items():
        if isinstance(value, dict | list):
            yield from record_pairs(value, f"{around} {key} {_scalars(data)}")
        else:
            yield key, value, subject


def pair_text(body: str, key: str, value: Any) -> str | None:
    """The pair ``"key": value`` as the item writes it (what a quote of it holds), else None."""
    span = re.search(rf'"{re.escape(key)}"\s*:\s*{re.escape(json.dumps(value, ensure_ascii=False))}', body)
    return span.group(0) if span is not None else None


def _scalars(obj: dict[str, Any]) -> str:
    return " ".join(
        str(v) for v in obj.values() if isinstance(v, str | int | float) and not isinstance(v, bool)
    )
