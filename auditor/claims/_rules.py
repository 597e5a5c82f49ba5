"""Claim decomposition: answers -> atomic claims with exact offsets, non-claims screened out.

``RuleExtractor`` (name ``"rules"``) is the offline, deterministic implementation of
:class:`~auditor.claims.ClaimExtractor`; :func:`decompose_answer` is its plain sync form.
The pipeline, in order (rules and known weaknesses in ``docs/claims.md``):

1. :func:`auditor.claims.sentences`: lines, then sentence terminators (abbreviations,
   decimals, URLs, closing quotes and trailing citation markers respected); bullets left out.
2. :func:`auditor.claims._split.clause_cuts`: coordinated clauses split into atomic pieces.
3. Citation markers attached to the piece they follow (all pieces if they end the sentence).
4. :func:`auditor.claims._screen.screen`: refusals, offers to help, pleasantries, restatements of the
   question, hedges and vague pieces screened with a reason; "I believe"-style lead-ins cut off.
5. An answer whose only screened-out substance is a refusal is a refusal (``refusal=True``).
"""

from __future__ import annotations

from collections.abc import Sequence

from auditor.claims._adopt import adopt_markers
from auditor.claims._model import Claim, ClaimExtractor, Decomposition, ScreenReason
from auditor.claims._screen import screen
from auditor.claims._split import Piece, split_answer, trim
from auditor.evidence import Answer

__all__ = ["EXTRACTOR_NAME", "RuleExtractor", "attach_markers", "decompose_answer", "decompose_text"]

EXTRACTOR_NAME = "rules"


def decompose_text(answer_id: str, text: str, question: str | None = None) -> Decomposition:
    """Split ``text`` into claims; ids are ``f"{answer_id}:c{index}"`` in text order."""
    claims: list[Claim] = []
    for piece in split_answer(text):
        start, end, reason = screen(
            text, piece.start, piece.end, question, first=piece.first, heading=piece.heading
        )
        start, end = trim(text, start, end)
        if end <= start:
            continue
        claims.append(
            Claim(
                claim_id=f"{answer_id}:c{len(claims)}",
                answer_id=answer_id,
                text=text[start:end],
                start=start,
                end=end,
                screened=reason is not None,
                screen_reason=reason,
                citations=piece.citations,
            )
        )
    refused = any(c.screen_reason is ScreenReason.REFUSAL for c in claims)
    refusal = refused and all(c.screened for c in claims)
    return Decomposition(answer_id=answer_id, claims=tuple(claims), refusal=refusal, extractor=EXTRACTOR_NAME)


def decompose_answer(answer: Answer) -> Decomposition:
    """The rule-based decomposition of one answer (sync; no I/O), with the bracketed ids of its
    own evidence taken as citation markers (:func:`auditor.claims._adopt.adopt_markers`)."""
    return adopt_markers(decompose_text(answer.answer_id, answer.text, answer.question), answer)


def attach_markers(decomposition: Decomposition, text: str, answer: Answer | None = None) -> Decomposition:
    """Give the claims of another extractor (an LLM's) the markers the rules would attach.

    A claim without markers gets those of every rule-based piece it overlaps, so citations are
    judged whichever extractor split the answer. Claims that carry markers are left as they are.
    With ``answer``, the bracketed ids of its evidence count as markers too, as the rules adopt
    them (:func:`auditor.claims._adopt.adopt_markers`).
    """
    if decomposition.extractor == EXTRACTOR_NAME or not any(c.start < c.end for c in decomposition.claims):
        return decomposition
    pieces: list[Claim] | list[Piece] = (
        [c for c in decompose_answer(answer).claims if c.citations]
        if answer is not None and answer.text == text
        else [p for p in split_answer(text) if p.citations]
    )
    if not pieces:
        return decomposition
    claims = []
    for claim in decomposition.claims:
        found = [m for p in pieces if p.start < claim.end and claim.start < p.end for m in p.citations]
        if not claim.citations and found:
            claim = claim.model_copy(update={"citations": tuple(dict.fromkeys(found))})
        claims.append(claim)
    return decomposition.model_copy(update={"claims": tuple(claims)})


class RuleExtractor:
    """Rule-based claim extractor: deterministic, offline, stdlib ``re`` only."""

    name: str = EXTRACTOR_NAME
    #: Splits in this process, without calls: the pipeline splits a batch at a time, just ahead of
    #: the judging (:func:`auditor.pipeline.audit_all`), rather than every answer first.
    local: bool = True

    async def decompose(self, answers: Sequence[Answer]) -> list[Decomposition]:
        return [decompose_answer(a) for a in answers]


_: type[ClaimExtractor] = RuleExtractor  # structural check that RuleExtractor satisfies the protocol
