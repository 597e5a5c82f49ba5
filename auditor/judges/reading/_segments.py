"""Evidence segments for the offline judge: sentences of prose, ``"key": value`` pairs of JSON.

A :class:`Segment`'s spans are character offsets into the item's own text, so every quote the
offline judge produces is an exact substring of the evidence. A JSON pair also carries the key path
of its enclosing objects as extra words, so "refund of $80.00" can meet ``"amount": "$80.00"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from auditor.judges.reading._lexical import compound_stems, content_stems, negated_stems, stated, words
from auditor.judges.reading._vocabulary import CODES, SCHEDULE_WORDS, WEEKDAYS


@dataclass(frozen=True)
class Segment:
    """A piece of one evidence item: one or more spans of its text, matched as a unit.

    ``extra`` carries words that are not in the spans themselves but describe them (the key path
    of a JSON pair's enclosing objects).
    """

    evidence_id: str
    spans: tuple[tuple[int, int], ...]
    text: str
    extra: str = ""
    negative: bool = False  # a JSON pair whose value is false / "no" / null
    stems: frozenset[str] = field(default=frozenset())
    negated: frozenset[str] = field(default=frozenset())  # stems under negation
    boolean: bool = False  # a JSON pair whose value is true / false / "yes" / "no"


_SENTENCE_END = re.compile(
    r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9$\u20ac\u00a3])"  # ". The", ". 3", '." He'
    r"|(?<=[.!?])[ \t]*\n\s*"  # end of sentence at a line break, whatever case follows
    r"|(?<= [.!?]) +"  # tokenised text: "word . next"
    r"|\n\s*\n|\n(?=\s*[-*\u2022\[]|\s*\d+[.)]\s)"  # blank lines, list items
)


# Titles and abbreviations a capitalised name follows without ending the sentence.
_ABBREVIATIONS = frozenset(
    """dr mr mrs ms prof st sr jr sen rep gov gen col lt capt det sgt rev hon mt ft no nos fig figs vol
    pp approx cf vs v dept est al ex op ed eds pt ch sec art insp supt cmdr adm maj pres""".split()  # noqa: SIM905
)
_LAST_WORD = re.compile(r"([A-Za-z]+)\.[\"')\]]*$")


_OPENERS = frozenset(
    """the this that these those it its he she they we i you there here his her their our my a an in on
    at for if so but and as however also after before when while then thus""".split()  # noqa: SIM905
)
_NEXT_WORD = re.compile(r"[\"'(\[]?([A-Za-z]+)")


def _after_abbreviation(text: str, end: int, start: int, following: int) -> bool:
    """Whether the period before ``end`` closes a title or an initial rather than a sentence
    (an initial before a typical sentence opener, "Plan B. Then", still ends one)."""
    m = _LAST_WORD.search(text, max(start, end - 12), end)
    if m is None:
        return False
    word = m.group(1)
    before = text[m.start() - 1] if m.start() > 0 else " "
    if before.isalpha() or before == ".":
        return False  # "U.S." and the like end sentences as often as not
    if word.casefold() in _ABBREVIATIONS:
        return True
    nxt = _NEXT_WORD.match(text, following)
    return len(word) == 1 and word.isupper() and not (nxt and nxt.group(1).casefold() in _OPENERS)


def sentence_spans(text: str, base: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans (start, end) of ``text[base:end]``, stripped of surrounding whitespace."""
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = base
    for match in _SENTENCE_END.finditer(text, base, stop):
        if _after_abbreviation(text, match.start(), pos, match.end()):
            continue  # "Det. Kelly Ort", "F. Scott Fitzgerald", "Dr. Smith": one sentence
        spans.append((pos, match.start()))
        pos = match.end()
    spans.append((pos, stop))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


_JSON_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}\[\]:,]', re.DOTALL
)
# For a text cut short: a string may run to the end, so its content is never read as tokens.
_CUT_JSON_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}\[\]:,]', re.DOTALL
)
_JSON_START = re.compile(r'\s*(?:\{\s*["}]|\[\s*(?:["{\[\]\d-]|true|false|null))')
_COLON = re.compile(r"\s*:")
_FALSY = {"false", '"no"', '"none"'}  # null means "not known", never "no"
_BOOLEAN = _FALSY | {"true", '"yes"'}


def json_pairs(text: str, cut: bool = False) -> list[tuple[tuple[str, ...], int, int, int, int]] | None:
    """Scalar ``"key": value`` pairs of a JSON-ish text, or None when it does not look like JSON.

    Returns (key path, pair start, pair end, value start, value end) per scalar; scalars inside an
    array are reported with the array's key path and their own span. An empty array under a key
    (``"payments": []``) is reported as a pair too, its value ``[]``: it states that there are none.
    ``cut`` says the text is the beginning of a longer one, so its last string may be unterminated.
    """
    if not _JSON_START.match(text):
        return None
    pairs: list[tuple[tuple[str, ...], int, int, int, int]] = []
    path: list[str] = []
    stack: list[str | None] = []  # key that opened each container
    key: str | None = None
    key_start = -1
    expect_value = False
    opened = -1  # where the array just opened under a key starts; -1 once anything follows it
    for m in (_CUT_JSON_TOKEN if cut else _JSON_TOKEN).finditer(text):
        tok = m.group()
        if tok in "{[":
            stack.append(key if expect_value else None)
            if expect_value and key is not None:
                path.append(key)
            opened = m.start() if tok == "[" and expect_value and key is not None else -1
            key, expect_value = None, False
            continue
        if tok == "]" and opened >= 0 and stack and stack[-1] is not None:
            pairs.append((tuple(path), key_start, m.end(), opened, m.end()))  # "key": [] states "none"
        opened = -1
        if tok in "}]":
            if stack and stack.pop() is not None and path:
                path.pop()
            key, expect_value = None, False
        elif tok == ":":
            expect_value = key is not None
        elif tok == ",":
            key, expect_value = None, False
        elif expect_value and key is not None:
            pairs.append(((*path, key), key_start, m.end(), m.start(), m.end()))
            key, expect_value = None, False
        elif tok.startswith('"') and _COLON.match(text, m.end()):
            key, key_start = tok[1:-1], m.start()
        else:  # a scalar inside an array
            pairs.append((tuple(path), m.start(), m.end(), m.start(), m.end()))
    return pairs if pairs else None


def segments_of(evidence_id: str, text: str, cut: bool = False) -> list[Segment]:
    """Cut one evidence item into sentence segments (prose) or pair segments (JSON).

    ``cut`` says ``text`` is only the beginning of the item: its last segment may be a sentence,
    pair or number cut in half, so it is left out.
    """
    segments = _segments(evidence_id, text, cut)
    return segments[:-1] if cut else segments


def _segments(evidence_id: str, text: str, cut: bool) -> list[Segment]:
    pairs = json_pairs(text, cut)
    if pairs is None:
        return [_segment(evidence_id, text, (span,)) for span in sentence_spans(text)]
    out: list[Segment] = []
    for keypath, start, end, vstart, vend in pairs:
        value = text[vstart:vend]
        if vend - vstart > 120:  # a long string value (a review, a description): cut into sentences
            inner = sentence_spans(text, vstart + 1, vend - 1)
            out.extend(_segment(evidence_id, text, (span,), extra=" ".join(keypath)) for span in inner)
            continue
        out.append(
            _segment(
                evidence_id,
                text,
                ((start, end),),
                extra=" ".join(keypath[:-1]),
                # "state": "CA" also states "california"; "Monday": "11:0-17:0" that it is open
                also=SCHEDULE_WORDS
                if keypath and keypath[-1].casefold() in WEEKDAYS
                else CODES.get(value.strip('"'), ""),
                # an empty array ("payments": [], the only array json_pairs reports) says "none"
                negative=value.casefold() in _FALSY or value.startswith("["),
                boolean=value.casefold() in _BOOLEAN or value.startswith("["),
            )
        )
    return out


def _segment(
    evidence_id: str,
    text: str,
    spans: tuple[tuple[int, int], ...],
    extra: str = "",
    negative: bool = False,
    boolean: bool = False,
    also: str = "",
) -> Segment:
    body = " ".join(text[s:e] for s, e in spans)
    if not (extra or also or negative):  # a sentence of prose: as the quote check reads a quote of it
        stems, negs = stated(body)
        return Segment(evidence_id, spans, body, extra, negative, stems, negs, boolean)
    stems = frozenset(content_stems(body + " " + extra + " " + also) | compound_stems(body))
    # the key path is not negated; "WiFi" is negated both as one word and as its parts "Wi Fi"
    negs = (
        frozenset(content_stems(body))
        if negative
        else negated_stems(body) | negated_stems(" ".join(words(body)))
    )
    return Segment(evidence_id, spans, body, extra, negative, stems, negs, boolean)


def merge(segments: Iterable[Segment]) -> Segment:
    """Several segments of one item matched as one unit (adjacent sentences, an object's pairs)."""
    segs = list(segments)
    spans = tuple(sp for s in segs for sp in s.spans)
    stems: frozenset[str] = frozenset().union(*(s.stems for s in segs))
    negs: frozenset[str] = frozenset().union(*(s.negated for s in segs))
    return Segment(
        segs[0].evidence_id,
        spans,
        " ".join(s.text for s in segs),
        " ".join(s.extra for s in segs),
        any(s.negative for s in segs),
        stems,
        negs,
    )
