"""Yes/no attributes of a JSON record: what the record says about a property, and what it leaves unknown.

A business record's ``"OutdoorSeating": false`` or ``"Music": null`` is the record's own statement
about one property, more direct than any shared word. Two rules read them, both certain enough to
decide a claim whatever its support score (``HARD_RULES``):

- **unknown attribute**: a claim about a property whose only value in the admitted evidence is
  ``null`` ("does not provide music" against ``"Music": null``; "is good for groups" against
  ``"RestaurantsGoodForGroups": null``) states what the sources leave unknown: ``absent``. Not when
  any other segment of the evidence (a review, a true or false pair) uses the property's word, nor
  when the claim itself says the value is unknown ("music is not listed").
- **attribute flip**: a claim that states a property with no negation anywhere in it, where the
  record's pair is ``false`` / ``"no"`` ("offers outdoor seating" against ``"OutdoorSeating":
  false``), or negates it where the pair is ``true`` / ``"yes"``: ``contradicted``. A claim with a
  negation that does not reach the property's word ("has outdoor seating, but no WiFi") is left to
  the other rules: its polarity for that property is not certain.

A pair is *about* the claim when the last word of its key and half of the key's words are the
claim's (as the polarity rule of :mod:`auditor.judges.offline._rules` reads a pair); a one-word key under an object (``"street"`` under
``BusinessParking``) also needs the object's last word ("parking"), so "located on State Street"
is not about street parking, unless the record covers the claim as well as the polarity rule asks
(an object that only holds attributes, such as ``attributes``, asks nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from auditor.judges.offline._rules import NEGATION_COVERAGE
from auditor.judges.reading import ClaimCues, Item, Window, content_stems, negated, stem, words

# a claim saying the value is unknown is right about a null, whatever it names
_SAYS_UNKNOWN = re.compile(
    r"\b(?:unknown|unclear|unspecified|no (?:information|details?|data)|information|"
    r"not (?:been )?(?:listed|specified|mentioned|stated|provided|known|clear|indicated|given))\b",
    re.I,
)
_VALUES = frozenset({"true", "fals", "false", "yes", "no", "null", "none"})
# objects that only hold a record's attributes: their name adds nothing to a key inside them
_FREE = stem("free")
_OWN_KEY = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*:')
_CONTAINERS = frozenset({"attributes", "attribute", "properties", "features", "details", "info", "data"})


def _null(window: Window) -> bool:
    return window.seg.text.rstrip().endswith("null")


def _key_stems(window: Window) -> tuple[str, frozenset[str]]:
    """The stem of the key's last word and the stems of all its words."""
    return _key(window.seg.text)


@lru_cache(maxsize=16384)
def _key(pair: str) -> tuple[str, frozenset[str]]:
    keys = [w for w in words(pair) if stem(w) not in _VALUES and not w[0].isdigit()]
    return (stem(keys[-1]) if keys else ""), frozenset(content_stems(" ".join(keys)))


def _about(cues: ClaimCues, window: Window) -> bool:
    """The last word of the pair's key and half of the key's words are the claim's (as the
    polarity rule reads a pair, ``_about`` in :mod:`auditor.judges.offline._rules`)."""
    last, own = _key_stems(window)
    return bool(last) and last in cues.stems and 2 * len(own & cues.stems) >= len(own)


def _parent_ok(cues: ClaimCues, item: Item, window: Window) -> bool:
    """A one-word key under an object also needs the object's last word in the claim (or the
    record covering the claim as the polarity rule asks)."""
    _, own = _key_stems(window)
    parents = words(window.seg.extra)
    if len(own) > 1 or not parents or parents[-1].casefold() in _CONTAINERS:
        return True
    if stem(parents[-1]) in cues.stems:
        return True
    return bool(cues.stems) and len(cues.stems & item.stems) / len(cues.stems) >= NEGATION_COVERAGE


def _pairs(cues: ClaimCues, items: Sequence[Item]) -> list[tuple[Item, Window, str]]:
    """The attribute pairs (boolean or null) about the claim, with their key's last stem."""
    out = []
    for item in items:
        if not item.is_json:
            continue
        for w in item.singles:
            if (w.seg.boolean or _null(w)) and _about(cues, w) and _parent_ok(cues, item, w):
                out.append((item, w, _key_stems(w)[0]))
    return out


def unknown_attribute(cues: ClaimCues, text: str, items: Sequence[Item]) -> tuple[Item, Window] | None:
    """A null pair about the claim whose property no other segment of the evidence states, or None."""
    if not cues.stems or _SAYS_UNKNOWN.search(text):
        return None
    for item, w, last in _pairs(cues, items):
        if not _null(w):
            continue
        elsewhere = any(last in s.seg.stems and s is not w and not _null(s) for i in items for s in i.singles)
        if not elsewhere:
            return item, w
    return None


def attribute_flip(cues: ClaimCues, text: str, items: Sequence[Item]) -> tuple[Item, Window] | None:
    """A true/false pair about the claim whose polarity the claim certainly reverses, or None."""
    if not cues.stems:
        return None
    pairs = [(i, w, last) for i, w, last in _pairs(cues, items) if w.seg.boolean]
    any_negation = bool(cues.negated_stems) or negated(text)
    for item, w, last in pairs:
        said_no = last in cues.negated_stems
        flipped = (w.seg.negative and not any_negation) or (not w.seg.negative and said_no)
        # another pair on the same property agreeing with the claim: the record is not one-sided
        agreeing = any(other_last == last and other.seg.negative == said_no for _, other, other_last in pairs)
        if flipped and not agreeing:
            return item, w
    return None


def value_unstated(
    cues: ClaimCues, items: Sequence[Item], ignore: frozenset[str] = frozenset()
) -> tuple[Item, Window, str] | None:
    """A record's pair about the claim that holds a value (not true / false / null), while a word of
    the claim is in no admitted item at all: the record states the property, and not as the claim
    does ("Shipping on this order was free" against ``"shipping": "standard"``). Returns the item,
    the pair and the claim's unstated word, or None. ``ignore``: stems no window need hold
    (presence and light words). A claim with figures is left to the figure rules."""
    if not cues.stems or cues.quantities:
        return None
    held: frozenset[str] = frozenset().union(*(i.stems for i in items))
    unstated = sorted(cues.stems - held - ignore)
    if not unstated:
        return None
    if unstated == [_FREE] and any(q.kind == "money" and q.value == 0 for i in items for q in i.quantities):
        return None  # "free" is stated by an amount of 0 ("cost": "$0.00"): the support rules read it
    about: list[tuple[int, Item, Window]] = []
    for item in items:
        if not item.is_json:
            continue
        for w in item.singles:
            if w.seg.boolean or _null(w):
                continue
            m = _OWN_KEY.match(w.seg.text)
            key = [stem(k) for k in words(m.group(1))] if m else []
            parents = [p for p in words(w.seg.extra) if p.casefold() not in _CONTAINERS]
            if key and key[-1] in cues.stems:
                about.append((0, item, w))  # the pair's own key names what the claim speaks of
            elif parents and stem(parents[-1]) in cues.stems:
                about.append((1, item, w))  # ... or the object holding it ("shipping": {"method": ...})
    if not about:
        return None
    _, item, w = min(about, key=lambda a: a[0])
    return item, w, unstated[0]
