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
  hedge ("allegedly", "reportedly", "possibly") (:func:`light`; never a word the claim also uses
  elsewhere, never "next" without its comma: "next year" is a time).
  **Stand-ins**: in prose, up to :data:`MAX_STAND_INS` words of the claim may be missing from the
  window when each is a *general noun* (:data:`GENERAL_NOUNS`: "part of her leg", "the individual
  joined", "a few areas"), which names by its kind what the window names, or a *derived form* of a
  word the window holds ("moist" / "moisture", "portraying" / "portrayal": one stem extends the
  other, both :data:`VARIANT_LETTERS` letters or more), written in lower case in the claim (a
  name's variant is another name: "India" for "Indian"), and at least :data:`MIN_STEMS` of the
  claim's stems are in the window itself (:func:`stand_ins`).
  **A record is read pair by pair**: when a pair the claim is not about disagrees word by word
  (``"RestaurantsReservations": false`` negates "restaurant" for "The restaurant has a classy
  ambience"), the claim still stands if every boolean pair it *is* about has its polarity and each
  of its other words is stated, with its polarity, by some pair that is not null
  (:func:`_pair_polarity`; this also reads a claim of two clauses, "no WiFi, but takeout is
  available", pair by pair). And the words of a claim that no attribute pair of a record states
  must lie in *one* sentence of its prose (one review): words gathered across several reviews
  ("the mimosas are highly recommended" from "Mimosas are the best." and "I recommend chatting
  with him") state nothing together (:func:`one_text`), as scattered words do not in prose; nor
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

The words a window need not hold (presence, light words, stand-ins) are named in
:mod:`auditor.judges.offline._light`; a record read pair by pair in :mod:`auditor.judges.offline._records`.

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
from auditor.judges.offline._light import MIN_STEMS, PRESENCE, light, stand_ins
from auditor.judges.offline._records import listed_negation, one_text, polarity_reading, stated_stems
from auditor.judges.offline._rivals import contradicting_items
from auditor.judges.offline._rules import coverage, quote, support_stands
from auditor.judges.reading import (
    ClaimCues,
    Item,
    Window,
    negated,
    prepare,
    read_limits,
    stem,
    words,
)
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num
from auditor.judges.verify import cached_claim_cues
from auditor.text import normalise

_TOKEN = re.compile(r"\S+")
SETTLE_MIN_WORDS = 4  # the verbatim test never answers for shorter claims
MIN_RECORD_STEMS = 2  # ... or, in a JSON record, this many ("is good for groups": one boolean pair)
MAX_SPREAD = 3.0  # prose: the claim's stems within this many times its word count in the window


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


def _one_window(
    claim: Claim, cues: ClaimCues, admitted: Sequence[Evidence], items: Sequence[Item]
) -> ClaimVerdict | None:
    stems = cues.stems - light(claim.text)  # light words count for nothing, not even the minimum
    if len(stems) < MIN_RECORD_STEMS:
        return None
    need = stems - PRESENCE  # the stems a window must hold (see PRESENCE)
    if not need:
        return None  # "offers various amenities": nothing but presence is not a claim to settle
    prose = len(stems) >= MIN_STEMS
    # in a record, each item of a list a negation denies meets its own pair ("lot": false); prose
    # keeps the cue's own scope, as its windows do
    listed = listed_negation(claim.text) & cues.stems
    in_record = replace(cues, negated_stems=cues.negated_stems | listed) if listed else cues
    for e, item in zip(admitted, items, strict=True):
        if not prose and not item.is_json:
            continue
        if not cues.money_words and not need <= item.stems and not stand_ins(claim.text, need, item):
            continue  # some stem is in no window of the item
        if any(not ent.present(x, item.norm) for x in cues.entities):
            continue
        for w in item.windows:
            held = need
            if not need <= w.seg.stems and not (cues.money_words and coverage(cues, w) >= 1.0):
                if not stand_ins(claim.text, need, item, w.seg.stems):
                    continue
                held = need & w.seg.stems
            if not item.is_json and len(w.parts) > 2:
                continue
            if item.is_json and not need <= stated_stems(w):
                continue  # a stem met only in a null pair: "RestaurantsGoodForGroups": null
            if item.is_json and not one_text(claim.text, cues, need, w):
                continue  # words gathered from several reviews of a record
            if not _states_all(cues, w) or not _compact(claim.text, held, w, item):
                continue
            read = in_record if item.is_json else cues
            polarity = polarity_reading(claim.text, read, w, item.is_json)
            # the record's own boolean pairs decided it ("record"), else the polarity rule's reading
            if polarity == "record" or (polarity == "words" and support_stands(read, item, w)):
                return _verdict(
                    claim,
                    f"every content word, figure and name of the claim in one passage of "
                    f"{e.document_id or e.name or e.kind.value}",
                    quote(item, w, cues),
                )
    return None


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
