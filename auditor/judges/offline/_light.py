"""The words of a claim one evidence window need not hold for the certain subset
(:mod:`auditor.judges.offline._settle`, where the reasons and measurements are).

- **Presence words** (:data:`PRESENCE`): "offers", "available", "located": a record's
  ``"RestaurantsTakeOut": true`` offers takeout without saying so.
- **Light words** (:func:`light`): a connective opening the claim, "a (wide) variety of", a citation
  marker, an attribution to a record's reviews, a hedge: they tie the claim to the answer or to its
  source, or only weaken what the window states.
- **Stand-ins** (:func:`stand_ins`): in prose, a general noun ("part of her leg") or a derived form
  of a word the window holds ("moist" / "moisture").
"""

from __future__ import annotations

import re
from functools import lru_cache

from auditor.judges.reading import Item, content_stems, stem, words

MIN_STEMS = 3  # one window must hold at least this many content stems of the claim (stand-ins aside)
# Words that say a thing is there, not what it is: "offers takeout", "parking is available", "located
# at 202 N Milpas", "takeout options". A window need not repeat them when it states the rest (a
# record's ``"RestaurantsTakeOut": true`` offers takeout). Stems, as :func:`stem` gives them
# ("provides", "features" and "serves" are "offer" through the synonym list). Never "local" ("loc"),
# which is a claim of its own; never a word of time ("currently").
PRESENCE = frozenset({"offer", "avail", "locat", "option", "servic", "amen", "busi", "establish"})
# Nouns that name a thing only by its kind ("general nouns", Halliday and Hasan): they refer back to
# what the window names rather than state anything of their own ("the individual joined" for "you
# joined", "in all but a few areas", "amputate part of her leg"). A window need not hold one.
GENERAL_NOUNS = frozenset(
    stem(w)
    for w in (
        *("thing", "stuff", "matter", "part", "aspect", "area", "way", "kind", "type", "sort", "form"),
        *("individual", "person", "people", "company", "process", "item", "event", "place", "fact"),
        *("idea", "case"),
    )
)
VARIANT_LETTERS = 5  # a derived form extends the word's stem, both this long: "moist" / "moisture"
MAX_STAND_INS = 2  # at most this many words of a claim held only as a general noun or derived form
# Words that link a claim to the answer around it or quantify loosely, and state nothing a window
# must hold (see :func:`light`): a connective opening the claim ("Meanwhile, grill the bratwurst",
# "Additionally, it offers ..."), and "a variety of" / "a range of" before what it lists.
_OPENING = re.compile(
    r"^\W*(?:(?:in addition|in the meantime|on the other hand|as well),?|(?:additionally|alternatively|"
    r"furthermore|moreover|meanwhile|finally|lastly|then|therefore|thus|hence|firstly|secondly|"
    r"thirdly|also)\b,?|next,)",
    re.I,
)
_LOOSE = re.compile(
    r"\b(?:a|an)\s+(?:(?:wide|broad|large|great|diverse)\s+)?(?:variety|range|selection|array|assortment)\s+of\b",
    re.I,
)
# Words about the source, not the world, and words that only weaken: a window need not hold them
# either (see :func:`light`). A citation marker ("(step 4)", "(passage 2)", its figure not a figure
# of the claim: :mod:`auditor.judges.reading._cues`); an attribution to a record's reviews ("according to
# customer reviews", "one customer mentioned that", "a lot for its customers"), whose words must
# still lie in one review (:func:`one_text`); a hedge that weakens what the window states
# ("allegedly", "reportedly", "possibly").
_MARKER = re.compile(
    r"\((?:\s*(?:see\s+)?(?:steps?|passages?|documents?|sources?)\s*#?\s*\d+"
    r"(?:\s*(?:-|\u2013|to|and|&)\s*\d+)?\s*[,;]?)+\s*\)",
    re.I,
)
_ATTRIBUTION = re.compile(
    r"\b(?:according\s+to|based\s+on)\s+(?:the\s+|its\s+|their\s+)?(?:customer\s+|online\s+)?reviews\b|"
    r"\b(?:(?:one|another|some|many|several|most|other)\s+)?(?:customers?|reviewers?|patrons?|diners?|guests?)\s+"
    r"(?:have\s+|has\s+)?(?:also\s+)?"
    r"(?:mention(?:s|ed)?|note[sd]?|say|says|said|state[sd]?|report(?:s|ed)?|describe[sd]?|"
    r"comment(?:s|ed)?|remark(?:s|ed)?|wr(?:ite|ites|ote))\b|"
    r"\b(?:for|to)\s+(?:its\s+|their\s+|the\s+)?customers\b",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:allegedly|reportedly|apparently|possibly|potentially|presumably|supposedly)\b", re.I
)


@lru_cache(maxsize=4096)
def light(text: str) -> frozenset[str]:
    """The claim's stems that only link, quantify loosely, cite or attribute to the source, or
    hedge (:data:`_OPENING`, :data:`_LOOSE`, :data:`_MARKER`, :data:`_ATTRIBUTION`, :data:`_HEDGE`):
    a window need not hold them. A stem the claim also uses elsewhere is not light."""
    found = (
        _OPENING.match(text),
        *(m for p in (_LOOSE, _MARKER, _ATTRIBUTION, _HEDGE) for m in p.finditer(text)),
    )
    spans = [m.span() for m in found if m and m.end() > m.start()]
    if not spans:
        return frozenset()
    light = content_stems(" ".join(text[a:b] for a, b in spans))
    rest = list(text)
    for a, b in spans:
        rest[a:b] = " " * (b - a)
    return frozenset(light - content_stems("".join(rest)))


def stand_ins(text: str, need: frozenset[str], item: Item, stems: frozenset[str] | None = None) -> bool:
    """In prose, the claim's ``need`` missing from ``stems`` (a window's; the item's by default) are
    at most :data:`MAX_STAND_INS` words that state nothing a window must hold: a general noun
    (:data:`GENERAL_NOUNS`), or a derived form of a stem there ("portraying" / "portrayal", "rhythms"
    / "rhythmic": one stem extends the other, both :data:`VARIANT_LETTERS` letters or more). Each is
    written in lower case in the claim: a name's variant is another name ("India" for "Indian"). At
    least :data:`MIN_STEMS` of the claim's stems stay in ``stems`` themselves."""
    if item.is_json:
        return False
    held = item.stems if stems is None else stems
    missing = need - held
    if len(missing) > MAX_STAND_INS or len(need) - len(missing) < MIN_STEMS:
        return False
    if not missing <= _lower_stems(text):
        return False
    return all(m in GENERAL_NOUNS or _derived(m, held) for m in missing)


def _derived(m: str, stems: frozenset[str]) -> bool:
    """Some stem of ``stems`` extends ``m`` or is extended by it (a derived form of one word)."""
    if len(m) < VARIANT_LETTERS:
        return False
    return any(s != m and len(s) >= VARIANT_LETTERS and (s.startswith(m) or m.startswith(s)) for s in stems)


@lru_cache(maxsize=4096)
def _lower_stems(text: str) -> frozenset[str]:
    """The stems of the claim that it writes only in lower case (not a name, not a sentence's start)."""
    seen: dict[str, bool] = {}
    for w in words(text):
        s = stem(w)
        seen[s] = seen.get(s, True) and w.islower()
    return frozenset(s for s, lower in seen.items() if lower)
