"""Citation markers: which spans of an answer are markers, and what each one names.

Two jobs, kept apart from sentence splitting so the decomposer and the resolver
(:mod:`auditor.claims._resolve`) read markers the same way:

- **Recognise** (offsets only, the text is never rewritten): ``[1]``, ``[1, 2]``, ``[1-3]``,
  footnotes ``[^2]`` / ``[^note]``, ``[doc-3]``, ``[KB-101]``, ``[doc:abc]``, ``【3】`` (and
  ``【4:0†file.pdf】``), ``(source: ...)``, ``(Passage 2)``, markdown links ``[text](url)`` and bare
  URLs. :data:`MARKER` is the set trimmed off the end of a claim; a markdown link whose text is
  prose (``see the [warranty page](https://...)``) and a bare URL stay in the claim's text.
- **Parse** a marker as written into what it names (:func:`parse_marker`): ids, URLs, positions
  in the retrieval order, a footnote label. Footnote and reference definitions at the end of an
  answer (``[^2]: https://...``, ``[1]: KB-101``, ``[1] https://...``) map a label to what it names
  (:func:`definitions`); their lines are not claims.

See ``docs/claims.md`` ("Citation markers") and ``docs/metrics.md`` ("Citations").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_URL_BODY = r"(?:https?://|www\.)[^\s<>()\[\]\"']*[^\s<>()\[\]\"'.,;:!?]"
URL = re.compile(r"\b" + _URL_BODY, re.IGNORECASE)

_ID = r"[A-Za-z][A-Za-z_.]*[-_ ]?\d+[\w.-]*"
# Words that prefix an id in a marker: "[doc:abc]", and, with a number, a position ("[doc-3]").
_PREFIXES = (
    "doc|docs|document|documents|source|sources|src|ref|refs|reference|id|passage|passages|chunk"
    "|chunks|result|results|item|items|context|file|cite|citation|kb"
)
_PREFIXED = rf"(?:{_PREFIXES})\s*[:#]\s*[\w./#-]+"
_CITATION_LABEL = r"(?:\^?\d+|sources?|refs?|references?|citations?|link|[\w-]+(?:\.[\w-]+)+)"

# Alternatives in order: a markdown link whose text is a citation label ("[1](url)", "[source](url)",
# "[acme.com](url)", optionally in parentheses) before the bare "[1]" it starts with.
MARKER = re.compile(
    rf"\(\s*\[{_CITATION_LABEL}\]\({_URL_BODY}/?\)\s*\)"
    rf"|\[{_CITATION_LABEL}\]\({_URL_BODY}/?\)"
    r"|\[(?:\^?\d+(?:\s*[,\u2013-]\s*\d+)*"
    r"|\^[A-Za-z][\w.-]*"
    rf"|{_PREFIXED}(?:\s*,\s*{_PREFIXED})*"
    rf"|{_ID}(?:\s*,\s*{_ID})*)\]"
    r"|\u3010[^\u3010\u3011\n]{1,80}\u3011"
    r"|\((?:source|sources|ref|refs|reference|references|citation|citations)\s*:[^()]*\)"
    r"|\((?:passages?|sources?|docs?|documents?)\s+\d+[^()]*\)",
    re.IGNORECASE,
)
LINK = re.compile(rf"\[(?P<label>[^\[\]\n]{{1,200}})\]\((?P<url>{_URL_BODY}/?)\)", re.IGNORECASE)

# A definition line: "[^2]: text", "[1]: text", or "[1] text with a URL" (a sources list).
_DEFINITION = re.compile(
    r"[ \t]*(?:[-*][ \t]+)?\[(?P<label>\^?[\w.-]{1,40})\](?:[ \t]*:[ \t]*|[ \t]+)(?P<body>\S.*)"
)

_RANGE = re.compile(r"(\d+)\s*[\u2013-]\s*(\d+)")
_SPLIT = re.compile(r"[,;]")
_GENERIC = re.compile(rf"(?P<word>{_PREFIXES})\s*[-_:# ]?\s*(?P<rest>\S.*)", re.IGNORECASE)
_PAREN_PREFIX = re.compile(r"(?:sources?|refs?|references?|citations?)\s*:\s*", re.IGNORECASE)
_PAREN_WORD = re.compile(r"(?:passages?|sources?|docs?|documents?)\s+", re.IGNORECASE)
MAX_RANGE = 50  # "[1-4000]" names no 4000 documents: a longer range is read as its two ends


@dataclass(frozen=True)
class Target:
    """One thing a marker names, before it is looked up among an answer's evidence.

    ``ids`` (lower case) are compared with evidence and document ids, ``urls`` with the items'
    URLs, ``position`` (1-based) counts documents in the retrieval order the model saw. ``label``
    is a footnote or reference label (``^2``, ``1``), looked up among the answer's definitions
    first. A marker names one target per part: ``[1, 2]`` names two.
    """

    ids: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    position: int | None = None
    label: str | None = None

    @property
    def shown(self) -> str:
        """The target in a reason: ``[^2]``, ``3``, ``kb-9``, ``https://...``."""
        if self.label is not None:
            return f"[{self.label}]"
        return (self.urls or self.ids or (str(self.position),))[0]


#: What every marker, link and URL holds (a bracket, a parenthesis, "://" or "www."): a text
#: without any is passed over with one search instead of three (most sentences of an answer).
_MAY_MARK = re.compile(r"[\[(\u3010]|://|www\.", re.IGNORECASE)


def find_markers(text: str, start: int = 0, end: int | None = None) -> list[re.Match[str]]:
    """Every marker in ``text[start:end]`` in order: :data:`MARKER`, prose links, then bare URLs
    that lie in neither (a URL inside a marker or a link is part of it, not a second marker)."""
    stop = len(text) if end is None else end
    if _MAY_MARK.search(text, start, stop) is None:
        return []
    found = list(MARKER.finditer(text, start, stop))
    found += [m for m in LINK.finditer(text, start, stop) if not _inside(m, found)]
    found += [m for m in URL.finditer(text, start, stop) if not _inside(m, found)]
    return sorted(found, key=lambda m: m.start())


def _inside(m: re.Match[str], others: list[re.Match[str]]) -> bool:
    return any(o.start() <= m.start() and m.end() <= o.end() for o in others)


def strip_markers(text: str) -> str:
    """``text`` with markers blanked out (a prose link keeps its text): for word counts."""
    if _MAY_MARK.search(text) is None:
        return text
    return URL.sub(" ", LINK.sub(lambda m: f" {m.group('label')} ", MARKER.sub(" ", text)))


def definition_line(line: str) -> tuple[str, str] | None:
    """``(label, body)`` when ``line`` defines a footnote or reference (module docstring), else None.

    ``[1] text`` without a colon counts only when the text holds a URL, so a line that merely
    starts with a marker stays a claim.
    """
    m = _DEFINITION.fullmatch(line.rstrip())
    if m is None:
        return None
    colon = ":" in line[m.end("label") : m.start("body")]
    if not colon and URL.search(m.group("body")) is None:
        return None
    return m.group("label").lower(), m.group("body").strip()


def definitions(text: str) -> dict[str, str]:
    """The footnote and reference definitions of an answer, by lower-cased label (``^2``, ``1``)."""
    out: dict[str, str] = {}
    for line in text.split("\n"):
        found = definition_line(line)
        if found is not None:
            out.setdefault(*found)
    return out


def _numbers(part: str) -> list[int]:
    span = _RANGE.fullmatch(part)
    if span is None:
        return [int(part)] if part.isdigit() else []
    low, high = int(span.group(1)), int(span.group(2))
    return list(range(low, high + 1)) if 0 <= high - low < MAX_RANGE else [low, high]


def _numbered(inner: str, labelled: bool) -> list[Target]:
    """``1, 2`` / ``1-3``: a target per number, by id, definition label and position."""
    out: list[Target] = []
    for part in _SPLIT.split(inner):
        for n in _numbers(part.strip()):
            out.append(Target(ids=(str(n),), position=n, label=str(n) if labelled else None))
    return out


def _named(name: str) -> Target:
    """An id as written: ``KB-101``; ``doc:abc`` (also ``abc``); ``doc-3`` (also position 3)."""
    ids = [name.lower()]
    position = None
    generic = _GENERIC.fullmatch(name)
    if generic is not None and generic.group("word").lower() != "kb":
        rest = generic.group("rest").strip()
        if ":" in name or "#" in name:
            ids.append(rest.lower())
        if rest.isdigit():
            position = int(rest)
    return Target(ids=tuple(dict.fromkeys(ids)), position=position)


def body_targets(body: str) -> list[Target]:
    """What free text names (a definition's body, the inside of ``(source: ...)``): URLs, then ids."""
    targets = [Target(urls=(m.group(),)) for m in URL.finditer(body)]
    for part in _SPLIT.split(URL.sub(" ", body)):
        name = part.strip().strip("[]()").strip().rstrip(".,;:").strip()
        if name:
            targets.append(_named(name))
    return targets


def parse_marker(marker: str) -> list[Target]:
    """What a marker, as written, names: one :class:`Target` per part (``docs/metrics.md``)."""
    text = marker.strip()
    unwrapped = text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text
    link = LINK.fullmatch(unwrapped)
    if link is not None:
        return [Target(urls=(link.group("url"),))]
    bare = text.rstrip(".,;:!?")
    if URL.fullmatch(bare):
        return [Target(urls=(bare,))]
    if len(text) < 3:
        return []
    inner = text[1:-1].strip()
    if text.startswith("\u3010"):
        head, _, source = inner.partition("\u2020")  # 【4:0†file.pdf】: after † a file's name
        head, source = head.strip(), source.strip().lower()
        ids = tuple(n for n in (head.lower(), source) if n and n != "source")
        return [Target(ids=ids, position=int(head) if head.isdigit() else None)]
    if text.startswith("[^"):
        label = inner.lower()
        number = label[1:]
        return [Target(ids=(number,), position=int(number) if number.isdigit() else None, label=label)]
    if text.startswith("("):
        prefix = _PAREN_PREFIX.match(inner)
        if prefix is not None:
            return body_targets(inner[prefix.end() :])
        word = _PAREN_WORD.match(inner)
        numbered = _numbered(inner[word.end() :] if word else inner, labelled=False)
        if numbered or word:
            return numbered
        # "(doc-b)", "(faq-returns, kb-7)": ids in parentheses (adopted as markers because they
        # name the answer's evidence, :mod:`auditor.claims._adopt`)
        return [_named(part.strip()) for part in _SPLIT.split(inner) if part.strip()]
    if inner[:1].isdigit():
        return _numbered(inner, labelled=True)
    return [_named(part.strip()) for part in _SPLIT.split(inner) if part.strip()]
