"""Lexical cues for the offline judge: tokens, stems, content words, negation scope.

Pure functions of a string, deterministic and cached where hot, so a claim and its evidence are
reduced to stems the same way and compare as sets ("refunded" and "reimbursement" both give "refund").
A stem is the word's English lemma (``simplemma``, MIT, its dictionary shipped in the wheel: "bought"
is "buy", "children" "child", "ran" "run") with a light suffix stripper on top, so derived forms meet
too ("approval", "approved" and "approves" all give "approv"), then the synonym list.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

import simplemma

from auditor.judges.reading._vocabulary import NEGATION, STOPWORDS, SYNONYMS

_WORD = re.compile("[A-Za-z][A-Za-z0-9'\u2019]*|\\d+(?:[.,]\\d+)*")
# "2nd" is the word "second" (a rank, read by words, never a figure: see ``_numbers``), unless it
# is a day of a month ("March 2nd", "2nd of March"), which the date reader reads
_ORDINAL_WORDS = (
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
)
_ORDINAL = re.compile(
    r"(?<![\w.,])(10th|1st|2nd|3rd|[4-9]th)(?![\w])(?!\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))",
    re.I,
)
_MONTH_BEFORE = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+$", re.I)


def spelled(text: str) -> str:
    """``text`` with the ranks 1st to 10th written as words ("finished 2nd" reads "finished second")."""
    if not any(c.isdigit() for c in text):
        return text
    return _ORDINAL.sub(
        lambda m: (
            m.group() if _MONTH_BEFORE.search(text, 0, m.start()) else _ORDINAL_WORDS[int(m.group()[:-2]) - 1]
        ),
        text,
    )


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
_CANONICAL = frozenset(SYNONYMS.values())
_STEM_SYNONYMS: dict[str, str] = {
    # ... but never over a canonical stem: "buyers" strips to "buy", which is the verb's own stem
    **{p: v for k, v in SYNONYMS.items() if len(k) > 3 and (p := _strip(k + "s")) not in _CANONICAL},
    **SYNONYMS,
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deterministic stem: the lemma, suffix-stripped, mapped through the synonym list."""
    w = word.casefold().replace("\u2019", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'")
    if w in SYNONYMS:
        return SYNONYMS[w]
    if not w.isalpha():
        return w
    lemma = simplemma.lemmatize(w, lang="en").casefold()
    if lemma in SYNONYMS:
        return SYNONYMS[lemma]
    w = _strip(lemma if lemma.isalpha() else w)
    return _STEM_SYNONYMS.get(w, w)


def words(text: str) -> list[str]:
    """Alphabetic and numeric tokens, with camelCase and snake_case keys split."""
    text = _ESCAPE.sub(" ", spelled(text)).replace("_", " ")
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


@lru_cache(maxsize=4096)
def stated(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """What a sentence states, read once: its content and compound stems, and the stems under
    negation. The offline judge reads its windows with it and the quote check the judge's quotes,
    which are those windows: a verdict's quotes are not read a second time."""
    return (
        frozenset(content_stems(text) | compound_stems(text)),
        negated_stems(text) | negated_stems(" ".join(words(text))),
    )


# a cheap pre-check: a text without any of these cannot carry a negation cue
_ANY_CUE = re.compile(r"no|ne|without|cannot|n't|n\u2019t", re.I)


def negated(text: str) -> bool:
    """Whether the text carries a negation cue ("not", "no", "n't", "non-", "without"...)."""
    tokens = _WORD.findall(text)
    return any(_is_cue(w) and not _negates_nothing(w, tokens[i + 1 : i + 2]) for i, w in enumerate(tokens))


_ADDITIVE = frozenset({"only", "just", "merely", "simply"})


def _negates_nothing(word: str, following: list[str]) -> bool:
    """A cue that negates nothing: "No. 74" / "world no 1" ("no" before a figure abbreviates
    "number"), and "not only ... but" / "not just" (adds, never denies: "not only the quality of
    the action but the political undertones" states both)."""
    if not following:
        return False
    lowered = word.casefold()
    if lowered == "no" and following[0][0].isdigit():
        return True
    return lowered == "not" and following[0].casefold() in _ADDITIVE


def _is_cue(word: str) -> bool:
    lowered = word.casefold().replace("\u2019", "'")
    return lowered in NEGATION or lowered.endswith("n't") or lowered == "non"


NEGATION_SCOPE = 5  # a cue negates the next content words within this many tokens ...
NEGATION_WORDS = 2  # ... at most this many of them ("does not have WiFi", "no valet, garage or lot")
_SCOPE_END = frozenset(
    {"and", "but", "while", "whereas", "although", "though", "because", "which", "who", "than", "instead"}
    | {"rather", "yet", "so", "unless", "if", "when", "where", "whose", "whom"}
)
# a negation's clause also ends at punctuation: "not inside the club, as initially reported"
_SCOPE_TOKEN = re.compile(_WORD.pattern + "|[,;:()\u2013\u2014]")


def _clause_break(token: str, following: list[str]) -> bool:
    """Punctuation that ends a clause: always ";", ":", brackets, dashes; a comma unless a list goes
    on after it ("no valet, garage or lot" negates "garage" too; "not inside the club, as
    reported" stops at the comma)."""
    if token[0].isalnum():
        return False
    if token != ",":
        return True
    return not following or following[0].casefold() in STOPWORDS or following[0] in ",;:"


def negated_stems(text: str) -> frozenset[str]:
    """Stems of the content words within the scope of a negation cue (a clause boundary ends it:
    a conjunction, a relative word, or punctuation)."""
    if not _ANY_CUE.search(text):
        return frozenset()
    tokens = _SCOPE_TOKEN.findall(_ESCAPE.sub(" ", spelled(text)).replace("_", " "))
    out: set[str] = set()
    for i, tok in enumerate(tokens):
        if not _is_cue(tok) or _negates_nothing(tok, tokens[i + 1 : i + 2]):
            continue
        taken = 0
        scope = tokens[i + 1 : i + 2 + NEGATION_SCOPE]
        for k, t in enumerate(scope[:NEGATION_SCOPE]):
            lowered = t.casefold()
            if lowered in _SCOPE_END or taken == NEGATION_WORDS or _clause_break(t, scope[k + 1 : k + 2]):
                break
            if lowered not in STOPWORDS and t[0].isalpha():
                out.add(stem(t))
                taken += 1
    return frozenset(out)


@lru_cache(maxsize=4096)
def denied_and_affirmed(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stems ``text`` denies and the stems it affirms, occurrence by occurrence.

    The scope of :func:`negated_stems` read occurrence by occurrence: a word also written outside
    any negation is affirmed, not denied ("with a towel ..., not rubbing it with the towel"). The agreement check of a
    quote with its claim (:mod:`auditor.judges.verify._agree`) compares these, so that a claim of two
    clauses is not read as denying its main clause's words.
    """
    # split as :func:`words` splits (camelCase, snake_case), so the stems are content_stems' own
    tokens = _SCOPE_TOKEN.findall(_CAMEL.sub(" ", _ESCAPE.sub(" ", spelled(text)).replace("_", " ")))
    denied_at: set[int] = set()
    for i, tok in enumerate(tokens):
        if not _is_cue(tok) or _negates_nothing(tok, tokens[i + 1 : i + 2]):
            continue
        scope = tokens[i + 1 : i + 2 + NEGATION_SCOPE]
        taken = 0
        for k, t in enumerate(scope[:NEGATION_SCOPE]):
            if (
                t.casefold() in _SCOPE_END
                or taken == NEGATION_WORDS
                or _clause_break(t, scope[k + 1 : k + 2])
            ):
                break
            if t.casefold() not in STOPWORDS and t[0].isalpha() and not _is_cue(t):
                denied_at.add(i + 1 + k)
                taken += 1
    denied: set[str] = set()
    affirmed: set[str] = set()
    for i, tok in enumerate(tokens):
        if not tok[0].isalpha() or tok.casefold() in STOPWORDS or len(tok) < 2 or _is_cue(tok):
            continue
        (denied if i in denied_at else affirmed).add(stem(tok))
    return frozenset(denied - affirmed), frozenset(affirmed)
