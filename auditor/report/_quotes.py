"""Quotes as the page shows them: a verdict's citations, and the two sides of a conflict.

Each quote is located in its evidence item (case- and whitespace-insensitively, as the judge
verified it) and recorded as a mark on that item's text, so choosing a claim lights every quote it
rests on, on either side of a conflict, and the page's script never computes a position.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from auditor.report._pieces import find_quote
from auditor.results import ClaimOut, EvidenceOut

Marks = dict[str, list[tuple[int, int, str]]]  # evidence id -> (start, end, quote key)


@dataclass(frozen=True)
class CitationView:
    key: str
    evidence_anchor: str | None
    evidence_label: str
    quote: str
    found: bool


@dataclass(frozen=True)
class ConflictView:
    """Admitted sources that disagree on a claim: both sides' quotes, shown side by side."""

    supports: list[CitationView]
    contradicts: list[CitationView]
    resolution: str  # the policy's on_conflict as applied: "flag", "contradicted", "prefer_newest"
    note: str  # what that did to the verdict, in words


RESOLUTIONS = {
    "flag": "the judge's verdict stands, flagged: the answer cannot pass unless the policy allows conflicts",
    "contradicted": "the policy's on_conflict makes the claim contradicted",
    "prefer_newest": "the policy's on_conflict follows the newer source",
}


def quote_view(
    key: str,
    evidence_id: str,
    quote: str,
    by_id: Mapping[str, EvidenceOut],
    anchors: Mapping[str, str],
    labels: Mapping[str, str],
    marks: Marks,
) -> CitationView:
    """One quote, located in its item and marked there under ``key`` (when it is found)."""
    item = by_id.get(evidence_id)
    span = find_quote(item.text, quote) if item else None
    if span:
        marks.setdefault(evidence_id, []).append((span[0], span[1], key))
    return CitationView(
        key, anchors.get(evidence_id), labels.get(evidence_id, evidence_id), quote, span is not None
    )


def conflict_view(
    key: str,
    claim: ClaimOut,
    by_id: Mapping[str, EvidenceOut],
    anchors: Mapping[str, str],
    labels: Mapping[str, str],
    marks: Marks,
) -> ConflictView:
    """Both sides of the claim's conflict, each quote marked in its evidence like a citation."""
    sides: dict[str, list[CitationView]] = {"supports": [], "contradicts": []}
    for n, side in enumerate(claim.conflicts):
        sides[side.stance].append(
            quote_view(f"{key}x{n}", side.evidence_id, side.quote, by_id, anchors, labels, marks)
        )
    resolution = claim.conflict_resolution or "flag"
    return ConflictView(sides["supports"], sides["contradicts"], resolution, RESOLUTIONS[resolution])
