"""The offline judge: deterministic, no network, fast, and approximate.

It judges each claim against the admitted evidence with surface cues only:

1. **Entities** (proper nouns, acronyms, ids and codes such as ``X200``) must occur in the admitted
   evidence, else the claim is ``absent``.
2. **Quantities** (amounts, dates, percentages, units, number words) must match. A quantity found
   nowhere is ``absent``, unless the evidence window that best matches the claim's words states a
   comparable quantity (same kind and unit) with a different value: then ``contradicted``.
3. **Negation**: a window that covers the claim's words well but with the opposite polarity
   ("not refundable" against "refundable", or a JSON ``false``) is ``contradicted``.
4. **Lexical entailment**: a window (one or two adjacent sentences, or a JSON object's pairs) that
   covers at least :data:`SUPPORT_COVERAGE` of the claim's content stems and states all its
   quantities is ``supported``, quoting that window. Otherwise ``absent``.
5. **Aggregated claims** ("both reports say ...") need support from at least two items.

Quotes are always exact substrings of the evidence text, so they pass
:func:`auditor.verdicts.verify_quotes`. The judge never marks a claim as common knowledge, whatever
the policy allows: it cannot tell what is common knowledge. It is **approximate** and says so in its
identity (``approximate=True``); paraphrase, inference across sentences and world knowledge are
beyond it. :meth:`OfflineJudge.settle` is the strict subset used before an LLM judge: it answers
only when the claim is stated verbatim in an admitted item.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence
from auditor.judges import _entities as ent
from auditor.judges import _numbers as num
from auditor.judges._lexical import Segment, content_stems, merge, negated, negated_stems, segments_of, words
from auditor.judges._verdicts import Citation, ClaimVerdict, JudgeIdentity, Label
from auditor.text import normalise

PROMPT_VERSION = "offline-1"
SUPPORT_COVERAGE = 0.6  # share of the claim's content stems a window must contain to support it
CONTRADICT_COVERAGE = 0.6  # ... for a different number in that window to count as a contradiction
NEGATION_COVERAGE = 0.75  # ... for an opposite polarity in that window to count as a contradiction
SETTLE_MIN_WORDS = 4  # settle() never answers for shorter claims

_AGGREGATE = re.compile(
    r"\b(both|all (?:two|three|four|five|\d+|the|of the)|each of the|(?:two|three|four|five|\d+|several|multiple) "
    r"(?:reports|documents|sources|articles|studies|papers|pages|items|results|tools))\b",
    re.I,
)
_AGGREGATE_WORDS = content_stems(
    "both all each two three four reports documents sources articles studies papers "
    "pages items results agree say confirm show state"
)
_MONEY_KEYS = frozenset({"pay", "fee", "refund", "balanc", "salar", "revenu", "credit", "debit"})


@dataclass(frozen=True)
class _Window:
    """One or more segments of an item matched as a unit, with its quantities."""

    seg: Segment
    parts: tuple[Segment, ...]
    quantities: tuple[tuple[num.Quantity, int], ...]  # (quantity, index of the part stating it)
    contiguous: bool


@dataclass(frozen=True)
class _Item:
    evidence_id: str
    text: str
    norm: str
    windows: tuple[_Window, ...]
    singles: tuple[_Window, ...]  # one segment each: for negation
    quantities: tuple[num.Quantity, ...]
    is_json: bool
    stems: frozenset[str]


def _quantities(parts: Sequence[Segment]) -> tuple[tuple[num.Quantity, int], ...]:
    out: list[tuple[num.Quantity, int]] = []
    for i, part in enumerate(parts):
        hint = bool(part.stems & _MONEY_KEYS) and part.extra != part.text
        out.extend((q, i) for q in num.extract(part.text, money_hint=hint))
    return tuple(out)


@lru_cache(maxsize=4096)
def _prepare(evidence_id: str, text: str) -> _Item:
    segments = segments_of(evidence_id, text)
    is_json = bool(segments) and segments[0].text.lstrip().startswith('"')
    singles = [_Window(s, (s,), _quantities((s,)), True) for s in segments]
    own = {id(w.seg): w.quantities for w in singles}

    def window(parts: Sequence[Segment], contiguous: bool) -> _Window:
        qs = tuple((q, k) for k, part in enumerate(parts) for q, _ in own[id(part)])
        return _Window(merge(parts), tuple(parts), qs, contiguous)

    windows = list(singles)
    if is_json:
        groups: dict[str, list[Segment]] = {}
        for s in segments:
            groups.setdefault(s.extra, []).append(s)
        for group in groups.values():
            if len(group) > 1:
                windows.append(window(group, False))
        if 1 < len(segments) <= 80 and len(groups) > 1:
            windows.append(window(segments, False))
    else:
        for a, b in itertools.pairwise(segments):
            windows.append(window((a, b), True))
    quantities = tuple(q for w in singles for q, _ in w.quantities)
    stems: frozenset[str] = frozenset().union(*(s.stems for s in segments))
    return _Item(
        evidence_id, text, normalise(text), tuple(windows), tuple(singles), quantities, is_json, stems
    )


@dataclass(frozen=True)
class _ClaimCues:
    stems: frozenset[str]
    quantities: tuple[num.Quantity, ...]
    entities: tuple[str, ...]
    negated_stems: frozenset[str]
    aggregated: bool
    money_words: frozenset[str]  # "refund", "paid"...: covered by a window stating the claim's amount
    money: tuple[num.Quantity, ...]


_REFERENCE = re.compile(r"\b(?:passages?|documents?|sources?|docs?|references?|refs?)\s*#?\s*$", re.I)


def _checked(q: num.Quantity, text: str) -> bool:
    """Whether a quantity of the claim is a figure to check.

    Not "(Passage 2)", which cites a source, nor the opening "One reviewer ..." / "One customer ...",
    which introduces an individual rather than counting (an opening "One year ..." still counts).
    """
    before = text[: max(text.find(q.text), 0)]
    if q.kind == "number" and _REFERENCE.search(before):
        return False
    return not (
        q.kind == "measure"
        and q.raw == 1
        and q.text.casefold().startswith("one ")
        and not before.strip()
        and q.unit not in {"time", "months", "mass", "length", "volume", "power"}
    )


def _cues(text: str) -> _ClaimCues:
    quantities = tuple(q for q in num.extract(text) if _checked(q, text))
    words_only = text
    for q in quantities:
        words_only = words_only.replace(q.text, " ")
    aggregated = bool(_AGGREGATE.search(text))
    stems = content_stems(words_only)
    if aggregated:
        stems -= _AGGREGATE_WORDS
    money = tuple(q for q in quantities if q.kind == "money")
    return _ClaimCues(
        frozenset(stems),
        quantities,
        tuple(ent.entities(words_only)),
        negated_stems(text) | negated_stems(" ".join(words(text))),  # "WiFi" and its parts "Wi Fi"
        aggregated,
        frozenset(stems & _MONEY_KEYS) if money else frozenset(),
        money,
    )


def _coverage(cues: _ClaimCues, window: _Window) -> float:
    if not cues.stems:
        return 1.0 if cues.quantities else 0.0
    matched = cues.stems & window.seg.stems
    if cues.money_words and any(_stated(q, window) for q in cues.money):
        matched |= cues.money_words
    return len(matched) / len(cues.stems)


def _stated(q: num.Quantity, window: _Window) -> bool:
    return any(num.matches(q, e) for e, _ in window.quantities)


def _quote(item: _Item, window: _Window, cues: _ClaimCues) -> tuple[Citation, ...]:
    if window.contiguous:
        start, end = window.seg.spans[0][0], window.seg.spans[-1][1]
        return (Citation(evidence_id=item.evidence_id, quote=item.text[start:end]),)
    used = {i for i, part in enumerate(window.parts) if part.stems & cues.stems}
    used |= {i for e, i in window.quantities if any(num.matches(q, e) for q in cues.quantities)}
    chosen = sorted(used)[:8] or [0]
    return tuple(
        Citation(evidence_id=item.evidence_id, quote=item.text[s:e])
        for i in chosen
        for s, e in window.parts[i].spans
    )


def _supporting_window(cues: _ClaimCues, item: _Item) -> _Window | None:
    """The best window of ``item`` that supports the claim, or None."""
    if any(not ent.present(e, item.norm) for e in cues.entities):
        return None
    best: tuple[float, int] | None = None
    chosen = None
    for w in item.windows:
        cov = _coverage(cues, w)
        if cov < SUPPORT_COVERAGE or not all(_stated(q, w) for q in cues.quantities):
            continue
        key = (cov, -len(w.parts))
        if best is None or key > best:
            best, chosen = key, w
    return chosen


def _combined_support(cues: _ClaimCues, items: Sequence[_Item]) -> list[tuple[_Item, _Window]] | None:
    """Two windows from two items that together cover the claim (a multi-hop answer), or None."""
    if len(items) < 2 or any(not any(ent.present(e, i.norm) for i in items) for e in cues.entities):
        return None
    bests: list[tuple[float, _Item, _Window]] = []
    for item in items:
        scored = [(_coverage(cues, w), -len(w.parts), w) for w in item.windows]
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
            if all(_stated(q, w1) or _stated(q, w2) for q in cues.quantities):
                if any(not (ent.present(e, i1.norm) or ent.present(e, i2.norm)) for e in cues.entities):
                    continue
                if _polarity_conflict(cues, [i1, i2]) is not None:
                    continue
                return [(i1, w1), (i2, w2)]
    return None


def _polarity_conflict(cues: _ClaimCues, items: Sequence[_Item]) -> tuple[_Item, _Window] | None:
    """Evidence stating the claim with the opposite polarity, or None.

    Prose: one sentence covering at least :data:`NEGATION_COVERAGE` of the claim's words, where
    a shared word is negated on one side only. JSON: the item covers that much of the claim, and
    the boolean pairs sharing most words with the claim all disagree with its polarity
    (``"RestaurantsReservations": false`` against "takes reservations").
    """
    if not cues.stems:
        return None
    best: tuple[float, _Item, _Window] | None = None
    for item in items:
        if item.is_json:
            if len(cues.stems & item.stems) / len(cues.stems) < NEGATION_COVERAGE:
                continue
            scored = [(len(cues.stems & w.seg.stems), w) for w in item.singles if w.seg.boolean]
            top = max((n for n, _ in scored), default=0)
            chosen = [w for n, w in scored if n == top and n > 0]
            if chosen and all(w.seg.negative != bool(cues.negated_stems & w.seg.stems) for w in chosen):
                cov = top / len(cues.stems) + 1.0  # a boolean pair is the most direct statement
                if best is None or cov > best[0]:
                    best = (cov, item, chosen[0])
            continue
        for w in item.singles:
            cov = _coverage(cues, w)
            if (
                cov >= NEGATION_COVERAGE
                and OfflineJudge._negation_flip(cues, item, w)
                and (best is None or cov > best[0])
            ):
                best = (cov, item, w)
    return (best[1], best[2]) if best else None


def _best_window(
    cues: _ClaimCues, items: Sequence[_Item], windows: str
) -> tuple[_Item, _Window, float] | None:
    """The window covering most of the claim; ``windows="polarity"`` skips multi-sentence windows."""
    best: tuple[float, int] | None = None
    chosen = None
    for item in items:
        for w in item.windows:
            if windows == "polarity" and w.contiguous and len(w.parts) > 1:
                continue  # polarity is read in one sentence (or one JSON object), never across two
            cov = _coverage(cues, w)
            key = (cov, -len(w.parts))
            if best is None or key > best:
                best, chosen = key, (item, w, cov)
    return chosen


def _verdict(
    claim: Claim,
    label: Label,
    rationale: str,
    citations: tuple[Citation, ...] = (),
    inadmissible: tuple[str, ...] = (),
) -> ClaimVerdict:
    return ClaimVerdict(
        claim_id=claim.claim_id,
        label=label,
        citations=citations,
        inadmissible_support=inadmissible,
        rationale=rationale,
        settled_by="offline",
    )


def _where(item: _Item, names: dict[str, str]) -> str:
    return names.get(item.evidence_id) or item.evidence_id


class OfflineJudge:
    """Deterministic, approximate judge over surface cues (see the module docstring for the rules).

    Satisfies :class:`auditor.verdicts.Judge`. Screened claims get no verdict. Never raises for odd
    text; never marks common knowledge (``allow_common_knowledge`` is accepted and ignored).
    """

    identity = JudgeIdentity(kind="offline", model=None, prompt_version=PROMPT_VERSION, approximate=True)

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        """Judge the non-screened ``claims`` of ``answer`` on ``admitted`` evidence."""
        return self.judge_sync(claims, admitted, excluded)

    def judge_sync(
        self, claims: Sequence[Claim], admitted: Sequence[Evidence], excluded: Sequence[Evidence] = ()
    ) -> list[ClaimVerdict]:
        """The same judgement without an event loop (the judge does no I/O)."""
        items = [_prepare(e.evidence_id, e.text) for e in admitted]
        names = {e.evidence_id: e.document_id or e.name or e.kind.value for e in (*admitted, *excluded)}
        out_items = [_prepare(e.evidence_id, e.text) for e in excluded]
        verdicts = []
        for claim in claims:
            if claim.screened:
                continue
            verdict = self._judge_one(claim, items, names)
            if verdict.label is not Label.SUPPORTED and out_items:
                cues = _cues(claim.text)
                inadmissible = tuple(
                    i.evidence_id for i in out_items if _supporting_window(cues, i) is not None
                )
                if inadmissible:
                    verdict = verdict.model_copy(update={"inadmissible_support": inadmissible})
            verdicts.append(verdict)
        return verdicts

    def _judge_one(self, claim: Claim, items: Sequence[_Item], names: dict[str, str]) -> ClaimVerdict:
        cues = _cues(claim.text)
        if not items:
            return _verdict(claim, Label.ABSENT, "no admitted evidence")
        if not cues.stems and not cues.quantities and not cues.entities:
            return _verdict(claim, Label.ABSENT, "nothing checkable in the claim")
        support = [(i, w) for i in items if (w := _supporting_window(cues, i)) is not None]
        if cues.aggregated and len({i.evidence_id for i, _ in support}) >= 2:
            cites = tuple(c for i, w in support for c in _quote(i, w, cues))
            where = ", ".join(_where(i, names) for i, _ in support)
            return _verdict(
                claim, Label.SUPPORTED, f"aggregated claim supported by {len(support)} items: {where}", cites
            )
        if support and not cues.aggregated:
            item, window = max(support, key=lambda iw: (_coverage(cues, iw[1]), -len(iw[1].parts)))
            if _polarity_conflict(cues, [item]) is None:
                return _verdict(
                    claim,
                    Label.SUPPORTED,
                    f"stated in {_where(item, names)} "
                    f"({_coverage(cues, window):.0%} of content words, all figures match)",
                    _quote(item, window, cues),
                )
        if not cues.aggregated and (combined := _combined_support(cues, items)) is not None:
            return _verdict(
                claim,
                Label.SUPPORTED,
                "stated across " + " and ".join(_where(i, names) for i, _ in combined) + " together",
                tuple(c for i, w in combined for c in _quote(i, w, cues)),
            )
        for e in cues.entities:
            if not any(ent.present(e, i.norm) for i in items):
                return _verdict(claim, Label.ABSENT, f"entity {e!r} not found in admitted evidence")
        contradiction = self._number_contradiction(claim, cues, items, names)
        if contradiction is not None:
            return contradiction
        missing = [
            q for q in cues.quantities if not any(num.matches(q, e) for i in items for e in i.quantities)
        ]
        if missing:
            return _verdict(
                claim, Label.ABSENT, f"{num.describe(missing[0])} found nowhere in admitted evidence"
            )
        conflict = _polarity_conflict(cues, items)
        if conflict is not None:
            item, window = conflict
            return _verdict(
                claim,
                Label.CONTRADICTED,
                f"{_where(item, names)} states the opposite polarity",
                _quote(item, window, cues),
            )
        if cues.aggregated and support:
            return _verdict(
                claim,
                Label.ABSENT,
                f"aggregated claim supported by only one item ({_where(support[0][0], names)})",
            )
        best = _best_window(cues, items, "windows")
        cov = best[2] if best else 0.0
        where = f" ({_where(best[0], names)})" if best else ""
        return _verdict(
            claim, Label.ABSENT, f"best evidence match covers {cov:.0%} of the claim's content words{where}"
        )

    @staticmethod
    def _negation_flip(cues: _ClaimCues, item: _Item, window: _Window) -> bool:
        """Whether words the claim shares with the window are negated in one and not the other.

        A shared word negated on both sides ("does not take reservations" against
        ``"RestaurantsReservations": false``) means the polarities agree.
        """
        shared = cues.stems & window.seg.stems
        claim_neg, ev_neg = cues.negated_stems & shared, window.seg.negated & shared
        return bool(claim_neg ^ ev_neg) and not claim_neg & ev_neg

    @staticmethod
    def _number_contradiction(
        claim: Claim, cues: _ClaimCues, items: Sequence[_Item], names: dict[str, str]
    ) -> ClaimVerdict | None:
        for q in cues.quantities:
            if any(num.matches(q, e) for i in items for e in i.quantities):
                continue
            best: tuple[float, int] | None = None
            found = None
            for item in items:
                for w in item.windows:
                    cov = _coverage(cues, w)
                    if cov < CONTRADICT_COVERAGE:
                        continue
                    rivals = [
                        (e, k)
                        for e, k in w.quantities
                        if num.comparable(q, e)
                        and not any(num.matches(other, e) for other in cues.quantities)
                    ]
                    if rivals and (key := (cov, -len(w.parts))) and (best is None or key > best):
                        best, found = key, (item, w, rivals)
            if found is not None:
                item, w, rivals = found
                if w.contiguous:
                    cites = _quote(item, w, cues)
                else:
                    cites = tuple(
                        Citation(evidence_id=item.evidence_id, quote=item.text[s:e])
                        for _, k in rivals[:3]
                        for s, e in w.parts[k].spans
                    )
                return _verdict(
                    claim,
                    Label.CONTRADICTED,
                    f"{num.describe(q)} differs from {num.describe(rivals[0][0])} in {_where(item, names)}",
                    cites,
                )
        return None

    def settle(self, claim: Claim, admitted: Sequence[Evidence]) -> ClaimVerdict | None:
        """A verdict only when the offline checks are certain, else None (for the LLM cascade).

        Certain means: the claim's text (normalised, trailing punctuation dropped) occurs verbatim,
        at word boundaries, in one admitted item, the claim has at least :data:`SETTLE_MIN_WORDS`
        words, is not an aggregated claim, and the evidence sentence around it carries no
        negation the claim lacks. Then ``supported``, quoting the exact evidence span. Absence is
        never certain ("14 days" may be "two weeks" to a reader) and neither is a contradiction.
        """
        if claim.screened:
            return None
        core = claim.text.strip().rstrip(".!;:,").strip()
        tokens = core.split()
        if len(tokens) < SETTLE_MIN_WORDS or _AGGREGATE.search(core):
            return None
        pattern = re.compile(
            r"(?<!\w)" + r"\s+".join(re.escape(t) for t in tokens) + r"(?!\w)", re.IGNORECASE
        )
        for e in admitted:
            m = pattern.search(e.text)
            if m is None:
                continue
            sentence = next(
                (
                    e.text[s:t]
                    for seg in _prepare(e.evidence_id, e.text).singles
                    for s, t in seg.seg.spans
                    if s <= m.start() and m.end() <= t
                ),
                m.group(),
            )
            if negated(sentence) and not negated(core):
                continue
            return _verdict(
                claim,
                Label.SUPPORTED,
                f"stated verbatim in {e.name or e.kind.value}",
                (Citation(evidence_id=e.evidence_id, quote=m.group()),),
            )
        return None
