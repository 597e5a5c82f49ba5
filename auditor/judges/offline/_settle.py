"""The cascade's certain subset: the offline verdicts an LLM cascade may accept without a call.

:meth:`auditor.judges.OfflineJudge.settle` delegates here. The support score alone is not
certainty: on the development sets a score that was right 98% of the time on RAG answers was right
79% of the time on WiCE and AttributionBench claims, whose unsupported claims copy the source but
for one word ("sings" for "written by", "second" for "first") or one figure ("24 October 1996"
for "1996-97"). So certain means ``supported`` by a property of the claim and one evidence window
that does not depend on how often a data set's claims happen to be true:

- **all admitted evidence read** (nothing unread could hold the other side), the claim not screened
  and not aggregated ("both reports say ...");
- **verbatim**: the claim's text (trailing punctuation dropped, at least :data:`SETTLE_MIN_WORDS`
  words) occurs at word boundaries in one admitted item, and the evidence sentence around it
  carries no negation the claim lacks; the quote is the exact evidence span; or
- **one window states all of it**: a sentence, two adjacent sentences, or a JSON object that holds
  *every* content stem of the claim (at least :data:`MIN_STEMS` of them; in a JSON record
  :data:`MIN_RECORD_STEMS`, where one boolean pair is a whole statement) but its *presence words*
  (:data:`PRESENCE`: "offers", "available", "located", "options": a record's
  ``"RestaurantsTakeOut": true`` offers takeout), no stem met only in a ``null`` pair, every figure *as
  precisely as the claim* (a claimed "17 May 1980" is not stated by "1980"), every named entity, no rival figure of the same kind ("2020 prize"
  beside a claimed "2018 prize"), the claim's polarity (in a record, a one-clause claim negating a
  presence word, "valet parking is not available", is read against the boolean pairs it is about:
  ``"valet": false``), and, in prose, the claim's words close
  together (within :data:`MAX_SPREAD` times the claim's length, not scattered across a page).
  **Light words** need not be there either, and count for nothing (not even towards the minimum):
  a connective opening the claim ("Meanwhile, grill the bratwurst ...", "Finally tap ...", "In
  addition, ...", "Next, ..."), which ties it to the answer before it, and "a (wide) variety / range /
  selection of", which quantifies loosely what the claim goes on to list; and words about the
  source rather than the world, or that only weaken what the window states: a citation marker
  ("Lightly oil the grate (step 2)", "(passage 1)": its number is no figure of the claim either), an
  attribution to a record's reviews ("According to customer reviews, ...", "One customer mentioned
  that ...", "a parking lot for its customers"; a review's words must still lie in one review), a
  hedge ("allegedly", "reportedly", "possibly") (:func:`_light`; never a word the claim also uses
  elsewhere, never "next" without its comma: "next year" is a time).
  **Stand-ins**: in prose, up to :data:`MAX_STAND_INS` words of the claim may be missing from the
  window when each is a *general noun* (:data:`GENERAL_NOUNS`: "part of her leg", "the individual
  joined", "a few areas"), which names by its kind what the window names, or a *derived form* of a
  word the window holds ("moist" / "moisture", "portraying" / "portrayal": one stem extends the
  other, both :data:`VARIANT_LETTERS` letters or more), written in lower case in the claim (a
  name's variant is another name: "India" for "Indian"), and at least :data:`MIN_STEMS` of the
  claim's stems are in the window itself (:func:`_stand_ins`).
  **A record is read pair by pair**: when a pair the claim is not about disagrees word by word
  (``"RestaurantsReservations": false`` negates "restaurant" for "The restaurant has a classy
  ambience"), the claim still stands if every boolean pair it *is* about has its polarity and each
  of its other words is stated, with its polarity, by some pair that is not null
  (:func:`_pair_polarity`; this also reads a claim of two clauses, "no WiFi, but takeout is
  available", pair by pair). And the words of a claim that no attribute pair of a record states
  must lie in *one* sentence of its prose (one review): words gathered across several reviews
  ("the mimosas are highly recommended" from "Mimosas are the best." and "I recommend chatting
  with him") state nothing together (:func:`_one_text`), as scattered words do not in prose; nor
  does a review's word stand in for the value of an attribute the claim is about ("offers free
  WiFi" against ``"WiFi": "paid"`` and a review's "free delivery"). Against a record, a negation
  denies every item of its list ("no valet, garage, or lot parking" meets ``"lot": false`` too,
  :data:`_LISTED`), where a cue's own scope stops at two words; prose windows keep that scope on
  both sides.
  This implies the rules' own ``supported`` reading (a window covering the claim, its figures
  stated, its entities present, its polarity standing), so the support score is not consulted:
  its coefficients and thresholds are retrained for the judge's decisions, and certainty should not
  move with them;
- and **no other admitted item contradicts it** (a conflict goes to the LLM judge).

Absence is never certain ("14 days" may be "two weeks" to a reader) and neither is a contradiction:
the changed-figure rule's claims were unsupported for the annotators 7 times in 10 on the dev set and
28 in 33 on train, far from certain.

Measured through the cascade (quotes verified; ``python -m benchmarks --only accuracy``): 24.6% of
the dev claims at 98.5% agreement with the annotators (480 of 1,953 settled, 473 agreeing), 3.8% of
train's at 91.3% (172 of 4,561, AttributionBench's near copies; 95.2% with a claim-unit record
counted once). The stand-ins settled 8 more claims on dev (all agreeing: 6 derived forms, 2 general
nouns) and 8 on train (all agreeing: 1 and 7). What is left unsettled is paraphrase, which train
says is not certain: a window missing any one content word, a stem met only as a longer word
("India" for "Indian", before the stand-ins asked for lower case and five letters) or clauses
stitched from several windows are right 63%, 67% and 43% of the time there; one missing word of
a claim of six content words or more is right 99% of the time on dev (161 of 163) but 81% on
train (62 of 77: "shot and directed by" for "directed by", "a second contract"), 78% there (58 of
74) even with names, ordinals and words of time left out, 90% (19 of 21) with ten content words or
more; a missing word of the question 74% there (31 of 42: "sings" for "written by"); a missing
adverb in "-ly" 2 of 4 there; words spread over four times the claim's length 2 of 4.

Everything the check reads is computed once: the claim's cues are cached by claim text and the
evidence windows by :func:`auditor.judges.reading._windows.prepare`'s cache; the verbatim test is a
substring test on the item's normalised text, the word-boundary pattern compiled only for a claim
found there; an item lacking some stem of the claim is skipped whole, and a window is tested for
full coverage (a set inclusion) before anything costlier is looked at.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from auditor.claims import Claim
from auditor.evidence import Evidence
from auditor.judges._verdicts import Citation, ClaimVerdict, Label
from auditor.judges.offline._rivals import contradicting_items
from auditor.judges.offline._rules import coverage, quote, support_stands
from auditor.judges.reading import (
    ClaimCues,
    Item,
    Segment,
    Window,
    content_stems,
    negated,
    prepare,
    read_limits,
    stem,
    words,
)
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num
from auditor.judges.verify import about as _about
from auditor.judges.verify import cached_claim_cues
from auditor.text import normalise

_TOKEN = re.compile(r"\S+")
SETTLE_MIN_WORDS = 4  # the verbatim test never answers for shorter claims
MIN_STEMS = 3  # one window must hold at least this many content stems of the claim ...
MIN_RECORD_STEMS = 2  # ... or, in a JSON record, this many ("is good for groups": one boolean pair)
MAX_SPREAD = 3.0  # prose: the claim's stems within this many times its word count in the window
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
# must hold (see :func:`_light`): a connective opening the claim ("Meanwhile, grill the bratwurst",
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
# either (see :func:`_light`). A citation marker ("(step 4)", "(passage 2)", its figure not a figure
# of the claim: :mod:`auditor.judges.reading._cues`); an attribution to a record's reviews ("according to
# customer reviews", "one customer mentioned that", "a lot for its customers"), whose words must
# still lie in one review (:func:`_one_text`); a hedge that weakens what the window states
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
_NULL = re.compile(r":\s*null\s*$")  # a JSON pair whose value is null states nothing
# A clause boundary: a claim of several clauses may hold both polarities ("no WiFi, but takeout").
_CLAUSES = re.compile(r"[,;:]|\b(?:but|while|whereas|although|though|however|yet|except|unless)\b", re.I)


def _pattern(core: str) -> re.Pattern[str]:
    """The claim's words at word boundaries with any whitespace between (compiled only on a hit)."""
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, core.split())) + r"(?!\w)", re.IGNORECASE)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _ascii_span(core: str, text: str) -> tuple[int, int] | None:
    """Where :func:`_pattern` ``(core)`` first matches ``text``, for ASCII ``core`` and ``text``,
    without compiling it (a pattern per claim found verbatim cost about 0.3 ms, most of
    ``settle()``'s time on an answer that copies its source).

    The pattern is the claim's words with whitespace between, so its match is a run of the text's
    whitespace-separated tokens: the first ends with the claim's first word (a non-word character,
    or nothing, before it), the middle ones are its words, the last begins with its last word (a
    non-word character, or nothing, after it); in ASCII, ``IGNORECASE`` is ``lower()``. The
    leftmost such run is the regular expression's leftmost match (a test compares the two).
    """
    wanted = core.lower().split()
    n = len(wanted)
    if n < 2:
        return None
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    lowered = text.lower()
    first, last, middle = wanted[0], wanted[-1], wanted[1:-1]
    for j in range(len(spans) - n + 1):
        a, b = spans[j]
        start = b - len(first)
        if start < a or lowered[start:b] != first or (start > a and _word_char(text[start - 1])):
            continue
        if any(lowered[s:t] != w for (s, t), w in zip(spans[j + 1 : j + n - 1], middle, strict=True)):
            continue
        s, t = spans[j + n - 1]
        end = s + len(last)
        if end > t or lowered[s:end] != last or (end < t and _word_char(text[end])):
            continue
        return start, end
    return None


@lru_cache(maxsize=4096)
def _claim_words(text: str) -> int:
    return len(words(text))


def settle(claim: Claim, admitted: Sequence[Evidence]) -> ClaimVerdict | None:
    """A ``supported`` verdict when the offline checks are certain, else None (see the module docstring).

    It reads no setting of a judge (not the combiner's score or thresholds, which are retrained
    for the judge's own decisions): certainty is the same for every offline judge.
    """
    if claim.screened or not admitted:
        return None
    limits = read_limits([e.text for e in admitted])
    if any(len(e.text) > n for e, n in zip(admitted, limits, strict=True)):
        return None  # what was not read could hold the other side
    # From the quote check's cache: the cascade checks a settled verdict's quotes next (and the
    # pipeline again), so the claim is read once for all three.
    cues = cached_claim_cues(claim.text)
    if cues.aggregated:
        return None
    items = [prepare(e.evidence_id, e.text, n) for e, n in zip(admitted, limits, strict=True)]
    verdict = _verbatim(claim, admitted, items) or _one_window(claim, cues, admitted, items)
    if verdict is None:
        return None
    cited = {c.evidence_id for c in verdict.citations}
    if contradicting_items(cues, cited, items):
        return None  # another admitted item disagrees: a conflict is never certain
    return verdict


def _verdict(claim: Claim, rationale: str, citations: tuple[Citation, ...]) -> ClaimVerdict:
    return ClaimVerdict(
        claim_id=claim.claim_id,
        label=Label.SUPPORTED,
        citations=citations,
        rationale=rationale,
        settled_by="offline",
    )


def _verbatim(claim: Claim, admitted: Sequence[Evidence], items: Sequence[Item]) -> ClaimVerdict | None:
    core = claim.text.strip().rstrip(".!;:,").strip()
    if len(core.split()) < SETTLE_MIN_WORDS:
        return None
    folded = normalise(core)
    for e, item in zip(admitted, items, strict=True):
        if folded not in item.norm:
            continue  # the cheap test first: most claims are in no item verbatim
        if core.isascii() and item.text.isascii():
            found = _ascii_span(core, item.text)
        else:
            m = _pattern(core).search(item.text)
            found = None if m is None else m.span()
        if found is None:
            continue
        start, end = found
        sentence = next(
            (item.text[s:t] for seg in item.singles for s, t in seg.seg.spans if s <= start and end <= t),
            item.text[start:end],
        )
        if negated(sentence) and not negated(claim.text):
            continue
        return _verdict(
            claim,
            f"stated verbatim in {e.name or e.kind.value}",
            (Citation(evidence_id=e.evidence_id, quote=item.text[start:end]),),
        )
    return None


@lru_cache(maxsize=4096)
def _light(text: str) -> frozenset[str]:
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


def _one_window(
    claim: Claim, cues: ClaimCues, admitted: Sequence[Evidence], items: Sequence[Item]
) -> ClaimVerdict | None:
    stems = cues.stems - _light(claim.text)  # light words count for nothing, not even the minimum
    if len(stems) < MIN_RECORD_STEMS:
        return None
    need = stems - PRESENCE  # the stems a window must hold (see PRESENCE)
    if not need:
        return None  # "offers various amenities": nothing but presence is not a claim to settle
    prose = len(stems) >= MIN_STEMS
    # in a record, each item of a list a negation denies meets its own pair ("lot": false); prose
    # keeps the cue's own scope, as its windows do
    listed = _listed_negation(claim.text) & cues.stems
    in_record = replace(cues, negated_stems=cues.negated_stems | listed) if listed else cues
    for e, item in zip(admitted, items, strict=True):
        if not prose and not item.is_json:
            continue
        if not cues.money_words and not need <= item.stems and not _stand_ins(claim.text, need, item):
            continue  # some stem is in no window of the item
        if any(not ent.present(x, item.norm) for x in cues.entities):
            continue
        for w in item.windows:
            held = need
            if not need <= w.seg.stems and not (cues.money_words and coverage(cues, w) >= 1.0):
                if not _stand_ins(claim.text, need, item, w.seg.stems):
                    continue
                held = need & w.seg.stems
            if not item.is_json and len(w.parts) > 2:
                continue
            if item.is_json and not need <= _stated_stems(w):
                continue  # a stem met only in a null pair: "RestaurantsGoodForGroups": null
            if item.is_json and not _one_text(claim.text, cues, need, w):
                continue  # words gathered from several reviews of a record
            if not _states_all(cues, w) or not _compact(claim.text, held, w, item):
                continue
            read = in_record if item.is_json else cues
            polarity = _polarity(claim.text, read, w, item.is_json)
            # the record's own boolean pairs decided it ("record"), else the polarity rule's reading
            if polarity == "record" or (polarity == "words" and support_stands(read, item, w)):
                return _verdict(
                    claim,
                    f"every content word, figure and name of the claim in one passage of "
                    f"{e.document_id or e.name or e.kind.value}",
                    quote(item, w, cues),
                )
    return None


def _stand_ins(text: str, need: frozenset[str], item: Item, stems: frozenset[str] | None = None) -> bool:
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


@lru_cache(maxsize=4096)
def _listed_negation(text: str) -> frozenset[str]:
    """The stems of every item of a list a negation denies (:data:`_LISTED`)."""
    return frozenset().union(*(content_stems(m.group(1)) for m in _LISTED.finditer(text)))


def _exactly(q: num.Quantity, e: num.Quantity) -> bool:
    """``e`` states ``q`` at least as precisely: a claimed day and month need the evidence's own."""
    if not num.matches(q, e):
        return False
    if q.kind != "date":
        return True
    if e.kind != "date":
        return q.month is None and q.day is None
    return all(a is None or a == b for a, b in ((q.year, e.year), (q.month, e.month), (q.day, e.day)))


def _states_all(cues: ClaimCues, w: Window) -> bool:
    """Every figure exactly, every entity in the window itself, no rival figure, the same polarity."""
    found = [e for e, _ in w.quantities]
    if not all(any(_exactly(q, e) for e in found) for q in cues.quantities):
        return False
    for e in found:
        if any(num.comparable(q, e) for q in cues.quantities) and not any(
            num.matches(q, e) for q in cues.quantities
        ):
            return False  # "the 2020 prize" beside the claimed "2018 prize"
    text = normalise(f"{w.seg.text} {w.seg.extra}")
    return all(ent.present(x, text) for x in cues.entities)


def _polarity(text: str, cues: ClaimCues, w: Window, is_json: bool) -> str | None:
    """``"words"`` when no word the claim shares with the window is negated on one side only;
    else, in a record, ``"record"`` when a one-clause claim agrees with the boolean pairs it is about
    (:func:`_record_polarity`); else None."""
    shared = cues.stems & w.seg.stems
    if not (cues.negated_stems & shared) ^ (w.seg.negated & shared):
        return "words"
    if is_json and not _CLAUSES.search(text) and _record_polarity(cues, w):
        return "record"
    if is_json and _pair_polarity(cues, w, _light(text)):
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
    stated = [p for p in w.parts if not _NULL.search(p.text)]
    return all(
        any(s in p.stems and (s in p.negated) == (s in cues.negated_stems) for p in stated)
        for s in cues.stems - held - PRESENCE - light
    )


def _record_polarity(cues: ClaimCues, w: Window) -> bool:
    """A one-clause claim against a record: "valet parking is not available" negates "available"
    (a presence word, in no pair), yet states that ``"valet": false``; "does not offer WiFi" meets
    ``"WiFi": "no"``. The boolean pairs the claim is about (their key's last word and half its
    words the claim's, :func:`auditor.judges.offline._rules._about`) must all have the claim's polarity,
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


def _one_text(text: str, cues: ClaimCues, need: frozenset[str], w: Window) -> bool:
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
        if p.boolean or _NULL.search(p.text) or (m := _KEY.match(p.text)) is None:
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


def _stated_stems(w: Window) -> frozenset[str]:
    """The stems of a JSON window's parts that state a value (a null pair says it is not known)."""
    if not any(_NULL.search(p.text) for p in w.parts):
        return w.seg.stems
    return frozenset().union(*(p.stems for p in w.parts if not _NULL.search(p.text)))


def _compact(text: str, stems: frozenset[str], w: Window, item: Item) -> bool:
    """In prose, the claim's ``stems`` lie within :data:`MAX_SPREAD` times its length in the window."""
    if item.is_json:
        return True
    tokens = [stem(t) for t in words(w.seg.text)]
    need = stems.intersection(tokens)
    if len(need) < len(stems):
        return True  # a stem met only through a compound or synonym: the set test already held
    return _min_span(need, tokens) <= MAX_SPREAD * max(_claim_words(text), len(need))


def _min_span(need: frozenset[str], tokens: Sequence[str]) -> int:
    """The fewest consecutive tokens holding every stem of ``need`` (which all occur in ``tokens``)."""
    have: Counter[str] = Counter()
    held, lo, best = 0, 0, len(tokens)
    for hi, t in enumerate(tokens):
        if t not in need:
            continue
        have[t] += 1
        held += have[t] == 1
        while held == len(need):
            best = min(best, hi - lo + 1)
            first = tokens[lo]
            if first in need:
                have[first] -= 1
                held -= have[first] == 0
            lo += 1
    return best
