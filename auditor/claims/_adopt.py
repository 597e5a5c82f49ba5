"""Citation markers by resolution: a bracketed source id of the answer's own evidence is a marker.

:data:`auditor.claims._markers.MARKER` recognises the shapes a marker usually takes (``[1]``,
``[KB-101]``, ``[doc:abc]``, ``【3】``); an agent citing its sources by their own ids writes
``[doc-b]``, ``[refund_policy]`` or ``(faq-returns)``, which no list of shapes can foresee and
which look like prose brackets out of context. Knowing the answer's evidence settles it: a
bracketed or parenthesised token at the end of a claim (or opening the next one) that equals an
evidence id, document id, metadata id or title of the answer's evidence names that item, so it
is a marker. :func:`adopt_markers` trims it off the claim's text (which the judge then reads
without it) and lists it in the claim's ``citations`` as written, where
:func:`auditor.claims.resolve_markers` finds the item by the same id.
"""

from __future__ import annotations

import re

from auditor.claims._model import Claim, Decomposition
from auditor.claims._resolve import item_names
from auditor.evidence import Answer

# A bracketed or parenthesised token: an id, or a few ids separated by commas ("[doc-a, doc-b]").
_BRACKET = re.compile(r"\[(?P<square>[^\[\]\n]{1,120})\]|\((?P<round>[^()\n]{1,120})\)")
_TRAILING = re.compile(r"[\s.,;:!]*$")
_LEADING = re.compile(r"^\s*")
_PARTS = re.compile(r"\s*[,;]\s*")


def _names(token: str) -> list[str]:
    return [p.strip().casefold() for p in _PARTS.split(token) if p.strip()]


def _marker_at(text: str, pos: int, known: frozenset[str]) -> re.Match[str] | None:
    """The bracket at ``pos`` of ``text`` when every name in it is one of ``known``."""
    m = _BRACKET.match(text, pos)
    if m is None:
        return None
    names = _names(m.group("square") or m.group("round") or "")
    return m if names and all(n in known for n in names) else None


def _trailing(text: str, known: frozenset[str]) -> tuple[int, list[str]]:
    """Where the claim's own text ends before the markers that close it, and those markers."""
    end = len(_TRAILING.sub("", text))
    found: list[str] = []
    while True:
        opening = text.rfind("(" if text[end - 1 : end] == ")" else "[", 0, end)
        if opening <= 0 or text[end - 1 : end] not in ")]":
            break
        m = _marker_at(text, opening, known)
        if m is None or m.end() != end:
            break
        found.insert(0, m.group())
        end = len(text[:opening].rstrip())
    return end, found


def _leading(text: str, known: frozenset[str]) -> tuple[int, list[str]]:
    """Where the claim's own text starts after markers that open it (they close the claim before)."""
    start = len(_LEADING.match(text).group()) if text else 0  # type: ignore[union-attr]
    found: list[str] = []
    while (m := _marker_at(text, start, known)) is not None:
        found.append(m.group())
        start = m.end() + len(text[m.end() :]) - len(text[m.end() :].lstrip())
    return start, found


def adopt_markers(decomposition: Decomposition, answer: Answer) -> Decomposition:
    """Claims with the bracketed ids of ``answer``'s evidence taken as their citation markers.

    A token closing a claim is the claim's marker; one opening a claim (written after the period
    of the sentence before) is the previous claim's. Offsets stay exact: ``text`` is always
    ``answer.text[start:end]``. A claim left with no text (a marker alone) is dropped.
    """
    known = frozenset(n for e in answer.evidence for n in item_names(e))
    if not known or not any(ch in answer.text for ch in "[("):
        return decomposition
    claims: list[Claim] = []
    for claim in decomposition.claims:
        text = claim.text
        head, before = _leading(text, known)
        if before and claims:
            previous = claims[-1]
            claims[-1] = previous.model_copy(update={"citations": (*previous.citations, *before)})
        elif before:
            head = 0  # nothing before to cite: leave the opening bracket in the text
        cut, after = _trailing(text, known)
        if not before and not after:
            claims.append(claim)
            continue
        start, end = claim.start + head, claim.start + max(cut, head)
        if end <= start:
            continue
        citations = (*claim.citations, *(m for m in after if m not in claim.citations))
        claims.append(
            claim.model_copy(
                update={"text": answer.text[start:end], "start": start, "end": end, "citations": citations}
            )
        )
    return decomposition.model_copy(update={"claims": tuple(claims)})
