"""Availability states: whether a thing is in stock, as a claim says it and as evidence states it.

"Out of stock", "sold out", "unavailable", "not available", "no longer available" and "none
available" share every content word with a record's ``"stock": 14`` or with "14 units in stock",
so word overlap reads them as support. They are states, and this module reads them as such:

- a **claim's state** (:func:`claim_state`): ``out`` for the phrases above (and "0 units", "no
  units"), ``in`` for "in stock", "available" or "N units in stock" with N above 0;
- an **evidence item's states** (:func:`stated`), each with the exact span that states it and the
  text its subject is read in: a JSON pair whose key speaks of stock or availability (``stock``,
  ``inventory``, ``quantity``, ``in_stock``, ``available``, ``availability``, ``on_hand``) read by
  its value (a count above 0 or ``true`` is ``in``; ``0``, ``false``, ``"none"``, ``"no"``, "out of
  stock" is ``out``; a key that names the negative state, ``out_of_stock`` / ``sold_out``, the other
  way round), its subject the object holding it and the objects around it; and a prose sentence
  with one of the claim phrases, its subject the sentence, which must also hold every content word
of the claim beyond its state words.

A state is *about* the claim when its subject names every entity of the claim (the X300's stock is
not the X200's), or, for a claim without a name, holds the claim's first content word. Two uses,
for every judge alike: a ``supported`` verdict whose quotes state the opposite state and not the
claim's disagrees with it (:func:`quoted_opposite`, read by :mod:`auditor.judges._agree`); and
another admitted item stating the opposite state beside a ``supported`` verdict is the other side of
a conflict (:func:`opposing`, applied in the pipeline). The offline judge also decides a claim that
every item stating a state about it contradicts (:func:`only_opposite`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from auditor.judges.reading import _entities as ent
from auditor.judges.reading._items import pair_text, record_pairs, sentences, split_item
from auditor.judges.reading._lexical import content_stems, words
from auditor.text import normalise

State = Literal["in", "out"]

_OUT = re.compile(
    r"\b(?:out[\s-]+of[\s-]+stock|sold[\s-]+out|unavailable|discontinued"
    r"|(?:not|no\s+longer|n't)\s+(?:currently\s+|presently\s+|yet\s+)?(?:available|in\s+stock|stocked)"
    r"|none\s+(?:is\s+|are\s+)?(?:available|left|in\s+stock|remaining)"
    r"|(?:no|zero|0)\s+(?:units?|pieces?)\s*(?:available|left|remaining|in\s+stock|on\s+hand)?)\b",
    re.I,
)
_IN = re.compile(
    r"\b(?:in\s+stock|available|(\d[\d,]*)\s+(?:units?|pieces?|items?)\s+(?:in\s+stock|available|left|remaining|on\s+hand))\b",
    re.I,
)
# A key speaking of stock or availability, and a key naming the negative state itself
_STOCK_KEY = frozenset({"stock", "inventory", "quantity", "qty", "available", "availability", "onhand"})
_NEGATIVE_KEY = re.compile(r"out_?of_?stock|sold_?out|unavailable|discontinued", re.I)
_OUT_VALUES = frozenset({"none", "no", "0", "false", "n", "out of stock", "sold out", "unavailable"})
_IN_VALUES = frozenset({"yes", "true", "y", "in stock", "available", "limited", "low stock"})
_OPPOSITE: dict[State, State] = {"in": "out", "out": "in"}
_SAID: dict[State, str] = {"in": "in stock", "out": "out of stock"}


@dataclass(frozen=True)
class Stated:
    """One state an evidence item states: the state, the exact span stating it, its subject's text."""

    state: State
    quote: str
    subject: str  # normalised text the claim's entities are looked for in
    sentence: bool = False  # stated in a prose sentence (not a record's pair)


def said(state: State) -> str:
    """The state in words ("out of stock")."""
    return _SAID[state]


@lru_cache(maxsize=4096)
def claim_state(claim: str) -> State | None:
    """The availability state a claim asserts, or None when it asserts none."""
    if _OUT.search(claim):
        return "out"
    m = _IN.search(claim)
    if m is None:
        return None
    if m.group(1) is not None and int(m.group(1).replace(",", "")) == 0:
        return "out"
    return "in"


def _text_state(text: str) -> State | None:
    if _OUT.search(text):
        return "out"
    return "in" if _IN.search(text) else None


@lru_cache(maxsize=1024)
def stated(text: str) -> tuple[Stated, ...]:
    """The states an evidence text states (module docstring): JSON pairs, else prose sentences."""
    body, record, prose = split_item(text)
    out: list[Stated] = []
    for key, value, subject in record_pairs(record):
        state = _pair_state(key, value)
        if state is not None and (written := pair_text(body, key, value)) is not None:
            out.append(Stated(state, written, subject))
    for sentence in sentences(prose):
        state = _text_state(sentence)
        if state is not None:
            out.append(Stated(state, sentence.strip(), normalise(sentence), sentence=True))
    return tuple(out)


def _pair_state(key: str, value: Any) -> State | None:
    key_words = [w.casefold() for w in words(key.replace("_", " "))]
    negative_key = _NEGATIVE_KEY.search(key) is not None
    if not negative_key and not (_STOCK_KEY & set(key_words) or "on_hand" in key.casefold()):
        return None
    state: State | None
    if isinstance(value, bool):
        state = "in" if value else "out"
    elif isinstance(value, int | float):
        state = "in" if value > 0 else "out"
    elif isinstance(value, str):
        plain = normalise(value)
        state = "out" if plain in _OUT_VALUES else "in" if plain in _IN_VALUES else _text_state(value)
        if state is None and plain.replace(",", "").isdigit():
            state = "in" if int(plain.replace(",", "")) > 0 else "out"
    else:
        state = None
    if state is not None and negative_key and isinstance(value, bool):
        state = _OPPOSITE[state]
    return state


def about(claim: str, found: Stated) -> bool:
    """Whether a stated state speaks of the claim's subject (module docstring); a sentence must
    also hold every content word of the claim beyond its state words ("Wi-Fi is not available in
    rooms" says nothing of "Wi-Fi is available in the lobby")."""
    names = ent.entities(claim)
    if found.sentence and not _rest(claim) <= content_stems(found.subject):
        return False
    if names:
        return all(ent.present(e, found.subject) for e in names)
    first = next((s for w in words(claim) if (s := content_stems(w))), None)
    return first is not None and bool(first & content_stems(found.subject))


_STATE_WORDS = content_stems(
    "stock stocked available availability unavailable sold out units unit pieces items left remaining "
    "none longer discontinued inventory currently presently hand zero"
)


@lru_cache(maxsize=4096)
def _rest(claim: str) -> frozenset[str]:
    """The claim's content stems beyond its state words and figures."""
    return frozenset(s for s in content_stems(claim) if s not in _STATE_WORDS and not s[:1].isdigit())


def states_about(claim: str, text: str) -> list[Stated]:
    """The states ``text`` states about the claim's subject."""
    return [s for s in stated(text) if about(claim, s)]


def quoted_opposite(claim: str, quotes: Sequence[tuple[str, str, str]]) -> Stated | None:
    """The state, stated within the quotes of a ``supported`` verdict about the claim, that is the
    opposite of the claim's, when the quotes state the claim's own state nowhere; else None.
    ``quotes``: verified ``(quote, evidence_id, item text)`` triples."""
    state = claim_state(claim)
    if state is None:
        return None
    found: list[Stated] = []
    for quote, _, text in quotes:
        needle = normalise(quote)
        found += [s for s in states_about(claim, text) if normalise(s.quote) in needle]
    if any(s.state == state for s in found):
        return None
    return next((s for s in found if s.state != state), None)


def opposing(claim: str, texts: Sequence[tuple[str, str]]) -> list[tuple[str, Stated]]:
    """``(evidence_id, stated)`` of the items among ``texts`` (``(evidence_id, text)``) that state
    the opposite of the claim's state about its subject, and never the claim's own."""
    state = claim_state(claim)
    if state is None:
        return []
    out = []
    for evidence_id, text in texts:
        found = states_about(claim, text)
        if found and all(s.state != state for s in found):
            out.append((evidence_id, found[0]))
    return out


def only_opposite(claim: str, texts: Sequence[tuple[str, str]]) -> list[tuple[str, Stated]]:
    """:func:`opposing` when no item of ``texts`` states the claim's own state about its subject
    (every item that speaks of it says otherwise), else an empty list."""
    state = claim_state(claim)
    if state is None:
        return []
    if any(s.state == state for _, text in texts for s in states_about(claim, text)):
        return []
    return opposing(claim, texts)
