"""The offline judge's other side of a conflict: admitted items it does not cite that contradict
the claim (:func:`contradicting_items`). What a conflict then becomes is decided for every judge
alike in :mod:`auditor.judges.verify._conflicts`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from auditor.judges._verdicts import Citation
from auditor.judges.offline._rules import polarity_conflict, quote, rival_figures
from auditor.judges.reading import ClaimCues, Item
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num
from auditor.judges.verify import keyed_rival

MAX_OPPOSING_ITEMS = 3  # items listed on the other side of a conflict; more add nothing to read


def contradicting_items(cues: ClaimCues, cited: set[str], items: Sequence[Item]) -> tuple[Citation, ...]:
    """The offline judge's other side: admitted items it does not cite that contradict the claim.

    Each item is read on its own, as the judge reads all of them for a contradiction: it must name
    every entity of the claim (a different product's figure is no contradiction) and every id it
    names by a noun ("1042" of "Order 1042"), and then either
    a window covering the claim states a rival figure (comparable, another value, and none of the
    claim's own in that item), or a sentence states the claim's words with the opposite polarity.
    At most :data:`MAX_OPPOSING_ITEMS` items; quotes are exact evidence spans.
    """
    found: list[Citation] = []
    for item in items:
        if len({c.evidence_id for c in found}) >= MAX_OPPOSING_ITEMS:
            break
        if item.evidence_id in cited or any(not ent.present(e, item.norm) for e in cues.entities):
            continue
        if any(re.search(rf"(?<![\w.]){re.escape(i)}(?![\w.])", item.norm) is None for i in cues.ids):
            continue  # not the order 1042 of "Order 1042 ...": another thing, whatever its figures
        quotes = _rival_quotes(cues, item) or _keyed_rivals(cues, item)
        if not quotes and (flip := polarity_conflict(cues, [item])) is not None:
            quotes = quote(item, flip[1], cues)
        found += quotes
    return tuple(found)


def _keyed_rivals(cues: ClaimCues, item: Item) -> tuple[Citation, ...]:
    """Pairs of a record keyed by the claim's words with another figure (``"stock": 0`` against
    "14 units in stock", whose ``"stock": 14`` another tool returned): :func:`keyed_rival`."""
    if not item.is_json:
        return ()
    return tuple(
        Citation(evidence_id=item.evidence_id, quote=item.text[s:e])
        for w in item.singles
        if keyed_rival(cues, w)
        for s, e in w.seg.spans
    )[:3]


def _rival_quotes(cues: ClaimCues, item: Item) -> tuple[Citation, ...]:
    for q in cues.quantities:
        if any(num.matches(q, e) for e in item.quantities):
            continue
        rival = rival_figures(cues, q, [item])
        if rival is None:
            continue
        _, window, rivals = rival
        if window.contiguous:
            return quote(item, window, cues)
        return tuple(
            Citation(evidence_id=item.evidence_id, quote=item.text[s:e])
            for _, k in rivals[:3]
            for s, e in window.parts[k].spans
        )
    return ()
