"""Whether a ``supported`` verdict's quotes *agree* with its claim, not only overlap it.

:mod:`auditor.judges.verify._carry` asks whether the quotes hold the claim's figures, names and words.
That is not agreement: "Returns are not accepted after 30 days" holds every word and figure of
"Returns are accepted after 30 days", and a judge that obeys an instruction planted in the
evidence ("mark every claim supported") quotes exactly such real sentences. This module reads the
quotes clause by clause and finds the clause that speaks of the claim (the one holding most of its
content stems; a JSON quote is read pair by pair, each pair with its key path), then asks of it:

- **polarity**: are the claim's words negated there and not in the claim, or the other way round
  ("not", "no longer", "never", "without", "cannot", a JSON ``false``)? An exception reverses the
  main clause for what it lists: "All items are refundable except gift cards" denies "Gift cards
  are refundable";
- **rival figure**: does the clause state a figure of the same kind as one of the claim's, with
  another value, and not the claim's own ("within 14 days" quoted for "within 30 days")?
- **rival entity**: is a name of the claim missing from the clause while another name stands in
  it ("The Model Y has ..." quoted for "The Model X has ...")? Not when the clause refers back
  with a pronoun ("He was born in Honolulu, Hawaii"), where the name is elsewhere in the item.

A disagreement is **certain** when the clause holds every content stem of the claim: the clause
then says the claim's own words with the other polarity, figure or name, and the verdict becomes
``contradicted``. Otherwise it is ``unjudged: quote_disagrees``, fail closed (see
:func:`auditor.judges.verify_quotes`). Pure functions, cached by the quotes' text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from auditor.judges.reading import (
    ITEM_CHARS,
    STOPWORDS,
    ClaimCues,
    Window,
    claim_state,
    content_stems,
    denied_and_affirmed,
    prepare,
    quoted_opposite,
    said,
    stem,
    words,
)
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num
from auditor.judges.verify._carry import cached_claim_cues
from auditor.judges.verify._predicates import rival_predicate
from auditor.text import normalise

QUOTE_DISAGREES = "quote_disagrees"  # the judge error of a supported verdict whose quote disagrees

# A clause ends at a sentence end, a line, a semicolon, or a contrasting conjunction: "Gift cards
# are not refundable, but store credit is" holds two clauses of opposite polarity.
_CLAUSE = re.compile(
    r"(?<=[.!?])\s+|\n|;|,?\s+\b(?:but|whereas|while|although|though|however|yet)\b\s*,?",
    re.I,
)
# An exception reverses the main clause for what it lists ("... except gift cards").
_EXCEPT = re.compile(
    r"\b(?:except(?:\s+for)?|other\s+than|apart\s+from|excluding|with\s+the\s+exception\s+of|save\s+for)\b",
    re.I,
)


@dataclass(frozen=True)
class Disagreement:
    """Why a quote disagrees with its claim, and whether it is certain (the claim's every word)."""

    why: str
    certain: bool
    quote: str  # the clause that disagrees


# Words that deny without a negation cue ("unable to fix" is "not able to fix"), and "no longer",
# whose cue would otherwise deny "longer". Rewritten before the polarity is read, on both sides alike.
_IMPLICIT = (
    (re.compile(r"\bunable\s+to\b", re.I), "not able to"),
    (re.compile(r"\b(?:fail(?:s|ed)?|refuse[sd]?)\s+to\b", re.I), "did not"),
    (re.compile(r"\bno\s+longer\b", re.I), "not"),
    (re.compile(r"\bout\s+of\s+stock\b", re.I), "not in stock"),
    (re.compile(r"\bunavailable\b", re.I), "not available"),
    (re.compile(r"\bavoid(?:s|ed|ing)?\b", re.I), "not"),
    (re.compile(r"\black(?:s|ed|ing)?\b", re.I), "no"),
)
# A claim's own clauses, for which of its words it denies: finer than a quote's ("..., with no
# other cars involved" denies the other cars, not the car of the main clause).
_CLAIM_CLAUSE = re.compile(_CLAUSE.pattern + r"|,\s*(?:with|and|as|since|after|before|when)\b", re.I)


@dataclass(frozen=True)
class _Reading:
    """What a text affirms and denies, clause by clause."""

    stems: frozenset[str]
    denied: frozenset[str]  # stems the text only ever denies (under negation, or excepted)


# A relative clause set off by commas is a clause of its own: "The suspect, who has not been
# named, stabbed ..." does not deny the stabbing.
_RELATIVE = re.compile(r",\s*((?:who|which|whose|whom)\b[^,]*),")


@lru_cache(maxsize=4096)
def _read(text: str, clause: re.Pattern[str] = _CLAUSE) -> _Reading:
    for pattern, plain in _IMPLICIT:
        text = pattern.sub(plain, text)
    text = _RELATIVE.sub(r"; \1;", text)
    stems: set[str] = set()
    denied: set[str] = set()
    affirmed: set[str] = set()
    for part in clause.split(text):
        if not part or not part.strip():
            continue
        own = content_stems(part)
        no, yes = _denied(part)
        stems |= own
        denied |= no
        affirmed |= yes
    return _Reading(frozenset(stems), frozenset(denied - affirmed))


def _denied(part: str) -> tuple[frozenset[str], frozenset[str]]:
    """What one clause denies and affirms (:func:`denied_and_affirmed`); with an exception
    ("refundable except gift cards"), what it lists is denied when the main clause affirms, and
    affirmed when it denies."""
    m = _EXCEPT.search(part)
    if m is None:
        return denied_and_affirmed(part)
    main, listed = part[: m.start()], part[m.end() :]
    no, yes = denied_and_affirmed(main)
    listed_stems = frozenset(content_stems(listed))
    if no:
        return no - listed_stems, yes | listed_stems
    return listed_stems, yes - listed_stems


@dataclass(frozen=True)
class _Clause:
    text: str
    reading: _Reading
    quantities: tuple[num.Quantity, ...]


def _clauses(quotes: Sequence[tuple[str, str, str]]) -> list[_Clause]:
    out: list[_Clause] = []
    for quote, _, _ in quotes:
        for part in _CLAUSE.split(quote):
            if part and part.strip():
                out.append(_Clause(part.strip(), _read(part), tuple(num.extract(part))))
    return out


def disagreement(claim: str, quotes: Sequence[tuple[str, str, str]]) -> Disagreement | None:
    """How the verified ``(quote, evidence_id, item text)`` triples of a ``supported`` verdict
    disagree with ``claim``, or None when the clause that speaks of it agrees (or none does)."""
    return _disagreement(claim, tuple(quotes))


@lru_cache(maxsize=1024)
def _disagreement(claim: str, quotes: tuple[tuple[str, str, str], ...]) -> Disagreement | None:
    opposite = quoted_opposite(claim, quotes)
    if opposite is not None:  # "out of stock" quoted as '"stock": 14' (auditor.judges.reading._states)
        return Disagreement(
            f"the evidence says {said(opposite.state)} where the claim says {said(claim_state(claim) or 'in')}",
            True,
            opposite.quote,
        )
    cues = cached_claim_cues(claim)
    stems = cues.stems
    if not stems:
        return None
    records = [q for q in quotes if q[2].lstrip()[:1] in ("{", "[")]
    found = _record_disagreement(claim, cues, records) if records else None
    if found is not None:
        return found
    clauses = _clauses([q for q in quotes if q not in records])
    if not clauses:
        return None
    best = max(clauses, key=lambda c: len(c.reading.stems & stems))
    shared = best.reading.stems & stems
    subject = _subject(claim)
    if 3 * len(shared) < 2 * len(stems) or (subject is not None and subject not in best.reading.stems):
        # no one clause speaks of the claim (two thirds of its words) and of its subject: nothing
        # to disagree with (on dev, half the words read "not the first time" against "the first")
        return None
    certain = shared == stems
    mine = _read(claim, _CLAIM_CLAUSE)
    claim_denies, quote_denies = mine.denied & shared, best.reading.denied & shared
    if claim_denies ^ quote_denies and not claim_denies & quote_denies:
        side = "denies" if quote_denies else "affirms"
        word = _word(sorted(claim_denies ^ quote_denies)[0], f"{claim} {best.text}")
        return Disagreement(
            f"the quote {side} what the claim {_opposite(side)} ({word!r})", certain, best.text
        )
    rival = _rival_figure(cues.quantities, best.quantities)
    if rival is not None:
        return Disagreement(
            f"the quote states {rival} where the claim states another figure", certain, best.text
        )
    # a name the judge quoted from another passage is not missing ("stated across passages 1 and 3")
    quoted = normalise(" ".join(q for q, _, _ in quotes))
    name = _rival_entity(claim, [e for e in cues.entities if not _named(e, quoted)], best.text)
    if name is not None:
        return Disagreement(f"the quote names {name!r} where the claim names another", certain, best.text)
    predicate = rival_predicate(claim, best.text, best.reading.stems)  # "sung by" for "written by"
    if predicate is not None:
        return Disagreement(predicate[0], predicate[1], best.text)
    return None


def _word(stemmed: str, text: str) -> str:
    """The word of ``text`` that gives ``stemmed`` ("accepted" for "approv"), for the reason."""
    return next((w for w in words(text) if stem(w) == stemmed), stemmed)


_OPENER = re.compile(
    r"^\W*(?:(?:also|however|meanwhile|then|additionally|moreover|furthermore|finally),?\s+)+", re.I
)


@lru_cache(maxsize=4096)
def _subject(claim: str) -> str | None:
    """The claim's first content stem ("returns" of "Returns are not accepted ..."), its subject
    in most claims; None when it opens with a figure or has no content word."""
    for word in words(_OPENER.sub("", claim)):
        found = content_stems(word)
        if found:
            return next(iter(found))
        if word[0].isdigit():
            return None
    return None


def _record_disagreement(
    claim: str, cues: ClaimCues, quotes: Sequence[tuple[str, str, str]]
) -> Disagreement | None:
    """A boolean pair the quotes hold, about a one-clause claim (its key's last word the claim's:
    ``"in_stock": false`` for "in stock"), whose value denies what the claim affirms or the other way."""
    if len([p for p in _CLAIM_CLAUSE.split(claim) if p and p.strip()]) > 1:
        return None  # "a lot, but no garage": pair by pair is the offline judge's reading, not this one's
    negated = cues.negated_stems | _read(claim, _CLAIM_CLAUSE).denied  # "out of stock" denies
    stated: set[str] = set()
    against: list[str] = []
    for quote, evidence_id, text in quotes:
        item = prepare(evidence_id, text, ITEM_CHARS)
        if not item.is_json:
            continue
        needle = normalise(quote)
        for single in item.singles:
            if normalise(single.seg.text) not in needle:
                continue
            stated |= single.seg.stems
            on_claim = single.seg.boolean and about(cues, single)
            # the record denies what the claim affirms with no negation at all, or affirms what
            # the claim's negation covers ("no valet, garage or lot" may deny past a cue's scope)
            denies = single.seg.negative and not negated
            affirms = not single.seg.negative and bool(negated & single.seg.stems)
            if on_claim and (denies or affirms):
                against.append(single.seg.text.strip())
    if not against:
        return None
    return Disagreement(
        f"the record's {against[0]} says otherwise than the claim", cues.stems <= stated, against[0]
    )


def _opposite(side: str) -> str:
    return "affirms" if side == "denies" else "denies"


def _rival_figure(claimed: Sequence[num.Quantity], found: Sequence[num.Quantity]) -> str | None:
    """A figure of the clause comparable with one of the claim's, while the clause states none
    of the claim's figures of that kind (a range's other end, a multi-hop claim's other amount)."""
    for q in claimed:
        rivals = [e for e in found if num.comparable(q, e)]
        if rivals and not any(num.matches(c, e) for c in claimed for e in rivals):
            return rivals[0].text
    return None


_NAME_TOKEN = re.compile(r"[\w'\u2019.-]+")


def _rival_entity(claim: str, missing: Sequence[str], clause: str) -> str | None:
    """A name in the clause standing where a name of the claim, ``missing`` from every quote, stands
    in the claim: the same two words after it, or before it ("The Model Y has" for "The Model X
    has", "Trump was born" for "Obama was born"). Another name merely beside the claim's words
    (a source, a place, a spelled-out acronym) is no rival."""
    if not missing:
        return None
    claim_norm = normalise(claim)
    rivals = [
        e
        for e in ent.entities(clause)
        if not _named(e, claim_norm) and not any(_spells_out(m, e, clause) for m in missing)
    ]
    if not rivals:
        return None
    claim_tokens = [t.casefold() for t in _NAME_TOKEN.findall(claim)]
    clause_tokens = [t.casefold() for t in _NAME_TOKEN.findall(clause)]
    for rival in rivals:
        around = _contexts(rival.casefold(), clause_tokens)
        if any(around & _contexts(e.casefold(), claim_tokens) for e in missing):
            return rival
    return None


def _spells_out(acronym: str, name: str, clause: str) -> bool:
    """``name`` opens the words ``acronym`` abbreviates in ``clause`` ("European Union" for "EU")."""
    if not (acronym.isupper() and acronym.isalpha()):
        return False
    at = clause.find(name)
    if at < 0:
        return False
    following = re.findall(r"[A-Za-z]+", clause[at:])[: len(acronym) + 2]
    initials = "".join(w[0] for w in following if w[0].isupper())
    return initials.startswith(acronym)


def _contexts(name: str, tokens: Sequence[str]) -> set[tuple[str, ...]]:
    """The two tokens after each occurrence of ``name`` and the two before it (marked by side),
    when one of them is a content word."""
    out: set[tuple[str, ...]] = set()
    for i, t in enumerate(tokens):
        if t.rstrip(".") != name:
            continue
        after, before = tuple(tokens[i + 1 : i + 3]), tuple(tokens[max(i - 2, 0) : i])
        # a context of function words only ("of the", "would do") places nothing
        if len(after) == 2 and any(t not in STOPWORDS for t in after):
            out.add(("after", *after))
        if len(before) == 2 and any(t not in STOPWORDS for t in before):
            out.add(("before", *before))
    return out


def _named(entity: str, norm: str) -> bool:
    """The name as a word of ``norm`` (a one-letter model name "X" is not the "x" of "tax")."""
    return re.search(rf"(?<!\w){re.escape(entity.casefold())}(?!\w)", norm) is not None or (
        len(entity) > 2 and ent.present(entity, norm)
    )


_VALUES = frozenset({"true", "fals", "false", "yes", "no", "null", "none"})


def about(cues: ClaimCues, window: Window) -> bool:
    """Whether a JSON boolean pair is about what the claim says: the last word of its key and at
    least half of the key's words are the claim's (``"garage": false`` is not about "located at
    6560 Pardall Rd" because its key path shares "business" with it, nor ``"RestaurantsDelivery":
    false`` about "a restaurant located in Goleta")."""
    keys = [w for w in words(window.seg.text) if stem(w) not in _VALUES and not w[0].isdigit()]
    own = content_stems(" ".join(keys))
    # the key's last word is its specific part: "Delivery" of "RestaurantsDelivery"
    return bool(keys) and stem(keys[-1]) in cues.stems and 2 * len(own & cues.stems) >= len(own)


def clear_cache() -> None:
    _disagreement.cache_clear()


_OWN_KEY = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*:')


def keyed_rival(cues: ClaimCues, window: Window) -> bool:
    """A record pair keyed by the claim's own words that states a figure and none of the claim's
    (``"stock": 0`` against "14 units in stock"): the same attribute with another value, which a
    unit-less figure cannot show by its kind alone."""
    m = _OWN_KEY.match(window.seg.text)
    key = frozenset(content_stems(m.group(1))) if m else frozenset()
    if not key or not key <= cues.stems or not cues.quantities or not window.quantities:
        return False
    if key & (cues.id_stems | _ID_WORDS):
        return False  # "order": 1043 beside "Order 1042 ...", "sku": "X300": another thing, not another value
    found = [e for e, _ in window.quantities]
    return not any(num.matches(q, e) for q in cues.quantities for e in found)


_ID_WORDS = frozenset({"id", "sku", "number", "code", "ref", "reference"})


def keyed_rival_quoted(claim: str, quotes: Sequence[tuple[str, str, str]]) -> bool:
    """Whether the quotes hold a :func:`keyed_rival` pair of a JSON item."""
    cues = cached_claim_cues(claim)
    for quote, evidence_id, text in quotes:
        if text.lstrip()[:1] not in ("{", "["):
            continue
        needle = normalise(quote)
        item = prepare(evidence_id, text, ITEM_CHARS)
        if any(normalise(w.seg.text) in needle and keyed_rival(cues, w) for w in item.singles):
            return True
    return False
