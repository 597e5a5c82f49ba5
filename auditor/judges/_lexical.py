"""Lexical cues for the offline judge: tokens, a light stemmer, content words, negation scope.

Pure functions of a string, deterministic and cached where hot, so a claim and its evidence are
reduced to stems the same way and compare as sets ("refunded" and "reimbursement" both give "refund").
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from auditor.judges._vocabulary import NEGATION, STOPWORDS, SYNONYMS

_WORD = re.compile("[A-Za-z][A-Za-z0-9'\u2019]*|\\d+(?:[.,]\\d+)*")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_ESCAPE = re.compile(r"\\[nrtbf\"\\/]")

_SUFFIXES = (
    "ational",
    "ability",
    "ibility",
    "able",
    "ible",
    "ization",
    "fulness",
    "iveness",
    "ments",
    "ement",
    "ingly",
    "ation",
    "ities",
    "ness",
    "ment",
    "ing",
    "ies",
    "ied",
    "ity",
    "ers",
    "ed",
    "es",
    "er",
    "ly",
    "al",
    "s",
    "e",
    "y",
)


def _strip(w: str) -> str:
    """The suffix-stripping part of :func:`stem`, without the synonym list."""
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    return w


# The plural / third person of a listed word reaches the same canonical stem: the list is also
# keyed by the stripped form of each entry + "s" ("offers" strips to "off", "prices" to "pric").
_STEM_SYNONYMS: dict[str, str] = {
    **{_strip(k + "s"): v for k, v in SYNONYMS.items() if len(k) > 3},
    **SYNONYMS,
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deterministic suffix-stripping stem (lemma-lite), mapped through the synonym list."""
    w = word.casefold().replace("\u2019", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'")
    if w in SYNONYMS:
        return SYNONYMS[w]
    if not w.isalpha():
        return w
    w = _strip(w)
    return _STEM_SYNONYMS.get(w, w)


def words(text: str) -> list[str]:
    """Alphabetic and numeric tokens, with camelCase and snake_case keys split."""
    text = _ESCAPE.sub(" ", text).replace("_", " ")
    text = _CAMEL.sub(" ", text)
    return _WORD.findall(text)


def content_stems(text: str) -> set[str]:
    """Stems of the content words (stopwords and pure numbers dropped; numbers are judged apart)."""
    return {
        stem(w) for w in words(text) if w.casefold() not in STOPWORDS and not w[0].isdigit() and len(w) > 1
    }


_COMPOUND = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+|[A-Za-z]*[a-z][A-Z][A-Za-z]*")


def compound_stems(text: str) -> set[str]:
    """Stems of adjacent word pairs written as one word elsewhere: "TakeOut" and "take-out" give
    "takeout", "WiFi" gives "wifi" (evidence side only, so a claim's word count is unchanged)."""
    out: set[str] = set()
    for m in _COMPOUND.finditer(text):
        parts = _CAMEL.sub(" ", m.group().replace("-", " ")).split()
        out.update(stem(a + b) for a, b in itertools.pairwise(parts))
    return out


# a cheap pre-check: a text without any of these cannot carry a negation cue
_ANY_CUE = re.compile(r"no|ne|without|cannot|n't|n\u2019t", re.I)


def negated(text: str) -> bool:
    """Whether the text carries a negation cue ("not", "no", "n't", "non-", "without"...)."""
    tokens = _WORD.findall(text)
    return any(_is_cue(w) and not _is_ordinal_no(w, tokens[i + 1 : i + 2]) for i, w in enumerate(tokens))


def _is_ordinal_no(word: str, following: list[str]) -> bool:
    """ "No. 74", "world no 1": "no" before a figure abbreviates "number", it negates nothing."""
    return word.casefold() == "no" and bool(following) and following[0][0].isdigit()


def _is_cue(word: str) -> bool:
    lowered = word.casefold().replace("\u2019", "'")
    return lowered in NEGATION or lowered.endswith("n't") or lowered == "non"


NEGATION_SCOPE = 5  # a cue negates the next content words within this many tokens ...
NEGATION_WORDS = 2  # ... at most this many of them ("does not have WiFi", "no valet, garage or lot")
_SCOPE_END = frozenset({"and", "but", "while", "whereas", "although", "though", "because", "which", "who"})


def negated_stems(text: str) -> frozenset[str]:
    """Stems of the content words within the scope of a negation cue (a clause boundary ends it)."""
    if not _ANY_CUE.search(text):
        return frozenset()
    tokens = _WORD.findall(_ESCAPE.sub(" ", text).replace("_", " "))
    out: set[str] = set()
    for i, tok in enumerate(tokens):
        if not _is_cue(tok) or _is_ordinal_no(tok, tokens[i + 1 : i + 2]):
            continue
        taken = 0
        for t in tokens[i + 1 : i + 1 + NEGATION_SCOPE]:
            lowered = t.casefold()
            if lowered in _SCOPE_END or taken == NEGATION_WORDS:
                break
            if lowered not in STOPWORDS and not t[0].isdigit():
                out.add(stem(t))
                taken += 1
    return frozenset(out)
