"""A claim's cues: the content stems, figures and entities every check of the claim compares.

One reading of the claim shared by the offline judge's rules (:mod:`auditor.judges.offline._rules`) and by
the check that a verdict's quotes carry the claim (:mod:`auditor.judges.verify._carry`), so the two cannot
disagree about what the claim states. It imports nothing that knows about verdicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auditor.judges.reading import _entities as ent
from auditor.judges.reading import _numbers as num
from auditor.judges.reading._lexical import content_stems, negated_stems, stem, words
from auditor.judges.reading._vocabulary import STOPWORDS
from auditor.judges.reading._windows import MONEY_KEYS

_SOURCES = r"(?:reports|documents|sources|articles|studies|papers|pages|items|results|tools|passages|reviews)"
# Aggregation over sources only: "both reports", "all three documents", "two sources", "both of them
# say", "both X and Y agree". Not any "both": "both indoor and outdoor seating" is one fact.
AGGREGATE = re.compile(
    rf"\b(both (?:the |these |of the |of these )?{_SOURCES}|both of them|"
    r"both\b[^.;]{0,80}?\b(?:agree|say|confirm|state|report|mention|note)s?\b|"
    rf"all (?:of )?(?:the |these )?(?:(?:two|three|four|five|\d+) )?{_SOURCES}|each of the {_SOURCES}|"
    rf"(?:two|three|four|five|\d+|several|multiple) {_SOURCES})\b",
    re.I,
)
_AGGREGATE_WORDS = content_stems(
    "both all each two three four reports documents sources articles studies papers "
    "pages items results agree say confirm show state"
)


@dataclass(frozen=True)
class ClaimCues:
    stems: frozenset[str]
    quantities: tuple[num.Quantity, ...]
    entities: tuple[str, ...]
    negated_stems: frozenset[str]
    aggregated: bool
    money_words: frozenset[str]  # "refund", "paid"...: covered by a window stating the claim's amount
    money: tuple[num.Quantity, ...]
    id_stems: frozenset[str] = frozenset()  # the noun naming a figure as an id: "order" of "Order 1042"
    ids: tuple[str, ...] = ()  # the figures it names so: "1042"


# Figures that frame rather than state: "out of 5" (a rating's scale), "24/7" and "seven days a
# week" (always open: a record lists the days), "in 200 words" (the answer's own length).
_SCALE_BEFORE = re.compile(r"out of\s*$", re.I)
_ROUND_THE_CLOCK = re.compile(r"24\s?/\s?$")
_WEEK_AFTER = re.compile(r"\s*(?:a|per|each|every)\s+week\b", re.I)


def _framing(q: num.Quantity, before: str, after: str) -> bool:
    text = q.text.casefold()
    if _SCALE_BEFORE.search(before) or _ROUND_THE_CLOCK.search(before) or after.startswith(("/7", "/ 7")):
        return True
    if text in ("seven days", "7 days") and _WEEK_AFTER.match(after):
        return True
    return q.kind == "measure" and q.unit == "word"


_REFERENCE = re.compile(r"\b(?:passages?|documents?|sources?|docs?|references?|refs?|steps?)\s*#?\s*$", re.I)


def _checked(q: num.Quantity, text: str) -> bool:
    """Whether a quantity of the claim is a figure to check.

    Not "(Passage 2)" or "(step 4)", which cite a source or a numbered step of it, nor the opening
    "One reviewer ..." / "One customer ...", which introduces an individual rather than counting
    (an opening "One year ..." still counts).
    """
    at = max(text.find(q.text), 0)
    before, after = text[:at], text[at + len(q.text) :]
    if q.kind == "number" and _REFERENCE.search(before):
        return False
    if _framing(q, before, after):
        return False
    return not (
        q.kind == "measure"
        and q.raw == 1
        and q.text.casefold().startswith("one ")
        and not before.strip()
        and q.unit not in {"time", "months", "mass", "length", "volume", "power"}
    )


def claim_cues(text: str) -> ClaimCues:
    """The claim's cues: content stems (figures and aggregation words left out), figures, entities."""
    quantities = tuple(q for q in num.extract(text) if _checked(q, text))
    words_only = text
    for q in quantities:
        words_only = words_only.replace(q.text, " ")
    aggregated = bool(AGGREGATE.search(text))
    stems = content_stems(words_only)
    if aggregated:
        stems -= _AGGREGATE_WORDS
    money = tuple(q for q in quantities if q.kind == "money")
    named = [
        (stem(m.group(1)), q.text)
        for q in quantities
        if q.kind == "number"
        and (m := _ID_BEFORE.search(text, 0, max(text.find(q.text), 0))) is not None
        and m.group(1).casefold() not in STOPWORDS
    ]
    return ClaimCues(
        frozenset(stems),
        quantities,
        tuple(ent.entities(words_only)),
        negated_stems(text) | negated_stems(" ".join(words(text))),  # "WiFi" and its parts "Wi Fi"
        aggregated,
        frozenset(stems & MONEY_KEYS) if money else frozenset(),
        money,
        frozenset(noun for noun, _ in named),
        tuple(figure for _, figure in named),
    )


_ID_BEFORE = re.compile(r"\b([A-Za-z]{2,})\s+#?\s*$")
