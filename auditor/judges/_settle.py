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
  *every* content stem of the claim (at least :data:`MIN_STEMS` of them), every figure *as
  precisely as the claim* (a claimed "17 May 1980" is not stated by "1980"), every named entity, no rival figure of the same kind ("2020 prize"
  beside a claimed "2018 prize"), the claim's polarity, and, in prose, the claim's words close
  together (within :data:`MAX_SPREAD` times the claim's length, not scattered across a page).
  This implies the rules' own ``supported`` reading (a window covering the claim, its figures
  stated, its entities present, its polarity standing), so the support score is not consulted:
  its coefficients and thresholds are retrained for the judge's decisions, and certainty should not
  move with them;
- and **no other admitted item contradicts it** (a conflict goes to the LLM judge).

Absence is never certain ("14 days" may be "two weeks" to a reader) and neither is a contradiction:
the changed-figure rule's claims were unsupported for the annotators 7 times in 10 on the dev set and
28 in 33 on train, far from certain.

Everything the check reads is computed once: the claim's cues are cached by claim text and the
evidence windows by :func:`auditor.judges._windows.prepare`'s cache; the verbatim test is a
substring test on the item's normalised text, the word-boundary pattern compiled only for a claim
found there; an item lacking some stem of the claim is skipped whole, and a window is tested for
full coverage (a set inclusion) before anything costlier is looked at.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from auditor.claims import Claim
from auditor.evidence import Evidence
from auditor.judges import _entities as ent
from auditor.judges import _numbers as num
from auditor.judges._carry import _cues as carry_cues
from auditor.judges._conflicts import contradicting_items
from auditor.judges._cues import ClaimCues
from auditor.judges._lexical import negated, stem, words
from auditor.judges._rules import coverage, quote, support_stands
from auditor.judges._verdicts import Citation, ClaimVerdict, Label
from auditor.judges._windows import Item, Window, prepare, read_limits
from auditor.text import normalise

SETTLE_MIN_WORDS = 4  # the verbatim test never answers for shorter claims
MIN_STEMS = 3  # one window must hold at least this many content stems of the claim
MAX_SPREAD = 2.0  # prose: the claim's stems within this many times its word count in the window


def _cues(text: str) -> ClaimCues:
    """The claim's cues from the quote check's cache: the cascade checks a settled verdict's quotes
    next (and the pipeline again), so the claim is read once for all three."""
    return carry_cues(text)


def _pattern(core: str) -> re.Pattern[str]:
    """The claim's words at word boundaries with any whitespace between (compiled only on a hit)."""
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, core.split())) + r"(?!\w)", re.IGNORECASE)


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
    cues = _cues(claim.text)
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
        m = _pattern(core).search(item.text)
        if m is None:
            continue
        sentence = next(
            (
                item.text[s:t]
                for seg in item.singles
                for s, t in seg.seg.spans
                if s <= m.start() and m.end() <= t
            ),
            m.group(),
        )
        if negated(sentence) and not negated(claim.text):
            continue
        return _verdict(
            claim,
            f"stated verbatim in {e.name or e.kind.value}",
            (Citation(evidence_id=e.evidence_id, quote=m.group()),),
        )
    return None


def _one_window(
    claim: Claim, cues: ClaimCues, admitted: Sequence[Evidence], items: Sequence[Item]
) -> ClaimVerdict | None:
    if len(cues.stems) < MIN_STEMS:
        return None
    for e, item in zip(admitted, items, strict=True):
        if not cues.money_words and not cues.stems <= item.stems:
            continue  # some stem is in no window of the item
        if any(not ent.present(x, item.norm) for x in cues.entities):
            continue
        for w in item.windows:
            if not cues.stems <= w.seg.stems and not (cues.money_words and coverage(cues, w) >= 1.0):
                continue
            if not item.is_json and len(w.parts) > 2:
                continue
            if _states_all(cues, w) and support_stands(cues, item, w) and _compact(claim.text, cues, w, item):
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
    if any(not ent.present(x, text) for x in cues.entities):
        return False
    shared = cues.stems & w.seg.stems
    return not (cues.negated_stems & shared) ^ (w.seg.negated & shared)


def _compact(text: str, cues: ClaimCues, w: Window, item: Item) -> bool:
    """In prose, the claim's stems lie within :data:`MAX_SPREAD` times its length in the window."""
    if item.is_json:
        return True
    tokens = [stem(t) for t in words(w.seg.text)]
    need = cues.stems.intersection(tokens)
    if len(need) < len(cues.stems):
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
