"""The offline judge's rules: how well a prepared evidence window states a claim's cues.

The cues themselves come from :mod:`auditor.judges.reading._cues`. Each rule is a pure function of the
claim's cues and prepared items that finds evidence but gives no verdict: the judge orders the
rules, and every threshold lives here. Quotes are exact evidence spans.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from auditor.judges._verdicts import Citation
from auditor.judges.reading import ClaimCues, Item, Window
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num
from auditor.judges.verify import about as _about
from auditor.text import normalise

SUPPORT_COVERAGE = 0.6  # share of the claim's content stems a window must contain to support it
CONTRADICT_COVERAGE = 0.6  # ... for a different number in that window to count as a contradiction
NEGATION_COVERAGE = 0.75  # ... for an opposite polarity in that window to count as a contradiction
# ... for a long answer's claim to be supported when its support score is high enough (a summary's
# paraphrase); the quotes must hold as much (auditor.judges.verify._carry.MIN_SHARE)
PARTIAL_COVERAGE = 0.5


def coverage(cues: ClaimCues, window: Window) -> float:
    """The share of the claim's stems in the window (its money words count if it states the amount)."""
    if not cues.stems:
        return 1.0 if cues.quantities else 0.0
    matched = cues.stems & window.seg.stems
    if cues.money_words and any(stated(q, window) for q in cues.money):
        matched |= cues.money_words
    return len(matched) / len(cues.stems)


def stated(q: num.Quantity, window: Window) -> bool:
    return any(num.matches(q, e) for e, _ in window.quantities)


QUOTE_PARTS = 8  # at most this many parts of a non-contiguous window (a JSON object) are quoted


def quote(item: Item, window: Window, cues: ClaimCues) -> tuple[Citation, ...]:
    """The window's text; for a JSON object, the parts that carry the claim (see :func:`_carrying`)."""
    if window.contiguous:
        start, end = window.seg.spans[0][0], window.seg.spans[-1][1]
        return (Citation(evidence_id=item.evidence_id, quote=item.text[start:end]),)
    chosen = sorted(_carrying(window, cues)) or [0]
    return tuple(
        Citation(evidence_id=item.evidence_id, quote=item.text[s:e])
        for i in chosen
        for s, e in window.parts[i].spans
    )


def _carrying(window: Window, cues: ClaimCues) -> list[int]:
    """Up to :data:`QUOTE_PARTS` parts that together state the claim: a part stating each of its
    figures first, then greedily the parts adding most of its words not yet quoted, so the quotes
    pass the check that they carry the claim (:mod:`auditor.judges.verify._carry`)."""
    chosen: list[int] = []
    for q in cues.quantities:
        k = next((i for e, i in window.quantities if num.matches(q, e)), None)
        if k is not None and k not in chosen and len(chosen) < QUOTE_PARTS:
            chosen.append(k)
    missing = set(cues.stems).difference(*(window.parts[i].stems for i in chosen))
    while missing and len(chosen) < QUOTE_PARTS:
        gain, k = max((len(part.stems & missing), -i) for i, part in enumerate(window.parts))
        if not gain:
            break
        chosen.append(-k)
        missing -= window.parts[-k].stems
    return chosen


def supporting_window(cues: ClaimCues, item: Item) -> Window | None:
    """The best window of ``item`` that supports the claim, or None."""
    if any(not ent.present(e, item.norm) for e in cues.entities):
        return None
    best: tuple[float, int] | None = None
    chosen = None
    for w in item.windows:
        cov = coverage(cues, w)
        if cov < SUPPORT_COVERAGE or not all(stated(q, w) for q in cues.quantities):
            continue
        key = (cov, -len(w.parts))
        if best is None or key > best:
            best, chosen = key, w
    return chosen


def partial_window(cues: ClaimCues, items: Sequence[Item]) -> tuple[Item, Window] | None:
    """The window covering most of the claim when it covers at least :data:`PARTIAL_COVERAGE` and
    states all its figures, in an item naming all its entities whose polarity rule does not undo it;
    or None. The judge uses it only where the support score says a paraphrase is likely."""
    best: tuple[float, int] | None = None
    chosen = None
    for item in items:
        if any(not ent.present(e, item.norm) for e in cues.entities):
            continue
        top: tuple[float, int] | None = None
        window = None
        for w in item.windows:
            cov = coverage(cues, w)
            if cov < PARTIAL_COVERAGE or not all(stated(q, w) for q in cues.quantities):
                continue
            key = (cov, -len(w.parts))
            if top is None or key > top:
                top, window = key, w
        # the polarity rule reads the whole item: once per item, for its best window
        better = top is not None and window is not None and (best is None or top > best)
        if better and window is not None and support_stands(cues, item, window):
            best, chosen = top, (item, window)
    return chosen


def combined_support(cues: ClaimCues, items: Sequence[Item]) -> list[tuple[Item, Window]] | None:
    """Two windows from two items that together cover the claim (a multi-hop answer), or None."""
    if len(items) < 2 or any(not any(ent.present(e, i.norm) for i in items) for e in cues.entities):
        return None
    bests: list[tuple[float, Item, Window]] = []
    for item in items:
        scored = [(coverage(cues, w), -len(w.parts), w) for w in item.windows]
        if scored:
            cov, _, w = max(scored, key=lambda t: (t[0], t[1]))
            if cov > 0:
                bests.append((cov, item, w))
    bests.sort(key=lambda t: -t[0])
    for a in range(min(4, len(bests))):
        for b in range(a + 1, min(4, len(bests))):
            (_, i1, w1), (_, i2, w2) = bests[a], bests[b]
            union = w1.seg.stems | w2.seg.stems
            if not cues.stems or len(cues.stems & union) / len(cues.stems) < SUPPORT_COVERAGE:
                continue
            if (
                not (cues.stems & w1.seg.stems) - w2.seg.stems
                or not (cues.stems & w2.seg.stems) - w1.seg.stems
            ):
                continue  # each item must contribute something
            if all(stated(q, w1) or stated(q, w2) for q in cues.quantities):
                if any(not (ent.present(e, i1.norm) or ent.present(e, i2.norm)) for e in cues.entities):
                    continue
                if polarity_conflict(cues, [i1, i2]) is not None:
                    continue
                return [(i1, w1), (i2, w2)]
    return None


# The sentences of an item sharing most words with a claim that :func:`stitched_sentences` combines,
# and how many of them at most stand together for the claim.
STITCH_SENTENCES = 8
STITCH_PARTS = 3


def stitched_sentences(cues: ClaimCues, items: Sequence[Item]) -> tuple[Item, tuple[Window, ...]] | None:
    """Two or three sentences of one prose item that together state most of the claim, or None.

    A summary merges sentences of its source ("Burns was part of the band's original lineup,
    which formed in 1965" from "Burns was a founding member" and, further on, "the band formed in
    1965"), so no one window covers it. Together the sentences cover :data:`PARTIAL_COVERAGE` of
    the claim's stems and state all its figures, each brings words or figures the others lack, one
    of them names all the claim's entities (a relation between two names needs a sentence naming
    both: "the University of Mississippi, located in Lake Providence" is not stitched from a
    sentence about each), and the polarity rule undoes none. Of each item's
    :data:`STITCH_SENTENCES` sentences sharing most of the claim's words and figures, the fewest
    sentences (two before three, at most :data:`STITCH_PARTS`) covering most are taken (then the
    earlier sentences); the best item wins. Like :func:`partial_window`, the judge uses it only
    where the support score says a paraphrase is likely.
    """
    if not cues.stems:
        return None
    best: tuple[int, float, Item, tuple[Window, ...]] | None = None
    for item in items:
        if item.is_json or any(not ent.present(e, item.norm) for e in cues.entities):
            continue
        shared = [
            (cues.stems & w.seg.stems, frozenset(n for n, q in enumerate(cues.quantities) if stated(q, w)), k)
            for k, w in enumerate(item.singles)
        ]
        ranked = sorted((x for x in shared if x[0] or x[1]), key=lambda x: (-len(x[0]) - len(x[1]), x[2]))[
            :STITCH_SENTENCES
        ]
        for size in range(2, STITCH_PARTS + 1):
            top: tuple[float, tuple[int, ...]] | None = None
            for group in itertools.combinations(ranked, size):
                stems = frozenset().union(*(g[0] for g in group))
                cov = len(stems) / len(cues.stems)
                if cov < PARTIAL_COVERAGE or (top is not None and cov <= top[0]):
                    continue
                if len(frozenset().union(*(g[1] for g in group))) < len(cues.quantities):
                    continue
                if _each_brings(group) and _names_all(cues, item, *(g[2] for g in group)):
                    top = (cov, tuple(sorted(g[2] for g in group)))
            if top is None:
                continue
            key = (-size, top[0])
            windows = tuple(item.singles[k] for k in top[1])
            if (best is None or key > (-best[0], best[1])) and all(
                support_stands(cues, item, w) for w in windows
            ):
                best = (size, top[0], item, windows)
            break
    return (best[2], best[3]) if best else None


def _each_brings(group: Sequence[tuple[frozenset[str], frozenset[int], int]]) -> bool:
    """Whether each sentence of ``group`` brings a word or figure of the claim the others lack."""
    for n, (stems, figures, _) in enumerate(group):
        others = [g for m, g in enumerate(group) if m != n]
        if not (stems - frozenset().union(*(g[0] for g in others))) and not (
            figures - frozenset().union(*(g[1] for g in others))
        ):
            return False
    return True


def _names_all(cues: ClaimCues, item: Item, *sentences: int) -> bool:
    """Whether one of the item's ``sentences`` names every entity of the claim."""
    return not cues.entities or any(
        all(ent.present(e, normalise(item.singles[k].seg.text)) for e in cues.entities) for k in sentences
    )


def partial_support(cues: ClaimCues, items: Sequence[Item]) -> tuple[Item, tuple[Window, ...]] | None:
    """What a long answer's partly covered claim may rest on: the window of :func:`partial_window`,
    else the sentences of :func:`stitched_sentences`; or None."""
    one = partial_window(cues, items)
    if one is not None:
        return one[0], (one[1],)
    return stitched_sentences(cues, items)


def polarity_conflict(cues: ClaimCues, items: Sequence[Item]) -> tuple[Item, Window] | None:
    """Evidence stating the claim with the opposite polarity, or None.

    Prose: one sentence covering at least :data:`NEGATION_COVERAGE` of the claim's words, where
    a shared word is negated on one side only. JSON: the item covers that much of the claim, and
    the boolean pairs sharing most words with the claim all disagree with its polarity
    (``"RestaurantsReservations": false`` against "takes reservations").
    """
    if not cues.stems:
        return None
    best: tuple[float, Item, Window] | None = None
    for item in items:
        if item.is_json:
            if len(cues.stems & item.stems) / len(cues.stems) < NEGATION_COVERAGE:
                continue
            scored = [
                (len(cues.stems & w.seg.stems), w) for w in item.singles if w.seg.boolean and _about(cues, w)
            ]
            top = max((n for n, _ in scored), default=0)
            chosen = [w for n, w in scored if n == top and n > 0]
            if chosen and all(w.seg.negative != bool(cues.negated_stems & w.seg.stems) for w in chosen):
                cov = top / len(cues.stems) + 1.0  # a boolean pair is the most direct statement
                if best is None or cov > best[0]:
                    best = (cov, item, chosen[0])
            continue
        for w in item.singles:
            cov = coverage(cues, w)
            if cov >= NEGATION_COVERAGE and _negation_flip(cues, item, w) and (best is None or cov > best[0]):
                best = (cov, item, w)
    return (best[1], best[2]) if best else None


def support_stands(cues: ClaimCues, item: Item, window: Window) -> bool:
    """Whether a supporting window stands against the polarity rule in its own item.

    In prose, a sentence elsewhere in the item that flips a shared word ("were arrested" beside
    "were not involved in the stabbing") does not undo a window stating the claim with its own
    polarity, unless it covers the claim better. A JSON boolean pair is the record's direct
    statement and always wins.
    """
    conflict = polarity_conflict(cues, [item])
    if conflict is None:
        return True
    if item.is_json:
        return False
    return not _negation_flip(cues, item, window) and coverage(cues, conflict[1]) <= coverage(cues, window)


def rival_figures(
    cues: ClaimCues, q: num.Quantity, items: Sequence[Item]
) -> tuple[Item, Window, list[tuple[num.Quantity, int]]] | None:
    """The window best covering the claim that states figures comparable to ``q`` but with another
    value (and none of the claim's), with those figures and their part indexes; or None."""
    best: tuple[float, int] | None = None
    found = None
    for item in items:
        for w in item.windows:
            cov = coverage(cues, w)
            if cov < CONTRADICT_COVERAGE:
                continue
            rivals = [
                (e, k)
                for e, k in w.quantities
                if num.comparable(q, e) and not any(num.matches(other, e) for other in cues.quantities)
            ]
            if rivals and (key := (cov, -len(w.parts))) and (best is None or key > best):
                best, found = key, (item, w, rivals)
    return found


def best_window(cues: ClaimCues, items: Sequence[Item], windows: str) -> tuple[Item, Window, float] | None:
    """The window covering most of the claim; ``windows="polarity"`` skips multi-sentence windows."""
    best: tuple[float, int] | None = None
    chosen = None
    for item in items:
        for w in item.windows:
            if windows == "polarity" and w.contiguous and len(w.parts) > 1:
                continue  # polarity is read in one sentence (or one JSON object), never across two
            cov = coverage(cues, w)
            key = (cov, -len(w.parts))
            if best is None or key > best:
                best, chosen = key, (item, w, cov)
    return chosen


def _negation_flip(cues: ClaimCues, item: Item, window: Window) -> bool:
    """Whether words the claim shares with the window are negated in one and not the other.

    A shared word negated on both sides ("does not take reservations" against
    ``"RestaurantsReservations": false``) means the polarities agree.
    """
    shared = cues.stems & window.seg.stems
    claim_neg, ev_neg = cues.negated_stems & shared, window.seg.negated & shared
    return bool(claim_neg ^ ev_neg) and not claim_neg & ev_neg
