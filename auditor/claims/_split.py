"""Splitting an answer into sentences, then into clause pieces, keeping exact character offsets.

Every function here works on ``(start, end)`` offsets into the original answer text and never
rewrites the text, so ``text[start:end]`` is always the piece as written. See ``docs/claims.md``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from auditor.claims._lexicon import (
    BASE_VERBS,
    MAYBE_END,
    NEVER_END,
    STARTERS,
    SUBJECT_START,
    content_words,
    has_verb,
    is_finite,
    words,
)
from auditor.claims._markers import MARKER, definition_line, find_markers, strip_markers

_BULLET = re.compile(
    r"[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*\u2022\u00b7\u2013\u2014+][ \t]+|\d{1,3}[.)][ \t]+|(?-i:[a-z])[.)][ \t]+"
    r"|[A-Z]\)[ \t]+|\(\d{1,3}\)[ \t]+|(?:step|passage)[ \t]+\d{1,3}[ \t]*[:.)][ \t]*)",
    re.IGNORECASE,
)
_TERMINATOR = re.compile(r"[.!?\u2026]+")
_SPACES = re.compile(r"[ \t]*")
_FOLLOW = re.compile(r"\s*(\S+)")
_CLOSERS = "\"'\u201d\u2019)]"
_TRAIL = ".,;:!*_\u2026 \t\r\n"
_LEAD = "*_,;: \t\r\n"


@dataclass(frozen=True)
class Piece:
    """One clause piece of a sentence, with the citation markers attached to it."""

    start: int
    end: int
    citations: tuple[str, ...]
    first: bool  # first piece of its sentence (lead-ins such as "I think" are only looked for there)
    heading: bool  # the whole line reads like a heading or list preamble (ends with ":")


_NESTING = re.compile('[()\\[\\]\u201c\u201d"]')  # what _depths reads: brackets and quotes


@dataclass(frozen=True)
class _Depths:
    """Nesting depth (parentheses, brackets, quotes) at each offset of a line, looked up by offset:
    only the nesting characters are walked (a walk over every character cost more than the rest of
    the rule decomposer)."""

    offsets: list[int]  # where the depth changes, ascending
    values: list[int]  # the depth from that offset on

    def __getitem__(self, pos: int) -> int:
        k = bisect.bisect_right(self.offsets, pos)
        return self.values[k - 1] if k else 0


def _depths(text: str, start: int, end: int) -> _Depths:
    """Nesting depth (parentheses, brackets, quotes) at each offset of ``text[start:end]``."""
    offsets: list[int] = []
    values: list[int] = []
    depth = 0
    in_quote = False
    balanced_quotes = text.count('"', start, end) % 2 == 0
    for m in _NESTING.finditer(text, start, end):
        ch = m.group()
        if ch in "([\u201c":
            depth += 1
        elif ch in ")]\u201d":
            if depth <= 0:
                continue
            depth -= 1
        elif balanced_quotes:
            in_quote = not in_quote
            depth += 1 if in_quote else -1
        else:
            continue
        offsets.append(m.start())
        values.append(max(depth, 0))
    return _Depths(offsets, values)


def _ascii_letter(char: str) -> bool:
    return ("a" <= char <= "z") or ("A" <= char <= "Z")


def _word_before(text: str, end: int, line_start: int) -> str | None:
    """What ``(?:[A-Za-z]\\.)*[A-Za-z]+$`` finds in ``text[line_start:end]``, read backwards from
    ``end`` (the regex tried every start of the line: quadratic in a line of many sentences)."""
    if end > line_start and text[end - 1] == "\n":
        end -= 1  # "$" also matches before a final newline
    start = end
    while start > line_start and _ascii_letter(text[start - 1]):
        start -= 1
    if start == end:
        return None
    while start - 2 >= line_start and text[start - 1] == "." and _ascii_letter(text[start - 2]):
        start -= 2  # an initial and its dot before: "U." of "U.S"
    return text[start:end]


def _ends_abbreviation(text: str, dot: int, line_start: int) -> str | None:
    """The abbreviation (lower case, inner dots kept) that the period at ``dot`` closes, if any."""
    word = _word_before(text, dot, line_start)
    if word is None:
        return None
    token = word.lower()
    if token in NEVER_END or token in MAYBE_END:
        return token
    if len(token) == 1 or "." in token:
        return token  # an initial ("J.") or a dotted form ("U.S.", "a.m.")
    return None


def _keeps_period(text: str, dot: int, start: int) -> bool:
    """A final period that is part of an abbreviation ("U.S.", "etc.") is kept in a claim."""
    token = _ends_abbreviation(text, dot, start)
    return token is not None and (token in NEVER_END or token in MAYBE_END or "." in token)


def _sentence_ends(text: str, start: int, end: int) -> list[int]:
    """Offsets (exclusive) where sentences end inside the line ``text[start:end]``."""
    ends: list[int] = []
    depth = _depths(text, start, end)
    for m in _TERMINATOR.finditer(text, start, end):
        stop = m.end()
        while stop < end and text[stop] in _CLOSERS:
            stop += 1
        if depth[stop - 1] > 0:
            continue
        if stop < end and not text[stop].isspace() and MARKER.match(text, stop, end) is None:
            continue  # "$80.00", "e.g.x", "file.txt"
        # citation markers right after the terminator belong to this sentence ("$80. [1]", "$80.【1】")
        while True:
            pos = _SPACES.match(text, stop, end).end()  # type: ignore[union-attr]
            marker = MARKER.match(text, pos, end)
            if marker is None:
                break
            stop = marker.end()
        follow = _FOLLOW.match(text, stop, end)
        if follow is None:
            ends.append(stop)
            continue
        nxt_word = follow.group(1)
        if nxt_word[0].islower():
            continue
        if m.group() == ".":
            abbrev = _ends_abbreviation(text, m.start(), start)
            if abbrev is not None:
                opener = re.sub(r"\W+$", "", nxt_word).lower()
                if abbrev in NEVER_END or opener not in STARTERS:
                    continue
        ends.append(stop)
    return ends


def sentences(text: str) -> list[tuple[int, int, bool]]:
    """``(start, end, heading)`` for each sentence: lines first, then terminators inside a line.

    Bullets, numbers, "Step 2:" and markdown heading marks at a line's start are left out of the
    sentence. ``heading`` is True for a line that ends with ":" and is short (a list preamble).
    """
    out: list[tuple[int, int, bool]] = []
    pos = 0
    for line in text.split("\n"):
        line_start, line_end = pos, pos + len(line)
        pos = line_end + 1
        if definition_line(line) is not None:
            continue  # "[^2]: https://...": what a marker names, not a claim
        bullet = _BULLET.match(text, line_start, line_end)
        s = bullet.end() if bullet else line_start
        if not text[s:line_end].strip():
            continue
        body = text[s:line_end].strip()
        heading = body.startswith("#") or (bullet is not None and text[line_start:s].strip().startswith("#"))
        heading = heading or (body.endswith(":") and len(words(body)) <= 12)
        for e in [*_sentence_ends(text, s, line_end), line_end]:
            if text[s:e].strip():
                out.append((s, e, heading and e == line_end))
            s = e
    return out


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Whitespace, leading connector punctuation and trailing punctuation/markers off a span.

    A closing "?" is kept (it marks a question); a period closing an abbreviation ("U.S.") is kept.
    Bracket citation markers at the end are trimmed off (they are listed in ``citations``).
    """
    while True:
        while start < end and text[start] in _LEAD:
            start += 1
        while end > start and text[end - 1] in _TRAIL:
            if text[end - 1] == "." and _keeps_period(text, end - 1, start):
                break
            end -= 1
        tail = None
        for m in MARKER.finditer(text, start, end):
            if m.end() == end:
                tail = m
        if tail is None or tail.start() == start:
            return start, end
        end = tail.start()


_CONNECTOR = re.compile(
    r";\s+(?:(?:and|but)\s+)?"
    r"|,\s+(?:and|but|yet|while|whereas|although|though)\s+"
    r"|\s+(?:and|but|whereas)\s+(?:also\s+|then\s+)?",
    re.IGNORECASE,
)
_AGGREGATE = re.compile(
    r"(?:\w+\s*,\s*)?(?:both|all|each|neither|several|multiple|the\s+(?:two|three|four|five))\s+(?:of\s+the\s+)?"
    r"(?:\w+\s+){0,2}?(?:reports?|sources?|documents?|passages?|articles?|studies|tools?|results?|records?|"
    r"pages?|reviews?)\s+(?:\w+\s+)?(?:agree|confirm|state|say|show|report|indicate|mention|note|list|cite|"
    r"suggest)",
    re.IGNORECASE,
)
_SUBORDINATE_OPENING = re.compile(r"(?:although|though|even though|whereas|while)\b", re.IGNORECASE)


def _starts_clause(left: str, fragment: str) -> bool:
    """Whether ``fragment`` (the text after a bare "and"/"but") opens a new clause or predicate.

    A new predicate: a finite verb first ("... and takes reservations"), or a base-form verb after a
    left side that is itself an instruction ("Combine ... and bring it to a boil"). A new clause: a
    subject word, then a finite verb within five words and before any comma ("... and it was issued").
    """
    ws = words(fragment)
    left_ws = words(left)
    if not ws or len(left_ws) < 3:
        return False
    if ws[0] in BASE_VERBS:
        return left_ws[0] in BASE_VERBS
    if is_finite(ws[0]) and not ws[0].endswith("ed"):
        return True
    if ws[0] in SUBJECT_START or fragment.lstrip()[:1].isupper():
        head = words(re.split(r"[,;:(]", fragment, maxsplit=1)[0])
        return any(is_finite(w) for w in head[1:6])
    return False


def clause_cuts(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split one sentence into clause pieces at coordinating connectors (see docs/claims.md).

    An aggregated claim ("Both reports agree that X and Y") stays whole: it is judged against the
    whole admitted set, and its parts would lose the attribution.
    """
    if _AGGREGATE.match(text, start, end):
        return [(start, end)]
    depth = _depths(text, start, end)
    cands: list[tuple[int, int, str]] = []
    opening = _SUBORDINATE_OPENING.match(text, start, end)
    if opening is not None:
        comma = next((i for i in range(opening.end(), end) if text[i] == "," and depth[i] == 0), None)
        if comma is not None:
            cands.append((comma, comma + 1, "sub"))
    for m in _CONNECTOR.finditer(text, start, end):
        if depth[m.start()] == 0:
            kind = "semi" if m.group().startswith(";") else "comma" if m.group().startswith(",") else "bare"
            cands.append((m.start(), m.end(), kind))
    cands.sort()
    pieces: list[tuple[int, int]] = []
    cur = start
    for i, (c_start, c_end, kind) in enumerate(cands):
        if c_start < cur:
            continue
        nxt = cands[i + 1][0] if i + 1 < len(cands) else end
        left, right = text[cur:c_start], text[c_end : max(nxt, c_end)]
        if kind == "semi":
            ok = bool(content_words(left)) and bool(content_words(right))
        elif kind == "bare":
            ok = has_verb(left) and _starts_clause(left, right)
        else:
            ok = has_verb(left) and has_verb(right)
        if ok:
            pieces.append((cur, c_start))
            cur = c_end
    pieces.append((cur, end))
    return pieces


def split_answer(text: str) -> list[Piece]:
    """All clause pieces of ``text``, in order, trimmed, with citation markers attached.

    A marker attaches to the piece it follows (or sits in). When every marker of a sentence sits at
    its end (nothing but punctuation and markers after it), they attach to every piece of it.
    """
    out: list[Piece] = []
    for s_start, s_end, heading in sentences(text):
        markers = find_markers(text, s_start, s_end)
        raw = [trim(text, a, b) for a, b in clause_cuts(text, s_start, s_end)]
        spans = [(a, b) for a, b in raw if b > a and not _only_markers(text, a, b)]
        if not spans:
            continue
        cites: list[list[str]] = [[] for _ in spans]
        terminal = [m.start() >= spans[-1][1] and _only_markers(text, m.end(), s_end) for m in markers]
        inline = not all(terminal)  # a sentence whose markers all sit at its end shares them
        for m, is_terminal in zip(markers, terminal, strict=True):
            owners = (
                range(len(spans))
                if is_terminal and not inline
                else [max((k for k, (a, _) in enumerate(spans) if a <= m.start()), default=0)]
            )
            for k in owners:
                if m.group() not in cites[k]:
                    cites[k].append(m.group())
        for k, (a, b) in enumerate(spans):
            out.append(Piece(a, b, tuple(cites[k]), first=k == 0, heading=heading))
    return out


def _only_markers(text: str, start: int, end: int) -> bool:
    rest = strip_markers(text[start:end])
    return not re.sub(r"[\W_]+", "", rest)
