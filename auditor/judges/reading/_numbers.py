"""Quantities for the offline judge: numbers, amounts, percentages, dates, times and units.

Every quantity is normalised so that different spellings of one fact compare equal:
``$80`` == ``80.00 USD`` == ``80 dollars``; ``March 3, 2025`` == ``2025-03-03``; ``14 days`` ==
``two weeks``; ``1,200`` == ``1200``; ``11 am`` == ``11:00``. :func:`matches` says whether two
quantities state the same value; :func:`comparable` says whether they measure the same kind of
thing (so that a different value is a contradiction rather than an unrelated number).
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from functools import lru_cache

from auditor.judges.reading._lexical import stem
from auditor.judges.reading._units import (
    CURRENCY_SYMBOLS,
    CURRENCY_WORDS,
    MONTH_ABBR,
    MONTH_RE,
    MONTHS,
    NUMBER_WORDS,
    SCALE,
    UNITS,
)
from auditor.judges.reading._vocabulary import STOPWORDS


@dataclass(frozen=True)
class Quantity:
    """One normalised quantity.

    ``kind`` is ``money``, ``percent``, ``date``, ``clock``, ``measure`` or ``number``. ``value`` is
    in the family's base unit (days for durations, months for months/years); ``raw`` is the number
    as written (``24`` for "24-month"); dates use ``year``/``month``/``day`` with None for a part
    not stated.
    """

    kind: str
    value: float
    raw: float
    unit: str = ""
    text: str = ""
    year: int | None = None
    month: int | None = None
    day: int | None = None


_RANK = re.compile(r"\d+(?:st|nd|rd|th)", re.I)
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "iso",
        re.compile(r"(?<![\w-])(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2})?\S*)?(?![\w-])"),
    ),
    ("slash", re.compile(r"(?<![\w/])(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\w/])")),
    (
        "mdy_range",  # "April 18-26", "April 18 and 19", "April 18 to 26, 2025": two dates
        re.compile(
            rf"(?<![\w])({MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|\u2013|to|through|until|and|&)\s*"
            rf"(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?(?![\w:%]|\.\d)",
            re.I,
        ),
    ),
    (
        "mdy",
        re.compile(rf"(?<![\w])({MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?(?![\w])", re.I),
    ),
    (
        "dmy",
        re.compile(
            rf"(?<![\w])(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTH_RE})(?:,?\s+(\d{{4}}))?(?![\w])",
            re.I,
        ),
    ),
    ("my", re.compile(rf"(?<![\w])({MONTH_RE})\s+(?:of\s+)?(\d{{4}})(?![\w])", re.I)),
    ("clock", re.compile(r"(?<![\w:.])(\d{1,2}):(\d{1,2})(?::\d{2})?(?:\s*([ap])\.?m\.?)?(?![\w:])", re.I)),
    ("ampm", re.compile(r"(?<![\w:.])(\d{1,2})\s*([ap])\.?m\b\.?", re.I)),
    (
        "money",
        re.compile(
            rf"(?:(US\$|[$€£¥₹])\s?|\b(USD|EUR|GBP|CAD|AUD|INR|JPY)\s?)({_NUM})(?:\s?(thousand|million|billion|"
            rf"trillion|bn|mn|[kmb])\b)?",
            re.I,
        ),
    ),
    (
        "number",
        re.compile(
            rf"(?<![\w.])(?<![A-Za-z]-)({_NUM})(?:st|nd|rd|th)?(?:\s?(%|percent\b|per cent\b|thousand\b|million\b|"
            rf"billion\b|trillion\b|bn\b))?(?:[\s-]?([A-Za-z€$£]+(?:/[A-Za-z]+)?))?",
            re.I,
        ),
    ),
    (
        "words",
        re.compile(
            r"\b((?:a\s+)?(?:"
            + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
            + r")(?:[\s-](?:"
            + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
            + r"))?)(?:\s(thousand|million|billion))?[\s-]"
            r"([A-Za-z]+)",
            re.I,
        ),
    ),
]


# Durations written with an article ("an hour", "half an hour", "a fortnight"): read in evidence only,
# where they state the "60 minutes" or "1 hour" of a claim; a claim's "a year ago" is no figure to find.
_ARTICLE_DURATION = re.compile(
    r"\b(half\s+an?|an?)\s+(second|minute|hour|day|week|fortnight|month|year|decade)\b", re.I
)


_DIGIT = re.compile(r"\d")
#: The patterns that can match a text without a digit, and the article durations (evidence only).
_WORDS_ONLY = [(kind, pattern) for kind, pattern in _PATTERNS if kind == "words"]
_ARTICLE = [("article", _ARTICLE_DURATION)]

_MONTH_STARTS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: What patterns cannot match without: one of these strings in the lower-cased text. Each regex
#: starts with a look-behind, so ``re`` tries it at every position of the text; a few substring
#: tests (in C) rule most of them out of a sentence first. ASCII texts only: ``re.I`` also folds
#: "\u0131", "\u017f" and the Kelvin sign, which ``str.lower`` does not (and the other currency signs are
#: not ASCII).
_NEEDS: dict[tuple[str, ...], frozenset[str]] = {
    ("-",): frozenset({"iso"}),
    ("/",): frozenset({"slash"}),
    _MONTH_STARTS: frozenset({"mdy_range", "mdy", "dmy", "my"}),
    (":",): frozenset({"clock"}),
    ("am", "pm", "a.m", "p.m"): frozenset({"ampm"}),
    ("$", "usd", "eur", "gbp", "cad", "aud", "inr", "jpy"): frozenset({"money"}),
    tuple(NUMBER_WORDS): frozenset({"words"}),
    ("second", "minute", "hour", "day", "week", "fortnight", "month", "year", "decade"): frozenset(
        {"article"}
    ),
}


def _candidates(text: str, patterns: list[tuple[str, re.Pattern[str]]]) -> list[tuple[str, re.Pattern[str]]]:
    """``patterns`` but those that cannot match ``text`` (the same matches, in the same order)."""
    if not text.isascii():
        return patterns
    found = text.lower().__contains__
    ruled_out: set[str] = set()
    for needs, kinds in _NEEDS.items():
        if not any(map(found, needs)):
            ruled_out |= kinds
    return [(kind, pattern) for kind, pattern in patterns if kind not in ruled_out]


def _month(text: str) -> int:
    key = text.casefold().rstrip(".")
    return MONTHS.get(key) or MONTH_ABBR[key[:4] if key.startswith("sept") else key[:3]]


def _float(text: str) -> float:
    return float(text.replace(",", ""))


def _unit_quantity(value: float, word: str, text: str) -> Quantity | None:
    lowered = word.casefold()
    if lowered in CURRENCY_WORDS:
        cur = CURRENCY_WORDS[lowered]
        if cur == "cent":
            return Quantity("money", value / 100, value / 100, "USD", text)
        return Quantity("money", value, value, cur, text)
    if lowered in STOPWORDS or lowered in MONTHS:
        return None
    unit = stem(lowered)
    if unit in UNITS:
        family, factor = UNITS[unit]
        return Quantity("measure", value * factor, value, family, text)
    if len(lowered) == 1 and lowered not in UNITS:
        return None
    return Quantity("measure", value, value, unit, text)


def extract(text: str, money_hint: bool = False, evidence: bool = False) -> list[Quantity]:
    """All quantities in ``text``, each span counted once (dates before times before amounts).

    ``money_hint`` reads a bare number as an amount (a JSON value under an ``amount`` key).
    ``evidence`` also reads durations written with an article ("an hour" is 1 hour).
    """
    return list(_extract(text, money_hint, evidence))


@lru_cache(maxsize=2048)
def _extract(text: str, money_hint: bool, evidence: bool) -> tuple[Quantity, ...]:
    # Cached: one answer's texts are read several times (a claim's cues, the same words quoted back
    # by a verdict, the cascade's check and the judge's); a Quantity is frozen, so sharing is safe.
    taken: list[tuple[int, int]] = []  # spans already read, sorted and disjoint
    out: list[Quantity] = []
    # Every pattern but the number words (and the article durations) needs a digit: a text without
    # one (most claims and sentences) is read by those alone, in the same order.
    digits = _DIGIT.search(text) is not None
    patterns = _candidates(text, (_PATTERNS if digits else _WORDS_ONLY) + (_ARTICLE if evidence else []))
    for kind, pattern in patterns:
        # One pattern's matches come in order and never overlap, so a single walk along the
        # sorted spans decides each one: the whole extraction is linear in the text.
        fresh: list[tuple[int, int]] = []
        k = 0
        for m in pattern.finditer(text):
            start, end = m.span()
            while k < len(taken) and taken[k][1] <= start:
                k += 1
            if k < len(taken) and taken[k][0] < end:
                continue
            if kind == "mdy_range":
                dates = _range(m)
                if not dates:
                    continue
                out.extend(dates)
                fresh.append((start, end))
                continue
            q = _build(kind, m, money_hint)
            if q is None:
                continue
            out.append(q)
            fresh.append((start, end))
        if fresh:
            taken = list(heapq.merge(taken, fresh))
    return tuple(out)


def clear_cache() -> None:
    """Forget the cached readings (a benchmark row starts as a fresh process would)."""
    _extract.cache_clear()


def _range(m: re.Match[str]) -> list[Quantity]:
    """Both dates of "April 18-26" / "April 18 and 19" (the second day takes the first's month)."""
    month_text, first, second, year = m.groups()
    d1, d2 = int(first), int(second)
    if not (1 <= d1 <= 31 and 1 <= d2 <= 31) or (month_text.casefold() == "may" and not year):
        return []
    month, y = _month(month_text), int(year) if year else None
    raw = m.group()
    return [
        Quantity("date", 0, 0, text=raw, year=y, month=month, day=d1),
        Quantity("date", 0, 0, text=raw, year=y, month=month, day=d2),
    ]


def _build(kind: str, m: re.Match[str], money_hint: bool) -> Quantity | None:
    g = m.groups()
    raw = m.group()
    if kind == "iso":
        y, mo, d = int(g[0]), int(g[1]), int(g[2])
        return (
            Quantity("date", y * 10000 + mo * 100 + d, 0, text=raw, year=y, month=mo, day=d)
            if 1 <= mo <= 12
            else None
        )
    if kind == "slash":
        mo, d, y = int(g[0]), int(g[1]), int(g[2])
        y = y + 2000 if y < 100 else y
        return (
            Quantity("date", 0, 0, text=raw, year=y, month=mo, day=d) if 1 <= mo <= 12 and d <= 31 else None
        )
    if kind == "mdy" or kind == "dmy":
        month_text, day_text = (g[0], g[1]) if kind == "mdy" else (g[1], g[0])
        d = int(day_text)
        if not 1 <= d <= 31 or (month_text == "may" and not g[2]):  # "may 3" is more often a verb
            return None
        return Quantity(
            "date", 0, 0, text=raw, year=int(g[2]) if g[2] else None, month=_month(month_text), day=d
        )
    if kind == "my":
        return Quantity("date", 0, 0, text=raw, year=int(g[1]), month=_month(g[0]))
    if kind == "clock":
        h, mi = int(g[0]), int(g[1])
        if g[2] and g[2].casefold() == "p" and h < 12:
            h += 12
        return Quantity("clock", h * 60 + mi, h * 60 + mi, text=raw) if h < 24 and mi < 60 else None
    if kind == "ampm":
        h = int(g[0]) % 12 + (12 if g[1].casefold() == "p" else 0)
        return Quantity("clock", h * 60, h * 60, text=raw)
    if kind == "money":
        cur = CURRENCY_SYMBOLS.get(g[0] or "", "USD") if g[0] else g[1].upper()
        value = _float(g[2]) * (SCALE[g[3].casefold()] if g[3] else 1)
        return Quantity("money", value, value, cur, raw)
    if kind == "number":
        value = _float(g[0])
        if _RANK.fullmatch(m.string, m.start(1), min(m.end(1) + 2, len(m.string))) and 1 <= value <= 10:
            return None  # a rank, "2nd": read as the word "second" (``_lexical.spelled``), not a figure
        scale = (g[1] or "").casefold()
        if scale in ("%", "percent", "per cent"):
            return Quantity("percent", value, value, text=f"{g[0]}%")
        if scale:
            value *= SCALE[scale]
        if g[2]:
            unit_q = _unit_quantity(value, g[2], raw)
            if unit_q is not None:
                return unit_q
        return Quantity("money" if money_hint else "number", value, value, "", m.group(1))
    if kind == "article":
        value = 0.5 if g[0].casefold().startswith("half") else 1.0
        return _unit_quantity(value, g[1], raw)
    # number words: only when a unit or noun follows ("two weeks", "three reports")
    phrase = re.sub(r"^a\s+", "", g[0].casefold())
    parts = re.split(r"[\s-]", phrase)
    value = float(sum(NUMBER_WORDS[p] for p in parts if p != "hundred") or 1) * (
        100 if "hundred" in parts else 1
    )
    if g[1]:
        value *= SCALE[g[1].casefold()]
    return _unit_quantity(value, g[2], raw)


def matches(claim: Quantity, ev: Quantity) -> bool:
    """Whether an evidence quantity states the claim quantity (kinds may differ where harmless)."""
    if claim.kind == "date" or ev.kind == "date":
        if claim.kind == ev.kind == "date":
            pairs = [(claim.year, ev.year), (claim.month, ev.month), (claim.day, ev.day)]
            shared = [(a, b) for a, b in pairs if a is not None and b is not None]
            return bool(shared) and all(a == b for a, b in shared)
        other = claim if ev.kind == "date" else ev
        date = ev if ev.kind == "date" else claim
        return other.kind == "number" and date.year is not None and other.value == date.year
    if claim.kind == "clock" or ev.kind == "clock":
        return claim.kind == ev.kind and claim.value == ev.value
    if claim.kind == "money" and ev.kind == "money" and claim.unit and ev.unit and claim.unit != ev.unit:
        return False
    if claim.kind == "measure" and ev.kind == "measure" and claim.unit == ev.unit:
        return abs(claim.value - ev.value) <= 1e-9 * max(1.0, abs(claim.value))
    return _close(claim.raw, ev.raw) or _close(claim.value, ev.value)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))


def comparable(claim: Quantity, ev: Quantity) -> bool:
    """Whether the two quantities measure the same kind of thing (a different value then conflicts)."""
    if claim.kind != ev.kind:
        return False
    if claim.kind == "date":
        return (
            claim.month is not None and ev.month is not None and claim.day is not None and ev.day is not None
        ) or (claim.day is None and ev.day is None and claim.year is not None and ev.year is not None)
    if claim.kind == "measure":
        return claim.unit == ev.unit
    return claim.kind in ("money", "percent", "clock")  # another currency is another amount


_FAMILIES = frozenset(family for family, _ in UNITS.values())


def is_unit(q: Quantity) -> bool:
    """Whether a measure is in a unit family (time, length...) rather than a count of some noun."""
    return q.unit in _FAMILIES


def describe(q: Quantity) -> str:
    """A short display form for rationales."""
    if q.kind == "money":
        return f"{q.value:.2f}"
    return q.text.strip() or f"{q.value:g}"
