"""Named entities for the offline judge: proper nouns, acronyms, ids and product codes.

A claim's entities must appear somewhere in the evidence it is judged against. The extraction is
deliberately simple (capitalised tokens not opening a sentence, all-caps acronyms, tokens mixing
letters and digits such as ``X200`` or ``RF-311``); it errs towards finding fewer entities, since a
spurious entity turns a supported claim into an absent one.
"""

from __future__ import annotations

import re

from auditor.judges.reading._vocabulary import ALIASES as _ALIASES
from auditor.judges.reading._vocabulary import STOPWORDS

_TOKEN = re.compile("[A-Za-z0-9][A-Za-z0-9'\u2019&.\\-]*[A-Za-z0-9]|[A-Za-z0-9]")
_CODE = re.compile(r"^(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9\-]+$")
_COMMON_CAPS = frozenset(
    """i monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december yes no ok mr mrs ms dr st am pm passage passages document documents source sources article json""".split()  # noqa: SIM905 (a word list reads better as prose)
) | frozenset(
    # titles and suffixes of names: "Chris Eubank Sr." is "Chris Eubank" to a reader of the source
    "sr jr det sgt gov sen rep gen prof capt lt col insp supt rev hon mx".split()  # noqa: SIM905
)


_OPENERS = frozenset('.!?:;-\u2013\u2014("\u201c')
_MEASURE = re.compile(r"^\d+(\.\d+)?[A-Za-z]{1,2}$")  # "5km", "2.5GB": a figure, not a code
# A word in capitals this long is shouted, not an acronym ("CORONAVIRUS", "VITAMIN"): acronyms
# are short ("NASA", "UNESCO", "COVID").
ACRONYM_LETTERS = 6
_WORD = re.compile(r"[A-Za-z]+")


def headline_cased(text: str) -> bool:
    """Whether ``text`` capitalises every word regardless of what it is (a title: "High Blood
    Pressure Doubles Coronavirus Death Risk", "Coronavirus can Be Crushed By Warmer Weather"):
    at least three words of four letters or more after the first, every one of them capitalised.
    Capitals there say nothing of names; a sentence naming people ("Eric Clapton sings at the Royal
    Albert Hall") has lower-case words of that length."""
    long = [w for w in _WORD.findall(text)[1:] if len(w) >= 4]
    return len(long) >= 3 and all(w[0].isupper() for w in long)


def opens_sentence(text: str, start: int) -> bool:
    """Whether ``text[start:]`` opens a sentence: only whitespace, or an opener ("." "!" "?" ":"
    ";" a dash, a bracket, a quote) and whitespace, before it. Read backwards from ``start``: a
    regex over the text before every token was quadratic in a long text."""
    before = start - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    return before < 0 or text[before] in _OPENERS


def entities(text: str) -> list[str]:
    """Entity tokens of a claim, in order, without duplicates (possessives stripped).

    In a headline-cased text (:func:`headline_cased`) a capitalised word is no name: only codes and
    acronyms count there; nor is a word in capitals longer than :data:`ACRONYM_LETTERS` (shouted).
    """
    found: list[str] = []
    headline = headline_cased(text)
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok.endswith(("'s", "\u2019s")):
            tok = tok[:-2]
        tok = tok.rstrip(".")
        sentence_start = opens_sentence(text, m.start())
        lowered = tok.casefold()
        is_code = bool(_CODE.match(tok)) and any(c.isupper() for c in tok) and not _MEASURE.match(tok)
        is_acronym = ACRONYM_LETTERS >= len(tok) >= 2 and tok.isupper() and tok.isalpha()
        shouted = tok.isupper() and tok.isalpha() and len(tok) > ACRONYM_LETTERS
        is_proper = (
            tok[:1].isupper()
            and not sentence_start
            and not headline
            and not shouted
            and lowered not in STOPWORDS
        )
        if (is_code or is_acronym or is_proper) and lowered not in _COMMON_CAPS and tok not in found:
            found.append(tok)
    return found


def present(entity: str, normalised_text: str) -> bool:
    """Whether the entity occurs in already-normalised evidence text (a light plural/possessive match).

    A US state is also present as its postal code standing alone ("California" in ``"state": "CA"``),
    and "USA" / "UK" as the country's name.
    """
    e = entity.casefold()
    if e in normalised_text:
        return True
    if any(
        re.search(rf"(?<![\w.]){re.escape(alias)}(?![\w.])", normalised_text) for alias in _ALIASES.get(e, ())
    ):
        return True
    if len(e) > 5 and e[:-2] in normalised_text:  # "Americans" / "American", "Chinese" / "China" no
        return True
    if "-" in e and (e.replace("-", " ") in normalised_text or e.replace("-", "") in normalised_text):
        return True
    # a hyphenated name is present when each of its capitalised parts is ("Texas-Mexico border"
    # against "the border between Texas and Mexico", "American-style" against "American (New)")
    names = [p for p in entity.split("-") if p[:1].isupper() and len(p) > 1]
    return "-" in entity and bool(names) and all(present(p, normalised_text) for p in names)
