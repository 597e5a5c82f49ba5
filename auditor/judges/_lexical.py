"""Lexical cues for the offline judge: content words, a light stemmer, synonyms, negation, segments.

Evidence is cut into :class:`Segment` objects whose spans are character offsets into the item's
own text, so every quote the offline judge produces is an exact substring of the evidence. Prose
is cut into sentences; JSON-ish tool results are cut into ``"key": value`` pairs (with the key path
of the enclosing objects as extra words), so "refund of $80.00" can meet ``"amount": "$80.00"``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

_WORD = re.compile("[A-Za-z][A-Za-z0-9'\u2019]*|\\d+(?:[.,]\\d+)*")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_ESCAPE = re.compile(r"\\[nrtbf\"\\/]")

STOPWORDS = frozenset(
    """a an the and or but if then than so of in on at to for from by with as into onto over under
    about above below between through during before after is are was were be been being am do does
    did doing have has had having it its it's this that these those there here their they them he
    she him her his hers we us our you your i me my mine which who whom whose what when where why
    how all any both each few more most other some such only own same too very can will just should
    would could may might must shall also not no nor never none n't cannot yes s t get got per via
    according said says say stated states state noted notes reported reports report mentioned
    passage passages provided given context information out up down off
    one's upon while whether within without however although though because since until unless
    including include includes included like well much many also et al e.g i.e etc""".split()  # noqa: SIM905 (a word list reads better as prose)
) | frozenset(
    # framing words: they describe the act of stating, the source, or hedge, not the facts stated
    """overview summary summarize summarizes summarized summarise concise concisely objective
    objectively describe describes described describing mention mentions mentioning express
    expresses expressed expressing highlight highlights highlighted highlighting appear appears
    appeared seem seems seemed overall despite other others another various particular
    particularly specific specifically eventually structured here's""".split()  # noqa: SIM905
)

NEGATION = frozenset(
    {"not", "no", "never", "none", "cannot", "without", "nor", "neither", "nobody", "nothing"}
)

# A deliberately small synonym list: each word maps to a canonical stem.
_SYNONYMS: dict[str, str] = {
    "purchas": "buy",
    "bought": "buy",
    "paid": "pay",
    "cost": "pay",
    "charg": "pay",
    "price": "pay",
    "total": "pay",
    "amount": "pay",
    "sum": "pay",
    "spent": "pay",
    "spend": "pay",
    "refund": "refund",
    "reimburs": "refund",
    "repaid": "refund",
    "returned": "return",
    "approv": "approv",
    "accept": "approv",
    "grant": "approv",
    "deliver": "deliv",
    "ship": "deliv",
    "shipment": "deliv",
    "dispatch": "deliv",
    "client": "custom",
    "custom": "custom",
    "buyer": "custom",
    "automobil": "car",
    "vehicl": "car",
    "car": "car",
    "big": "larg",
    "larg": "larg",
    "huge": "larg",
    "small": "smal",
    "smal": "smal",
    "littl": "smal",
    "kill": "die",
    "die": "die",
    "dead": "die",
    "death": "die",
    "di": "die",
    "begin": "start",
    "began": "start",
    "start": "start",
    "commenc": "start",
    "end": "end",
    "finish": "end",
    "conclud": "end",
    "said": "say",
    "told": "say",
    "warranti": "warranti",
    "guarante": "warranti",
    "doctor": "physician",
    "physician": "physician",
    "help": "help",
    "assist": "help",
    "show": "show",
    "reveal": "show",
    "demonstr": "show",
    "indic": "show",
    "suggest": "show",
    "use": "use",
    "util": "use",
    "employ": "use",
    "increas": "rise",
    "rise": "rise",
    "rose": "rise",
    "grow": "rise",
    "grew": "rise",
    "decreas": "fall",
    "declin": "fall",
    "fell": "fall",
    "drop": "fall",
    "reduc": "fall",
    "offer": "offer",
    "provid": "offer",
    "serv": "offer",
    "featur": "offer",
    "locat": "locat",
    "situat": "locat",
    "base": "locat",
    "peopl": "person",
    "person": "person",
    "rating": "star",
    "rated": "star",
    "star": "star",
    "address": "locat",
    "meal": "food",
    "dish": "food",
    "cuisin": "food",
    "food": "food",
    "hurt": "injur",
    "wound": "injur",
    "injur": "injur",
    "decision": "decid",
    "decid": "decid",
}

# US states and a few countries, with the codes a record uses for them ("state": "CA").
ALIASES: dict[str, tuple[str, ...]] = {
    name.casefold(): (code.casefold(),)
    for name, code in (
        pair.split("=")
        for pair in """Alabama=AL Alaska=AK Arizona=AZ Arkansas=AR California=CA Colorado=CO Connecticut=CT
        Delaware=DE Florida=FL Georgia=GA Hawaii=HI Idaho=ID Illinois=IL Indiana=IN Iowa=IA Kansas=KS
        Kentucky=KY Louisiana=LA Maine=ME Maryland=MD Massachusetts=MA Michigan=MI Minnesota=MN
        Mississippi=MS Missouri=MO Montana=MT Nebraska=NE Nevada=NV Ohio=OH Oklahoma=OK Oregon=OR
        Pennsylvania=PA Tennessee=TN Texas=TX Utah=UT Vermont=VT Virginia=VA Washington=WA
        Wisconsin=WI Wyoming=WY""".split()  # noqa: SIM905 (a word list reads better as prose)
    )
} | {
    "usa": ("united states", "u.s."),
    "us": ("united states", "u.s."),
    "uk": ("united kingdom", "britain"),
}


_CODES = {codes[0].upper(): name for name, codes in ALIASES.items() if len(codes) == 1}

_SUFFIXES = (
    "ational",
    "ability",
    "ibility",
    "able",
    "ible",
    "ization",
    "fulness",
    "iveness",
    "ments",
    "ement",
    "ingly",
    "ation",
    "ities",
    "ness",
    "ment",
    "ing",
    "ies",
    "ied",
    "ity",
    "ers",
    "ed",
    "es",
    "er",
    "ly",
    "al",
    "s",
    "e",
    "y",
)


def _strip(w: str) -> str:
    """The suffix-stripping part of :func:`stem`, without the synonym list."""
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    return w


# The plural / third person of a listed word reaches the same canonical stem: the list is also
# keyed by the stripped form of each entry + "s" ("offers" strips to "off", "prices" to "pric").
_STEM_SYNONYMS: dict[str, str] = {
    **{_strip(k + "s"): v for k, v in _SYNONYMS.items() if len(k) > 3},
    **_SYNONYMS,
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deterministic suffix-stripping stem (lemma-lite), mapped through the synonym list."""
    w = word.casefold().replace("\u2019", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'")
    if w in _SYNONYMS:
        return _SYNONYMS[w]
    if not w.isalpha():
        return w
    w = _strip(w)
    return _STEM_SYNONYMS.get(w, w)


def words(text: str) -> list[str]:
    """Alphabetic and numeric tokens, with camelCase and snake_case keys split."""
    text = _ESCAPE.sub(" ", text).replace("_", " ")
    text = _CAMEL.sub(" ", text)
    return _WORD.findall(text)


def content_stems(text: str) -> set[str]:
    """Stems of the content words (stopwords and pure numbers dropped; numbers are judged apart)."""
    return {
        stem(w) for w in words(text) if w.casefold() not in STOPWORDS and not w[0].isdigit() and len(w) > 1
    }


_COMPOUND = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+|[A-Za-z]*[a-z][A-Z][A-Za-z]*")


def compound_stems(text: str) -> set[str]:
    """Stems of adjacent word pairs written as one word elsewhere: "TakeOut" and "take-out" give
    "takeout", "WiFi" gives "wifi" (evidence side only, so a claim's word count is unchanged)."""
    out: set[str] = set()
    for m in _COMPOUND.finditer(text):
        parts = _CAMEL.sub(" ", m.group().replace("-", " ")).split()
        out.update(stem(a + b) for a, b in itertools.pairwise(parts))
    return out


# a cheap pre-check: a text without any of these cannot carry a negation cue
_ANY_CUE = re.compile(r"no|ne|without|cannot|n't|n\u2019t", re.I)


def negated(text: str) -> bool:
    """Whether the text carries a negation cue ("not", "no", "n't", "non-", "without"...)."""
    tokens = _WORD.findall(text)
    return any(_is_cue(w) and not _is_ordinal_no(w, tokens[i + 1 : i + 2]) for i, w in enumerate(tokens))


def _is_ordinal_no(word: str, following: list[str]) -> bool:
    """ "No. 74", "world no 1": "no" before a figure abbreviates "number", it negates nothing."""
    return word.casefold() == "no" and bool(following) and following[0][0].isdigit()


def _is_cue(word: str) -> bool:
    lowered = word.casefold().replace("\u2019", "'")
    return lowered in NEGATION or lowered.endswith("n't") or lowered == "non"


NEGATION_SCOPE = 5  # a cue negates the next content words within this many tokens ...
NEGATION_WORDS = 2  # ... at most this many of them ("does not have WiFi", "no valet, garage or lot")
_SCOPE_END = frozenset({"and", "but", "while", "whereas", "although", "though", "because", "which", "who"})


def negated_stems(text: str) -> frozenset[str]:
    """Stems of the content words within the scope of a negation cue (a clause boundary ends it)."""
    if not _ANY_CUE.search(text):
        return frozenset()
    tokens = _WORD.findall(_ESCAPE.sub(" ", text).replace("_", " "))
    out: set[str] = set()
    for i, tok in enumerate(tokens):
        if not _is_cue(tok) or _is_ordinal_no(tok, tokens[i + 1 : i + 2]):
            continue
        taken = 0
        for t in tokens[i + 1 : i + 1 + NEGATION_SCOPE]:
            lowered = t.casefold()
            if lowered in _SCOPE_END or taken == NEGATION_WORDS:
                break
            if lowered not in STOPWORDS and not t[0].isdigit():
                out.add(stem(t))
                taken += 1
    return frozenset(out)


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


def sentence_spans(text: str, base: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans (start, end) of ``text[base:end]``, stripped of surrounding whitespace."""
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = base
    for match in _SENTENCE_END.finditer(text, base, stop):
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
_JSON_START = re.compile(r'\s*(?:\{\s*["}]|\[\s*(?:["{\[\]\d-]|true|false|null))')
_COLON = re.compile(r"\s*:")
_FALSY = {"false", '"no"', '"none"'}  # null means "not known", never "no"
_BOOLEAN = _FALSY | {"true", '"yes"'}


def json_pairs(text: str) -> list[tuple[tuple[str, ...], int, int, int, int]] | None:
    """Scalar ``"key": value`` pairs of a JSON-ish text, or None when it does not look like JSON.

    Returns (key path, pair start, pair end, value start, value end) per scalar; scalars inside an
    array are reported with the array's key path and their own span.
    """
    if not _JSON_START.match(text):
        return None
    pairs: list[tuple[tuple[str, ...], int, int, int, int]] = []
    path: list[str] = []
    stack: list[str | None] = []  # key that opened each container
    key: str | None = None
    key_start = -1
    expect_value = False
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if tok in "{[":
            stack.append(key if expect_value else None)
            if expect_value and key is not None:
                path.append(key)
            key, expect_value = None, False
        elif tok in "}]":
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


def segments_of(evidence_id: str, text: str) -> list[Segment]:
    """Cut one evidence item into sentence segments (prose) or pair segments (JSON)."""
    pairs = json_pairs(text)
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
                also=_CODES.get(value.strip('"'), ""),  # "state": "CA" also states "california"
                negative=value.casefold() in _FALSY,
                boolean=value.casefold() in _BOOLEAN,
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
