"""Cutting text into pieces: how claims cut an answer, where a cited quote sits in its evidence.

Offsets index the original text (a quote is found case- and whitespace-insensitively, as the judge
verified it), so the page's script only toggles classes and never computes a position.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from auditor.results import ClaimOut


@dataclass(frozen=True)
class Piece:
    """A run of text. In an answer: plain, a claim (``key`` set) or a screened sentence.
    In an evidence item: ``marks`` names the citations whose quote covers this run."""

    text: str
    key: str | None = None
    verdict: str | None = None
    screen_reason: str | None = None
    marks: tuple[str, ...] = ()


def answer_pieces(text: str, keyed: list[tuple[str, ClaimOut]]) -> list[Piece]:
    """Cut the answer text at the claims' offsets; overlapping or out-of-range claims are skipped."""
    pieces: list[Piece] = []
    pos = 0
    for key, claim in keyed:
        if claim.start < pos or claim.end > len(text) or claim.end <= claim.start:
            continue
        if claim.start > pos:
            pieces.append(Piece(text[pos : claim.start]))
        chunk = text[claim.start : claim.end]
        if claim.screened:
            pieces.append(Piece(chunk, key=key, screen_reason=claim.screen_reason or "screened"))
        else:
            pieces.append(Piece(chunk, key=key, verdict=claim.verdict or "unjudged"))
        pos = claim.end
    if pos < len(text):
        pieces.append(Piece(text[pos:]))
    return pieces


def _normalise(text: str) -> tuple[str, list[int]]:
    """Lower-case, whitespace-collapsed text and, per output character, its index in ``text``."""
    out: list[str] = []
    index: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not in_space and out:
                out.append(" ")
                index.append(i)
            in_space = True
            continue
        in_space = False
        for low in ch.lower():
            out.append(low)
            index.append(i)
    return "".join(out), index


def find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` sits in ``text``, compared case- and whitespace-insensitively (as the judge
    verified it); offsets are into the original ``text``. None when it is not there."""
    needle, _ = _normalise(quote)
    needle = needle.strip()
    if not needle:
        return None
    hay, index = _normalise(text)
    at = hay.find(needle)
    if at < 0:
        return None
    return index[at], index[at + len(needle) - 1] + 1


def marked_pieces(text: str, spans: list[tuple[int, int, str]]) -> list[Piece]:
    """Cut ``text`` at every span boundary; each piece lists the span keys that cover it."""
    cuts = sorted({0, len(text), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    pieces = []
    for start, end in pairwise(cuts):
        if end > start:
            pieces.append(
                Piece(text[start:end], marks=tuple(k for s, e, k in spans if s <= start and end <= e))
            )
    return pieces or [Piece(text)]
