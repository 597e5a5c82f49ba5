"""Attribute values: the price, the date of an event or the status of one named thing.

"The X200 costs $49" and "X200 price: $59.00" share every word a lexical reading weighs; so do
"Order 1042 ships on March 24" and "Order 1042 ships 2026-03-28", and "Order 1042 is paid" beside
a record ``{"order_id": 1042, "status": "refunded"}``. Each pair gives two values of one attribute
of one thing, and this module reads them as such, conservatively (a value it cannot place is never
read):

- a **claim's value** (:func:`claimed`), one attribute at most: the *date* of an event (one full
  date, month and day, beside an event word: ships, delivered, arrives, due, expires, renews,
  starts, launches, released), else the *price* (one amount beside "costs", "price", "priced",
  "sells for", and no word of another amount: shipping, fee, tax, discount, deposit, total, per,
  monthly ...), else the *status* ("is", "was", "status:" before open / closed, active / inactive /
  cancelled / expired / suspended, paid / unpaid / refunded, shipped / not shipped, approved /
  rejected / pending; "not X" is its own value, at odds with X only). The claim must name its
  thing: an entity (``X200``, "Acme") or an id ("Order 1042"); a claim naming nothing is not read;
- an **item's values** (:func:`valued`): in a JSON record, a pair whose key is the attribute
  (``price`` / ``unit_price`` / ``list_price``; a key holding an event word and a date,
  ``ship_date``; ``status`` / ``state``, or a boolean ``paid`` / ``is_active`` ...), its subject
  the object holding it and the objects around it; in prose, a sentence stating one value as a
  claim states it, its subject the sentence.

A value is *about* the claim when its subject holds every name of the claim, and, for a sentence,
every content word of the claim beyond the attribute's own words (as :mod:`._states` reads a
state): "Order 1042 ships on March 24" is not the date on which its invoice is due. :func:`differing`
lists the items stating another value about the claim and never its own; the pipeline makes them
the other side of a conflict when a ``supported`` verdict rests on an item stating the claim's
value (:func:`states_claimed`), for every judge alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from auditor.judges.reading import _entities as ent
from auditor.judges.reading import _numbers as num
from auditor.judges.reading._items import pair_text, record_pairs, sentences, split_item
from auditor.judges.reading._lexical import compound_stems, content_stems, stem, words
from auditor.text import normalise

Value = num.Quantity | str
Relation = Literal["same", "other"]

# Statuses by attribute: a value of one group says nothing of another ("paid" of "shipped").
_GROUPS = {
    "open": "open closed",
    "active": "active inactive cancelled canceled expired suspended",
    "paid": "paid unpaid refunded",
    "shipped": "shipped unshipped",
    "approved": "approved rejected denied pending",
}
_CANONICAL = {"canceled": "cancelled", "denied": "rejected", "unshipped": "not shipped", "unpaid": "not paid"}
_GROUP_OF = {w: g for g, listed in _GROUPS.items() for w in listed.split()}
_STATUS_WORD = "|".join(sorted(_GROUP_OF, key=len, reverse=True))
_STATUS = re.compile(
    r"\b(?:is|was|are|were|has\s+been|have\s+been|had\s+been|remains|remained|became|status(?:\s+is)?\s*:?)"
    rf"\s+(?:now\s+|currently\s+|still\s+|already\s+)?(not\s+)?(?:yet\s+)?({_STATUS_WORD})\b",
    re.I,
)
_STATUS_KEY = frozenset({"status", "state"})
_EVENT_STEMS = frozenset(
    stem(w)
    for w in ("ships", "delivered", "arrives", "due", "expires", "renews", "starts", "launches", "released")
)
_PRICE_CUE = re.compile(
    r"\b(?:costs?|costing|prices?|priced|sells?\s+for|sold\s+for|retails?\s+(?:for|at))\b", re.I
)
# words of another amount than the thing's price: its shipping, a fee, a total, a rate per period
_OTHER_AMOUNT = re.compile(
    r"\b(?:shipping|delivery|postage|fees?|tax(?:es)?|vat|discounts?|deposits?|refunds?|totals?|subtotal"
    r"|surcharges?|credits?|balance|per|each|monthly|annual(?:ly)?|yearly|weekly|month|year|week|day"
    r"|plan|subscription|installments?|shares?|down)\b|/",
    re.I,
)
_PRICE_KEYS = frozenset({"price", "unitprice", "listprice", "retailprice", "saleprice"})
_ID = re.compile(r"(?<![\w$€£.,:/-])#?(\d[\w-]*|[A-Za-z]+\d[\w-]*)")
# the attribute's own words: left out of the words a sentence about the claim must hold
_ATTRIBUTE_WORDS = frozenset(
    content_stems(
        "cost costs price prices priced sell sells sold retail retails usd dollars status state now currently "
        "still already yet " + " ".join(_GROUP_OF) + " " + " ".join(_CANONICAL.values())
    )
)


@dataclass(frozen=True)
class Claimed:
    """A claim's value: its attribute (``price``, ``date <events>``, ``status <group>``), the
    value, the names its thing is known by, and its content stems beyond the attribute's words."""

    attribute: str
    value: Value
    names: tuple[str, ...]
    rest: frozenset[str]


@dataclass(frozen=True)
class Valued:
    """One value an item states: attribute, value, the exact span stating it, its subject's text."""

    attribute: str
    value: Value
    quote: str
    subject: str  # normalised text the claim's names are looked for in
    sentence: bool = False


def _status(m: re.Match[str]) -> tuple[str, str]:
    word = m.group(2).casefold()
    value = _CANONICAL.get(word, word)
    if m.group(1):
        value = value[4:] if value.startswith("not ") else f"not {value}"
    return f"status {_GROUP_OF[word]}", value


def _read(text: str) -> tuple[str, Value, list[num.Quantity]] | None:
    """The one attribute value a claim or a sentence states (module docstring), with its figures."""
    quantities = num.extract(text)
    dates = [q for q in quantities if q.kind == "date"]
    events = sorted({s for w in words(text) if (s := stem(w)) in _EVENT_STEMS})
    if len(dates) == 1 and dates[0].month is not None and dates[0].day is not None and events:
        return f"date {' '.join(events)}", dates[0], quantities
    money = [q for q in quantities if q.kind == "money"]
    if len(money) == 1 and _PRICE_CUE.search(text) and not _OTHER_AMOUNT.search(text):
        return "price", money[0], quantities
    found = {_status(m) for m in _STATUS.finditer(text)}
    if len(found) == 1:
        attribute, value = found.pop()
        return attribute, value, quantities
    return None


@lru_cache(maxsize=4096)
def claimed(claim: str) -> Claimed | None:
    """The attribute value a claim states about a thing it names, or None (module docstring)."""
    read = _read(claim)
    if read is None:
        return None
    attribute, value, quantities = read
    bare = claim
    for q in quantities:
        if q.kind in ("date", "money", "clock", "percent") and q.text:
            bare = bare.replace(q.text, " ")
    names = tuple(dict.fromkeys([*ent.entities(claim), *(m.group(1) for m in _ID.finditer(bare))]))
    if not names:
        return None
    return Claimed(attribute, value, names, frozenset(content_stems(bare) - _ATTRIBUTE_WORDS))


@lru_cache(maxsize=1024)
def valued(text: str) -> tuple[Valued, ...]:
    """The values an item states: its JSON pairs, and its prose sentences (module docstring)."""
    body, record, prose = split_item(text)
    out: list[Valued] = []
    for key, value, subject in record_pairs(record):
        pair = _pair_value(key, value)
        if pair is not None and (written := pair_text(body, key, value)) is not None:
            out.append(Valued(pair[0], pair[1], written, subject))
    for sentence in sentences(prose):
        read = _read(sentence)
        if read is not None:
            out.append(Valued(read[0], read[1], sentence.strip(), normalise(sentence), sentence=True))
    return tuple(out)


def _pair_value(key: str, value: Any) -> tuple[str, Value] | None:
    key_words = [w.casefold() for w in words(key.replace("_", " "))]
    flat = "".join(key_words)
    if isinstance(value, bool):
        word = flat.removeprefix("is")
        if word not in _GROUP_OF:
            return None
        canonical = _CANONICAL.get(word, word)
        return f"status {_GROUP_OF[word]}", canonical if value else _negated(canonical)
    if isinstance(value, int | float) and flat in _PRICE_KEYS:
        return "price", num.Quantity("money", float(value), float(value))
    if not isinstance(value, str):
        return None
    if flat in _PRICE_KEYS:
        money = num.extract(value, money_hint=True)
        return ("price", money[0]) if len(money) == 1 and money[0].kind == "money" else None
    events = sorted({s for w in key_words if (s := stem(w)) in _EVENT_STEMS})
    if events:
        dates = [q for q in num.extract(value) if q.kind == "date"]
        if len(dates) == 1 and dates[0].month is not None and dates[0].day is not None:
            return f"date {' '.join(events)}", dates[0]
        return None
    word = value.strip().casefold().replace("_", " ")
    if _STATUS_KEY & set(key_words) and word in _GROUP_OF:
        return f"status {_GROUP_OF[word]}", _CANONICAL.get(word, word)
    return None


def _negated(value: str) -> str:
    return value[4:] if value.startswith("not ") else f"not {value}"


def _relation(claim: Claimed, found: Valued) -> Relation | None:
    """Whether a value about the claim's thing is the claim's own, another one, or neither surely."""
    a, b = claim.value, found.value
    if isinstance(a, str) or isinstance(b, str):
        if not (isinstance(a, str) and isinstance(b, str)):
            return None
        if a == b:
            return "same"
        # "not paid" is at odds with "paid" only ("refunded" is not paid either)
        if (a.startswith("not ") and a[4:] != b) or (b.startswith("not ") and b[4:] != a):
            return None
        return "other"
    if num.matches(a, b):
        return "same"
    if a.kind == "money" and a.unit and b.unit and a.unit != b.unit:
        return None  # another currency: perhaps another market's price
    return "other" if num.comparable(a, b) else None


def _about(claim: Claimed, found: Valued, *, strict: bool = True) -> bool:
    if found.attribute != claim.attribute:
        return False
    if not all(ent.present(n, found.subject) or _has(n, found.subject) for n in claim.names):
        return False
    if found.sentence and strict:
        return claim.rest <= content_stems(found.subject) | compound_stems(found.subject)
    return True


def _has(name: str, subject: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(normalise(name))}(?![\w-])", subject) is not None


def states_claimed(claim: str, text: str) -> bool:
    """Whether ``text`` states the claim's own value of its attribute about its thing."""
    c = claimed(claim)
    return c is not None and any(_about(c, v) and _relation(c, v) == "same" for v in valued(text))


def differing(claim: str, texts: Sequence[tuple[str, str]]) -> list[tuple[str, Valued]]:
    """``(evidence_id, valued)`` of the items among ``texts`` (``(evidence_id, text)``) that state
    another value of the claim's attribute about its thing, and never the claim's own."""
    c = claimed(claim)
    if c is None:
        return []
    out = []
    for evidence_id, text in texts:
        found = [(v, r) for v in valued(text) if _about(c, v) and (r := _relation(c, v)) is not None]
        if found and all(r == "other" for _, r in found):
            out.append((evidence_id, found[0][0]))
    return out


def quoted_other(claim: str, quotes: Sequence[tuple[str, str, str]]) -> Valued | None:
    """The value, stated within the quotes of a ``contradicted`` side about the claim's thing, that
    is another value of the claim's attribute, when the quotes state the claim's own nowhere; else
    None. ``quotes``: verified ``(quote, evidence_id, item text)`` triples."""
    found = quoted_value(claim, quotes)
    return found[0] if found is not None and found[1] else None


def quoted_value(claim: str, quotes: Sequence[tuple[str, str, str]]) -> tuple[Valued, bool] | None:
    """Another value of the claim's attribute about its thing stated within the quotes (a prose
    quote read as a text of its own too: part of a sentence), when they state the claim's own
    nowhere, and whether surely about it: True when :func:`quoted_other` holds; False when the
    sentence names the claim's thing but lacks other words of the claim ("Order 1042 was refunded"
    for "Order 1042 for the blender is paid"). None when the quotes state no other value."""
    c = claimed(claim)
    if c is None:
        return None
    texts = [*quotes, *((q, e, q) for q, e, text in quotes if text.lstrip()[:1] not in ("{", "["))]
    found: list[tuple[Valued, Relation, bool]] = []
    for quote, _, text in texts:
        needle = normalise(quote)
        found += [
            (v, r, _about(c, v))
            for v in valued(text)
            if normalise(v.quote) in needle
            and _about(c, v, strict=False)
            and (r := _relation(c, v)) is not None
        ]
    if any(r == "same" for _, r, _ in found):
        return None
    found.sort(key=lambda f: not f[2])  # a value surely about the claim first
    return (found[0][0], found[0][2]) if found else None


def spoken(value: Value) -> str:
    """A value as the text states it ("$59", "March 28", "refunded")."""
    return value if isinstance(value, str) else value.text
