"""Whether a verdict's quotes carry its claim: the second half of quote verification.

A quote that occurs in its item proves that the judge copied something, not that what it copied
states the claim: a judge answering ``supported`` to everything while quoting ``"P"``, or any real
sentence of the evidence, passes the first check. This module reads the claim with the offline
judge's cues (:mod:`auditor.judges.reading._cues`: the same numbers, dates, units, entities and stems) and
asks of the verified quotes, taken together (an aggregated or multi-hop claim may need several):

- ``supported``: every quantity and date of the claim is stated in the quotes (``$80`` ==
  ``80.00 USD``, ``March 3, 2025`` == ``2025-03-03``, ``two weeks`` == ``14 days``), every named
  entity occurs in them or in the item they quote (a quote saying "he was stabbed" from an
  article naming Copeland: resolving "he" is beyond a surface check, and the name must still be in
  what the judge cited), they hold at least :data:`MIN_SHARE` of the claim's content stems, and
  they are not trivially short (:data:`MIN_QUOTE_CHARS`). A claim with nothing to check (no content
  word, figure or entity: "There is no passage provided") is carried only by quotes holding all
  of its words;
- ``contradicted``: the quotes are not trivially short and hold a rival figure (a quantity of the
  same kind and unit as one of the claim's, with another value, as a date of another day), a
  rival entity (one of the claim's entities is missing and another stands in its place, in a quote
  sharing the claim's words), or the claim's words with the opposite polarity ("not refundable"
  against "refundable", a JSON ``false``).

A quote from a JSON item also states the key path of the pairs it holds (``"amount": 80`` inside
``"refund"`` states a refund amount), as the offline judge reads it. The thresholds were chosen on
the labelled dev set so that no verdict of a judge that quotes correctly is demoted
(``python -m benchmarks --only quotes``; the figures are in ``docs/benchmarks.md``). Pure functions;
the readings of claims, quotes and JSON items are cached (bounded LRU caches of immutable values),
as every verdict is checked twice: in the LLM judge's parsing, then in the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from auditor.judges.reading import ITEM_CHARS, ClaimCues, claim_cues, prepare, stated, words
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num
from auditor.text import normalise

MIN_SHARE = 0.5  # share of the claim's content stems the quotes of a supported verdict must hold
MIN_QUOTE_CHARS = 3  # fewer quoted characters (whitespace aside) carry nothing ("$80" is 3)

DOES_NOT_SUPPORT = "quote_does_not_support"  # the judge error of a verdict the check demotes


@dataclass(frozen=True)
class Quoted:
    """What the verified quotes of one verdict state, together."""

    text: str  # the quotes, one a line
    norm: str
    cited: tuple[str, ...]  # the normalised text of each item quoted (where entities may be named)
    stems: frozenset[str]
    negated: frozenset[str]  # stems under negation (or in a JSON pair whose value is false)
    quantities: tuple[num.Quantity, ...]
    chars: int  # quoted characters, whitespace aside


@lru_cache(maxsize=256)
def normalised(text: str) -> str:
    """``normalise(text)``, cached: an item is quoted by many claims, and checked twice per verdict."""
    return normalise(text)


@lru_cache(maxsize=4096)
def _cues(claim: str) -> ClaimCues:
    return claim_cues(claim)  # each verdict is checked twice (judge, then pipeline): read the claim once


#: ``claim_cues`` through the quote check's cache: the offline judge, ``settle()`` and the quote
#: check read a claim's cues up to five times per verdict, from one reading.
cached_claim_cues = _cues


@dataclass(frozen=True)
class _Said:
    """What one quote states on its own (the part of :class:`Quoted` that does not depend on its item)."""

    stems: frozenset[str]
    negated: frozenset[str]
    quantities: tuple[num.Quantity, ...]


@lru_cache(maxsize=4096)
def _said(quote: str) -> _Said:
    stems, negs = stated(quote)  # the offline judge's quotes were read as its windows already
    return _Said(stems, negs, tuple(num.extract(quote)))


@lru_cache(maxsize=256)
def _pairs(evidence_id: str, text: str) -> tuple[tuple[str, _Said], ...]:
    """A JSON item's single pairs (normalised text, with their key paths' stems); () for prose."""
    item = prepare(evidence_id, text, ITEM_CHARS)  # as the offline judge calls it: one cache entry
    if not item.is_json:
        return ()
    return tuple(
        (
            normalise(single.seg.text),
            _Said(single.seg.stems, single.seg.negated, tuple(q for q, _ in single.quantities)),
        )
        for single in item.singles
    )


def read_quotes(quotes: Sequence[tuple[str, str, str]]) -> Quoted:
    """Read ``(quote, evidence_id, item text)`` triples, each quote already found in its item.

    Cached (the result is immutable): the judge's parsing and the pipeline check the same quotes.
    """
    return _read_quotes(tuple(quotes))


@lru_cache(maxsize=256)
def _read_quotes(quotes: tuple[tuple[str, str, str], ...]) -> Quoted:
    stems: set[str] = set()
    negs: set[str] = set()
    quantities: list[num.Quantity] = []
    cited: dict[str, str] = {}
    for quote, evidence_id, text in quotes:
        if evidence_id not in cited:
            cited[evidence_id] = normalised(text)
        said = _said(quote)
        stems |= said.stems
        negs |= said.negated
        quantities += said.quantities
        if text.lstrip()[:1] in ("{", "["):
            pairs = _pairs(evidence_id, text)
            if pairs:
                needle = normalise(quote)
                for norm, pair in pairs:  # the pairs the quote holds, with their key paths
                    if norm in needle:
                        stems |= pair.stems
                        negs |= pair.negated
                        quantities += pair.quantities
    joined = "\n".join(q for q, _, _ in quotes)
    return Quoted(
        joined,
        normalise(joined),
        tuple(cited.values()),
        frozenset(stems),
        frozenset(negs),
        tuple(quantities),
        len("".join(joined.split())),  # characters but whitespace (``str.split``'s whitespace is ``isspace``)
    )


def share(cues: ClaimCues, quoted: Quoted) -> float:
    """The share of the claim's content stems the quotes hold (money words count with the amount).

    A claim with no content stems has nothing to share: 1.0.
    """
    if not cues.stems:
        return 1.0
    matched = cues.stems & quoted.stems
    if cues.money_words and any(_stated(q, quoted) for q in cues.money):
        matched |= cues.money_words
    return len(matched) / len(cues.stems)


def _stated(q: num.Quantity, quoted: Quoted) -> bool:
    return any(num.matches(q, e) for e in quoted.quantities)


def support_shortfall(claim: str, quoted: Quoted) -> str | None:
    """Why the quotes cannot state ``claim`` (for a ``supported`` verdict), or None when they can."""
    if quoted.chars < MIN_QUOTE_CHARS:
        return f"the quotes hold {quoted.chars} character(s)"
    cues = _cues(claim)
    missing = [q for q in cues.quantities if not _stated(q, quoted)]
    if missing:
        return f"the quotes do not state {num.describe(missing[0])}"
    absent = [e for e in cues.entities if not any(ent.present(e, t) for t in (quoted.norm, *quoted.cited))]
    if absent:
        return f"neither the quotes nor the items they quote name {absent[0]!r}"
    if not cues.stems and not cues.quantities and not cues.entities:
        lacking = {w.casefold() for w in words(claim)} - {w.casefold() for w in words(quoted.text)}
        if lacking:
            return f"the claim has no content word to check and the quotes lack {sorted(lacking)[0]!r}"
    held = share(cues, quoted)
    if held < MIN_SHARE:
        return f"the quotes hold {held:.0%} of the claim's content words (at least {MIN_SHARE:.0%} needed)"
    return None


def contradiction_shortfall(claim: str, quoted: Quoted) -> str | None:
    """Why the quotes cannot contradict ``claim``, or None when they hold a rival or a negation."""
    if quoted.chars < MIN_QUOTE_CHARS:
        return f"the quotes hold {quoted.chars} character(s)"
    cues = _cues(claim)
    if any(
        num.comparable(q, e) and not any(num.matches(c, e) for c in cues.quantities)
        for q in cues.quantities
        for e in quoted.quantities
    ):
        return None  # a rival figure or date
    shared = cues.stems & quoted.stems
    if shared:
        claim_neg, quote_neg = cues.negated_stems & shared, quoted.negated & shared
        if claim_neg ^ quote_neg and not claim_neg & quote_neg:
            return None  # the claim's words with the opposite polarity
        claimed = {e.casefold() for e in cues.entities}
        if any(not ent.present(e, quoted.norm) for e in cues.entities) and any(
            e.casefold() not in claimed and e.casefold() not in normalise(claim)
            for e in ent.entities(quoted.text)
        ):
            return None  # another entity in the place of the claim's
    return "the quotes hold no rival figure, date or entity and no negation of the claim"


def clear_quote_caches() -> None:
    """Forget every cached reading (a benchmark row starts as a fresh process would)."""
    for cached in (normalised, _cues, _said, _pairs, _read_quotes, stated):
        cached.cache_clear()
    num.clear_cache()
