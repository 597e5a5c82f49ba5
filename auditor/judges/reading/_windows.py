"""Evidence prepared for the offline judge: each item cut into windows, with their stems and quantities.

A window is one segment, two adjacent sentences, or a JSON object's pairs. Preparation depends on the
item's id, text and read limit alone and is cached, so an item shared by many claims or answers is
cut once.

The judge reads a bounded amount of evidence, so a hostile or huge tool result costs bounded work:
at most :data:`ITEM_CHARS` characters of one item and :data:`CLAIM_CHARS` of all the evidence of one
claim (admitted items first, in order, then excluded ones). An item read only in part is
``partial``: its last segment, which the limit may have cut in half, is dropped, so every window
is text the judge read whole.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from auditor.judges.reading import _numbers as num
from auditor.judges.reading._segments import Segment, merge, segments_of
from auditor.text import normalise

MONEY_KEYS = frozenset({"pay", "fee", "refund", "balanc", "salar", "revenu", "credit", "debit"})
ITEM_CHARS = 200_000  # characters of one evidence item the offline judge reads
CLAIM_CHARS = 500_000  # characters of evidence, over all items, it reads for one claim


@dataclass(frozen=True)
class Window:
    """One or more segments of an item matched as a unit, with its quantities."""

    seg: Segment
    parts: tuple[Segment, ...]
    quantities: tuple[tuple[num.Quantity, int], ...]  # (quantity, index of the part stating it)
    contiguous: bool


@dataclass(frozen=True)
class Item:
    """One evidence item, prepared: its windows, their single segments, its quantities and stems.

    ``text`` is the part read: the whole item, or for a ``partial`` item the beginning up to the
    end of its last whole segment.
    """

    evidence_id: str
    text: str
    norm: str
    windows: tuple[Window, ...]
    singles: tuple[Window, ...]  # one segment each: for negation
    quantities: tuple[num.Quantity, ...]
    is_json: bool
    stems: frozenset[str]
    partial: bool = False


def _quantities(parts: Sequence[Segment]) -> tuple[tuple[num.Quantity, int], ...]:
    out: list[tuple[num.Quantity, int]] = []
    for i, part in enumerate(parts):
        hint = bool(part.stems & MONEY_KEYS) and part.extra != part.text
        out.extend((q, i) for q in num.extract(part.text, money_hint=hint, evidence=True))
    return tuple(out)


def read_limits(texts: Sequence[str], budget: int = CLAIM_CHARS) -> list[int]:
    """How many characters of each text to read: up to :data:`ITEM_CHARS` each, ``budget`` in all."""
    limits = []
    for text in texts:
        limit = min(ITEM_CHARS, budget)
        limits.append(ITEM_CHARS if len(text) <= limit else limit)  # one cache entry per whole item
        budget -= min(limit, len(text))
    return limits


@lru_cache(maxsize=4096)
def prepare(evidence_id: str, text: str, limit: int = ITEM_CHARS) -> Item:
    """Cut one evidence item into windows (prose: single and adjacent sentences; JSON: pairs, objects).

    Only the first ``limit`` characters are read (see the module docstring).
    """
    partial = len(text) > limit
    segments = segments_of(evidence_id, text[:limit] if partial else text, cut=partial)
    if partial:
        text = text[: max((e for seg in segments for _, e in seg.spans), default=0)]
    is_json = bool(segments) and segments[0].text.lstrip().startswith('"')
    singles = [Window(s, (s,), _quantities((s,)), True) for s in segments]
    own = {id(w.seg): w.quantities for w in singles}

    def window(parts: Sequence[Segment], contiguous: bool) -> Window:
        qs = tuple((q, k) for k, part in enumerate(parts) for q, _ in own[id(part)])
        return Window(merge(parts), tuple(parts), qs, contiguous)

    windows = list(singles)
    if is_json:
        groups: dict[str, list[Segment]] = {}
        for s in segments:
            groups.setdefault(s.extra, []).append(s)
        for group in groups.values():
            if len(group) > 1:
                windows.append(window(group, False))
        if 1 < len(segments) <= 80 and len(groups) > 1:
            windows.append(window(segments, False))
    else:
        for a, b in itertools.pairwise(segments):
            windows.append(window((a, b), True))
    quantities = tuple(q for w in singles for q, _ in w.quantities)
    stems: frozenset[str] = frozenset().union(*(s.stems for s in segments))
    return Item(
        evidence_id,
        text,
        normalise(text),
        tuple(windows),
        tuple(singles),
        quantities,
        is_json,
        stems,
        partial,
    )
