"""A JSON record read pair by pair for the certain subset (:mod:`auditor.judges.offline._settle`).

A pair the claim is not about may disagree word by word (``"RestaurantsReservations": false``
negates "restaurant"); the claim still stands when the pairs it *is* about have its polarity
(:func:`polarity_reading`). A negation denies every item of its list (:func:`listed_negation`). The words
no attribute states must lie in one review, and no review's word stands in for the value of an
attribute the claim is about (:func:`one_text`). A null pair states nothing (:func:`stated_stems`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from auditor.judges.offline._light import PRESENCE, light
from auditor.judges.reading import ClaimCues, Segment, Window, content_stems, stem, words
from auditor.judges.verify import about as _about

# A negation over a list denies every item of it: "no valet, garage, or lot parking", "does not
# offer street parking, valet, or validated parking" (a cue's own scope stops at two content words:
# :data:`auditor.judges.reading._lexical.NEGATION_WORDS`). Items of one or two words, after commas, the last
# after "or" / "nor"; a word that opens a clause ends the list ("not cheap, but ...").
_ITEM = r"(?!(?:but|and|while|although|though|yet|which|who|that|so|because|as)\b)[A-Za-z][\w'-]*"
_LISTED = re.compile(
    rf"\b(?:no|not|without|neither|never)\s+(?!only\b|just\b)((?:{_ITEM}\s+){{0,3}}?{_ITEM}"
    rf"(?:\s*,\s*{_ITEM}(?:\s+{_ITEM})?)*\s*,?\s+(?:or|nor)\s+{_ITEM}(?:\s+{_ITEM})?)",
    re.I,
)
NULL = re.compile(r":\s*null\s*$")  # a JSON pair whose value is null states nothing
# A clause boundary: a claim of several clauses may hold both polarities ("no WiFi, but takeout").
_CLAUSES = re.compile(r"[,;:]|\b(?:but|while|whereas|although|though|however|yet|except|unless)\b", re.I)


@lru_cache(maxsize=4096)
def listed_negation(text: str) -> frozenset[str]:
    """The stems of every item of a list a negation denies (:data:`_LISTED`)."""
    return frozenset().union(*(content_stems(m.group(1)) for m in _LISTED.finditer(text)))


def polarity_reading(text: str, cues: ClaimCues, w: Window, is_json: bool) -> str | None:
    """``"words"`` when no word the claim shares with the window is negated on one side only;
    else, in a record, ``"record"`` when a one-clause claim agrees with the boolean pairs it is about
    (:func:`_record_polarity`); else None."""
    shared = cues.stems & w.seg.stems
    if not (cues.negated_stems & shared) ^ (w.seg.negated & shared):
        return "words"
    if is_json and not _CLAUSES.search(text) and _record_polarity(cues, w):
        return "record"
    if is_json and _pair_polarity(cues, w, light(text)):
        return "record"
    return None


def _pair_polarity(cues: ClaimCues, w: Window, light: frozenset[str] = frozenset()) -> bool:
    """A claim against a record window whose word-by-word test fails on a pair the claim is not
    about (``"RestaurantsReservations": false`` negates "restaurant" for "The restaurant takes
    out orders"). Certain when every boolean pair the claim is about (:func:`_about`) has the
    claim's polarity for its words (``"valet": false`` for "no valet", ``"street": true`` for
    "street parking is available"), and each of the claim's other stems is stated by some pair
    of the window that is not null, with the claim's polarity (its ``light`` words and presence
    words aside: no window need hold them)."""
    about = [p for p in w.parts if p.boolean and _about(cues, Window(p, (p,), (), True))]
    if any(p.negative != bool(cues.negated_stems & p.stems) for p in about):
        return False
    held: frozenset[str] = frozenset().union(*(p.stems for p in about))
    stated = [p for p in w.parts if not NULL.search(p.text)]
    return all(
        any(s in p.stems and (s in p.negated) == (s in cues.negated_stems) for p in stated)
        for s in cues.stems - held - PRESENCE - light
    )


def _record_polarity(cues: ClaimCues, w: Window) -> bool:
    """A one-clause claim against a record: "valet parking is not available" negates "available"
    (a presence word, in no pair), yet states that ``"valet": false``; "does not offer WiFi" meets
    ``"WiFi": "no"``. The boolean pairs the claim is about (their key's last word and half its
    words the claim's, :func:`auditor.judges.verify._agree.about`) must all have the claim's polarity,
    at least one of them; the window's other pairs keep the word-by-word test (a review's text)."""
    pairs = [p for p in w.parts if p.boolean]
    about = [p for p in pairs if _about(cues, Window(p, (p,), (), True))]
    negative = bool(cues.negated_stems)
    if not about or any(p.negative != negative for p in about):
        return False
    rest = [p for p in w.parts if not p.boolean]
    stems: frozenset[str] = frozenset().union(*(p.stems for p in rest))
    negated: frozenset[str] = frozenset().union(*(p.negated for p in rest))
    shared = cues.stems & stems
    return not (cues.negated_stems & shared) ^ (negated & shared)


# A part of a record that is prose (a sentence of a review), not an attribute: it does not open
# with a key, or its value holds a sentence end.
_PROSE = re.compile(r'^\s*[^"\s]|[a-z][.!?](?:\s|\\n|"?\s*$)')


def one_text(text: str, cues: ClaimCues, need: frozenset[str], w: Window) -> bool:
    """In a record, the claim's stems that no attribute pair states lie in one prose part (one
    sentence of one review): words gathered across reviews state nothing together. Nor may a
    review's word stand in for the value of an attribute the claim is about: "offers free WiFi"
    is not stated by ``"WiFi": "paid"`` and a review's "free delivery"."""
    prose: list[Segment] = []
    attributes: list[Segment] = []
    for p in w.parts:
        (prose if _PROSE.search(p.text) else attributes).append(p)
    rest = need.difference(*(p.stems for p in attributes))
    if not prose or not rest:
        return True
    if not any(rest <= p.stems for p in prose):
        return False
    said = cues.stems | _said(text)
    for p in attributes:
        if p.boolean or NULL.search(p.text) or (m := _KEY.match(p.text)) is None:
            continue
        key = [stem(k) for k in words(m.group())]
        # about the claim: the key's last word and half its words are the claim's ("WiFi") ...
        about = bool(key) and key[-1] in said and 2 * len(said.intersection(key)) >= len(key)
        if about and not content_stems(p.text[m.end() :]) <= said:
            return False  # ... and the claim does not say the record's value ("paid")
    return True


@lru_cache(maxsize=4096)
def _said(text: str) -> frozenset[str]:
    """Every content stem of the claim's text, its figures' words and names included."""
    return frozenset(content_stems(text))


_KEY = re.compile(r'^\s*"(?:[^"\\]|\\.)*"\s*:')


def stated_stems(w: Window) -> frozenset[str]:
    """The stems of a JSON window's parts that state a value (a null pair says it is not known)."""
    if not any(NULL.search(p.text) for p in w.parts):
        return w.seg.stems
    return frozenset().union(*(p.stems for p in w.parts if not NULL.search(p.text)))
