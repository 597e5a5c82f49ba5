"""Screening clause pieces that assert nothing checkable, and recognising refusals.

One entry point, :func:`screen`: given a piece's offsets it returns possibly narrowed offsets
(a lead-in such as "I believe" or "Based on the provided passages," is cut off a claim that
still carries a fact) and a :class:`ScreenReason` or None. Rules in ``docs/claims.md``.
"""

from __future__ import annotations

import re

from auditor.claims._lexicon import content_words, stem, word_set, words
from auditor.claims._markers import strip_markers
from auditor.claims._model import ScreenReason

_I = r"(?:i|we)"
_NEG = (
    r"(?:do\s*n[o']t|did\s*n[o']t|can\s*n?[o']?t|cannot|could\s*n[o']t|(?:am|'m|are|'re|was|were)\s+"
    r"(?:not\s+able|unable)|have\s*n[o']t\s+been\s+able)"
)
_REFUSAL = re.compile(
    rf"\b{_I}\s+{_NEG}\s+(?:to\s+)?(?:have|find|locate|see|answer|provide|access|determine|confirm|share|"
    r"verify|retrieve|tell|know|give|identify|look\s+up|assist|help)\b"
    r"|\b(?:there\s+(?:is|are)\s+no|(?:i|we)\s+(?:have|found)\s+no|no)\s+(?:specific\s+|relevant\s+|further\s+)?"
    r"(?:information|data|details?|mention|records?|results?|documentation)\s+"
    r"(?:about|on|regarding|of|for|concerning|in|that|available|provided|was\s+found)"
    r"|\b(?:the|these|those|provided|given|available|retrieved|above)\s+(?:(?:provided|given|available|"
    r"retrieved|above)\s+)?(?:passages?|documents?|context|sources?|information|data|text|search\s+results?)"
    r"\s+(?:\d+\s+)?(?:do(?:es)?\s*n[o']t|did\s*n[o']t|does\s+not|do\s+not)\s+"
    r"(?:contain|mention|include|provide|say|specify|state|address|cover|discuss|give)"
    r"|\bnot\s+(?:mentioned|specified|provided|stated|available|included|addressed|given)\s+in\s+the\s+"
    r"(?:provided|given|available|retrieved|above)"
    r"|\b(?:passage|document|source)\s+\d+\s+(?:do(?:es)?\s*n[o']t|did\s*n[o']t)\s+(?:contain|mention|include|"
    r"provide|say|specify|state|address|cover|discuss|give)"
    r"|\bcannot\s+be\s+(?:determined|answered|found)\b|\bnot\s+possible\s+to\s+(?:determine|answer|say)\b"
    r"|\bi\s+(?:do\s*n[o']t|don't)\s+know\b|\bunable\s+to\s+(?:answer|find|provide|determine|locate)\b",
    re.IGNORECASE,
)
# A sentence about the answer itself ("Here's the summary within 42 words:", "Below is a concise
# overview"): it states nothing about the sources, and its figure is a word count, not a fact.
_ABOUT_ANSWER = re.compile(
    r"\s*(?:here(?:'s|\u2019s| is)|below is|the following is)\s+(?:a|an|the|my)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:summary|overview|answer|response|rewrite|version)\b[^.:\n]{0,60}?[.:]?\s*$",
    re.IGNORECASE,
)
_OFFER = re.compile(
    r"(?:please\s+)?(?:let\s+(?:me|us)\s+know|feel\s+free|(?:do\s+not|don't)\s+hesitate|"
    r"if\s+you\s+(?:have|need|want|would\s+like|'d\s+like|require)|is\s+there\s+anything\s+else|"
    r"anything\s+else\s+(?:i|we)\s+can|(?:can|may|shall|should)\s+(?:i|we)\s+(?:help|assist|check|look)|"
    r"how\s+(?:else\s+)?can\s+(?:i|we)\s+(?:help|assist)|would\s+you\s+like|do\s+you\s+want\s+me|"
    r"(?:i|we)(?:'d|'ll|'m|\s+would|\s+will|\s+am|\s+are|\s+can)?\s+(?:be\s+)?(?:happy|glad|more\s+than\s+happy)"
    r"\s+to\s+(?:help|assist|check|look|answer|provide)|(?:i|we)\s+can\s+(?:also\s+)?(?:help|assist)|"
    r"reach\s+out)\b",
    re.IGNORECASE,
)
_PLEASANTRY = re.compile(
    r"(?:thanks?|thank\s+you|many\s+thanks|(?:great|good|excellent|interesting)\s+question|you(?:'re|\s+are)"
    r"\s+welcome|hello|hi|hey|dear|greetings|good\s+(?:morning|afternoon|evening)|(?:i\s+)?hope\s+(?:this|that)"
    r"\s+(?:helps|answers|clarifies)|glad\s+(?:to|i\s+could)|happy\s+to\s+help|have\s+a\s+(?:great|nice|good|"
    r"wonderful)\s+(?:day|weekend|evening|night|time|one)|i\s+apologi[sz]e|i(?:'m|\s+am)\s+sorry|sorry|i\s+understand|sure|certainly|of\s+course|"
    r"absolutely|no\s+problem|cheers|(?:best|kind)\s+regards|regards|sincerely)\b",
    re.IGNORECASE,
)
_HEDGE_LEAD = re.compile(
    r"(?:i\s+(?:think|believe|guess|suppose|assume|reckon|feel)|i(?:'m|\s+am)\s+(?:fairly\s+|pretty\s+)?"
    r"(?:sure|confident|not\s+sure|not\s+certain)|it\s+(?:seems|appears|looks\s+like)|as\s+far\s+as\s+i\s+"
    r"(?:know|can\s+tell)|if\s+i\s+(?:recall|remember)(?:\s+correctly)?|to\s+(?:the\s+best\s+of\s+)?my\s+"
    r"knowledge|apparently|presumably|probably|possibly|perhaps|maybe|in\s+my\s+(?:opinion|view))"
    r"(?:\s+that)?(?:\s*,\s*|\s+)",
    re.IGNORECASE,
)
_HEDGE_CUE = re.compile(
    r"\b(?:may|might|could|possibly|perhaps|maybe|probably|likely|depends?|vary|varies|think|believe|"
    r"seems?|not\s+sure|guess)\b",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(
    r"(?:(?:based\s+on|according\s+to|from)\s+(?:the\s+|this\s+|these\s+)?"
    r"(?:(?:provided|given|available|above|retrieved|structured|following|search)\s+){0,2}"
    r"(?:passages?|documents?|data|information|context|sources?|text|article|record|results?)"
    r"(?:\s+provided|\s+given)?|yes|no|sure|certainly|of\s+course|absolutely|okay|ok|well|so|overall|"
    r"in\s+summary|in\s+short|to\s+summari[sz]e|in\s+conclusion|additionally|also|however|furthermore|"
    r"moreover|great\s+question|good\s+question|thanks\s+for\s+asking)\s*[,:]\s*",
    re.IGNORECASE,
)
_RESTATE_CUE = re.compile(
    r"(?:so,?\s+)?(?:you(?:'re|\s+are)?\s+(?:asked|asking|want(?:ed)?\s+to\s+know|would\s+like\s+to\s+know|"
    r"(?:are\s+)?wondering|inquired|inquiring|wanted)|your\s+question|regarding\s+your\s+question|"
    r"to\s+answer\s+your\s+question|as\s+for\s+your\s+question|the\s+question\s+(?:is|was|asks)|"
    r"here(?:'s|\s+is|\s+are)|below\s+(?:is|are)|the\s+following)\b",
    re.IGNORECASE,
)
_FRAME = word_set(
    """asked asking ask want wanted know wondering inquired inquiring question regarding answer here
    following below overview summary guide brief steps step list explanation description how based
    given provided passage passages document documents context data source sources"""
)
_CONTACT = re.compile(r"\d|@|https?://|www\.", re.IGNORECASE)
# A sentence about the sources or the answer's own layout, with nothing else in it ("Note: Passage 3
# provides additional information", "The information in the given passages is sufficient to answer
# the question", "the steps to cook brats are as follows"): every content word is one of these.
_META = word_set(
    """note passage passages document documents source sources context text provided given above
    provide provides providing contain contains containing include includes including offer offers
    give gives sufficient enough additional more further relevant detail details answer answers
    question questions infer inferred conclude following follows steps step list listed below"""
)
_META_CUE = re.compile(
    r"\b(?:passages?|documents?|sources?|context)\b|\bas\s+follows\b|\bthe\s+following\b", re.IGNORECASE
)


_SOURCE_NUMBER = re.compile(r"\b(?:passages?|documents?|sources?)\s+\d+\b", re.IGNORECASE)


def _about_sources(piece: str) -> bool:
    """A sentence about the passages or the answer's layout whose content words are all such words."""
    if _META_CUE.search(piece) is None:
        return False
    own = [w for w in _checkable(_SOURCE_NUMBER.sub(" ", piece)) if w not in _META]
    return not own or all(w in ("steps", "information") for w in own)


def _strip_lead(text: str, start: int, end: int, pattern: re.Pattern[str]) -> int:
    m = pattern.match(text, start, end)
    return m.end() if m is not None and m.end() < end else start


def _restates(piece: str, question: str | None) -> bool:
    if not question or (_RESTATE_CUE.match(piece) is None and not piece.endswith("?")):
        return False
    asked = {stem(w) for w in content_words(question)}
    own = [stem(w) for w in content_words(piece) if w not in _FRAME]
    return (bool(own) and all(w in asked for w in own)) or (
        not own and bool(asked & set(map(stem, words(piece))))
    )


def _checkable(piece: str) -> list[str]:
    """Content words of ``piece`` once citation markers and URLs are taken out."""
    return content_words(strip_markers(piece))


def screen(
    text: str, start: int, end: int, question: str | None, *, first: bool, heading: bool
) -> tuple[int, int, ScreenReason | None]:
    """Screen one piece ``text[start:end]``; returns (start, end, reason or None for a claim)."""
    piece = text[start:end]
    if _REFUSAL.search(piece):
        return start, end, ScreenReason.REFUSAL
    if _ABOUT_ANSWER.match(piece):
        return start, end, ScreenReason.VAGUE
    if first:  # lead-ins only open a sentence
        start = _strip_lead(text, start, end, _LEAD_IN)
    piece = text[start:end]
    if _OFFER.match(piece) and not (
        re.search(r"contact|call|email|reach", piece, re.I) and _CONTACT.search(piece)
    ):
        return start, end, ScreenReason.OFFER_TO_HELP
    pleasantry = _PLEASANTRY.match(piece)
    if (
        pleasantry is not None
        and not re.search(r"\d", piece)
        and len(content_words(piece[pleasantry.end() :])) <= 3
    ):
        return start, end, ScreenReason.PLEASANTRY
    if _restates(piece, question):
        return start, end, ScreenReason.QUESTION_RESTATEMENT
    hedge = _HEDGE_LEAD.match(piece)
    if hedge is not None:
        if not _checkable(piece[hedge.end() :]):
            return start, end, ScreenReason.HEDGE
        if first:
            start += hedge.end()
            piece = text[start:end]
    if not _checkable(piece):
        return start, end, ScreenReason.HEDGE if _HEDGE_CUE.search(piece) else ScreenReason.VAGUE
    if _about_sources(piece):
        return start, end, ScreenReason.VAGUE  # about the sources or the layout, nothing else
    if piece.endswith("?"):
        return start, end, ScreenReason.VAGUE  # a question asserts nothing
    if heading and not re.search(r"\d", piece):  # "Here are the steps:", "## Refund policy"
        return start, end, ScreenReason.VAGUE
    return start, end, None
