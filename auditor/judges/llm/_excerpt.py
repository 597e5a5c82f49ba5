"""Evidence too long for the LLM judge's budget, cut to the windows most likely to hold the claims.

A blind clip (the first N characters of each item) hides whatever sits at the end of a long tool
result, however relevant. Instead, an item that does not fit is cut into windows of at most
:data:`WINDOW_CHARS` characters (fewer when the budget is small) (ending at a line break, the end of a JSON record, a sentence end, a comma or
a space when one is near), every window is scored against every query (the claims, or the answer's sentences in
fused mode) with BM25 over the offline judge's stems (:mod:`auditor.judges.reading._lexical`) plus the
numbers, and the budget is filled query by query in turn, each query's best window first, so every
claim gets its best evidence before any claim gets its second best. What budget is left then goes
to the remaining windows in document order. The shown windows keep their order in the prompt, with
a marker for each gap, so any quote from a window is an exact substring of the item.

Why not ``rank_bm25`` or ``bm25s``: the first has had no release since 2022, the second brings a
sparse-matrix index and its own tokeniser for what is, per answer, a few hundred windows; both would
need the judge's stems fed in anyway, which is all this module does besides the 10-line formula.

:class:`Fitted` keeps what was left out, so :meth:`Fitted.left_out_for` can say, for each claim,
which character ranges of which item the judge never saw and whether any of them shares a word
with the claim (the judge then cannot assert ``absent``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from auditor.evidence import Evidence
from auditor.judges._verdicts import LeftOut
from auditor.judges.llm._prompts import EvidenceIn
from auditor.judges.reading import content_stems, words

WINDOW_CHARS = 800
MIN_WINDOW = 80  # windows shrink with a small budget (an eighth of it), never below this
GAP_MARK = "\n[... {n} characters not shown ...]\n"
# Where a window may end, best first: a line, a JSON record ("}, {"), a sentence, a comma, a space.
_BREAKS = tuple(re.compile(p) for p in (r"\n", r"\},\s?", r"[.!?;]\s", r",\s?", r"\s"))
_K1, _B = 1.2, 0.75


def terms(text: str) -> frozenset[str]:
    """Retrieval terms: content stems and numbers (``1,250.00`` and ``1250.00`` alike)."""
    numbers = {w.replace(",", "") for w in words(text) if w[0].isdigit()}
    return frozenset(content_stems(text) | numbers)


def cut(text: str, size: int = WINDOW_CHARS) -> list[tuple[int, int]]:
    """Contiguous windows covering ``text``, each at most ``size`` characters, ending at a natural
    break (line, sentence, comma, space) found in its second half when there is one."""
    spans: list[tuple[int, int]] = []
    pos, n = 0, len(text)
    while pos < n:
        end = min(n, pos + size)
        if end < n:
            for pattern in _BREAKS:
                ends = [m.end() for m in pattern.finditer(text, pos + size // 2, end)]
                if ends:
                    end = ends[-1]
                    break
        spans.append((pos, end))
        pos = end
    return spans


@dataclass(frozen=True)
class _Window:
    evidence_id: str
    start: int
    end: int
    terms: frozenset[str]


def _bm25(query: frozenset[str], windows: Sequence[_Window]) -> list[float]:
    """BM25 with binary term frequency (windows are short) over ``windows`` as the corpus."""
    if not windows:
        return []
    df: dict[str, int] = {}
    for w in windows:
        for t in w.terms & query:
            df[t] = df.get(t, 0) + 1
    n = len(windows)
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    avg = sum(w.end - w.start for w in windows) / n
    scores = []
    for w in windows:
        norm = 1 - _B + _B * (w.end - w.start) / avg
        scores.append(sum(idf[t] * (_K1 + 1) / (1 + _K1 * norm) for t in w.terms & query))
    return scores


@dataclass(frozen=True)
class Fitted:
    """The prompt's evidence and what was left out of it (per item: the windows not shown)."""

    admitted: tuple[EvidenceIn, ...]
    excluded: tuple[EvidenceIn, ...]
    totals: dict[str, int] = field(default_factory=dict)  # item id -> its length in characters
    hidden: dict[str, list[_Window]] = field(default_factory=dict)  # item id -> windows not shown

    @property
    def clipped(self) -> set[str]:
        return set(self.hidden)

    def left_out_for(self, claim_text: str) -> tuple[LeftOut, ...]:
        """What the judge did not see, item by item, and whether it shares a word with the claim."""
        wanted = terms(claim_text)
        out = []
        for eid, windows in self.hidden.items():
            ranges: list[tuple[int, int]] = []
            for w in windows:  # in document order: merge adjacent windows into one range
                if ranges and ranges[-1][1] == w.start:
                    ranges[-1] = (ranges[-1][0], w.end)
                else:
                    ranges.append((w.start, w.end))
            out.append(
                LeftOut(
                    evidence_id=eid,
                    ranges=tuple(ranges),
                    chars=sum(e - s for s, e in ranges),
                    total=self.totals[eid],
                    shares_words=any(w.terms & wanted for w in windows),
                )
            )
        return tuple(out)


def _share(lengths: list[int], budget: int) -> list[int]:
    """Water-filling: short items keep all their text, long ones share what remains equally."""
    allowed = [0] * len(lengths)
    remaining = max(0, budget)
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for pos, i in enumerate(order):
        fair = remaining // (len(order) - pos)
        allowed[i] = min(lengths[i], fair)
        remaining -= allowed[i]
    return allowed


def _select(windows: list[_Window], queries: Sequence[frozenset[str]], budget: int) -> set[int]:
    """Indexes of the windows shown: each query's next best in turn, then document order."""
    ranked = []
    for query in queries:
        scores = _bm25(query, windows)
        ranked.append([i for i in sorted(range(len(windows)), key=lambda i: -scores[i]) if scores[i] > 0])
    chosen: set[int] = set()
    left = budget

    def take(i: int) -> None:
        nonlocal left
        cost = windows[i].end - windows[i].start  # the budget counts evidence text, not gap markers
        if i not in chosen and cost <= left:
            chosen.add(i)
            left -= cost

    depth = 0
    while any(depth < len(r) for r in ranked):
        for r in ranked:
            if depth < len(r):
                take(r[depth])
        depth += 1
    for i in range(len(windows)):
        take(i)
    return chosen


def _render(text: str, windows: list[_Window], shown: set[int]) -> str:
    parts: list[str] = []
    gap = 0
    for i, w in enumerate(windows):
        if i in shown:
            if gap:
                parts.append(GAP_MARK.format(n=gap))
                gap = 0
            parts.append(text[w.start : w.end])
        else:
            gap += w.end - w.start
    if gap:
        parts.append(GAP_MARK.format(n=gap))
    return "".join(parts)


def fit_evidence(
    admitted: Sequence[Evidence],
    excluded: Sequence[Evidence],
    budget_chars: int,
    queries: Sequence[str],
) -> Fitted:
    """Prompt items within ``budget_chars`` of text, admitted served first; a long item shows the
    windows that best match ``queries`` (the claims, or the answer's sentences)."""
    hidden_by_id: dict[str, list[_Window]] = {}
    totals: dict[str, int] = {}
    query_terms = [t for t in (terms(q) for q in queries) if t]

    def convert(items: Sequence[Evidence], budget: int) -> tuple[tuple[EvidenceIn, ...], int]:
        allowed = _share([len(e.text) for e in items], budget)
        long = [(e, keep) for e, keep in zip(items, allowed, strict=True) if keep < len(e.text)]
        pool = sum(keep for _, keep in long)
        size = max(MIN_WINDOW, min(WINDOW_CHARS, pool // 8))  # a small budget is spent in small windows
        windows = [
            _Window(e.evidence_id, s, t, terms(e.text[s:t])) for e, _ in long for s, t in cut(e.text, size)
        ]
        shown = _select(windows, query_terms, pool)
        texts: dict[str, str] = {}
        for e, _ in long:
            own = [(i, w) for i, w in enumerate(windows) if w.evidence_id == e.evidence_id]
            mine = [w for _, w in own]
            texts[e.evidence_id] = _render(e.text, mine, {k for k, (i, _) in enumerate(own) if i in shown})
            if hidden := [w for i, w in own if i not in shown]:
                hidden_by_id[e.evidence_id] = hidden
                totals[e.evidence_id] = len(e.text)
        out = tuple(
            EvidenceIn(
                evidence_id=e.evidence_id,
                kind=e.kind.value,
                name=e.name,
                text=texts.get(e.evidence_id, e.text),
                clipped=e.evidence_id in texts,
            )
            for e in items
        )
        return out, budget - sum(allowed)

    admitted_in, left = convert(admitted, budget_chars)
    excluded_in, _ = convert(excluded, left)
    return Fitted(admitted_in, excluded_in, totals, hidden_by_id)
