"""Verdicts: the judge interface, its output type, and quote verification.

Three verdicts per claim (``supported``, ``contradicted``, ``absent``) plus ``unjudged`` when the
judge failed (fail closed: never counted as supported). Every ``supported`` or ``contradicted``
verdict must cite evidence with a quote that is really in that item's text, and the quotes must
carry the claim (:func:`verify_quotes`, with :mod:`auditor.judges._carry`); a verdict whose quotes
are not there, or do not state the claim, becomes ``absent`` and the judge error is recorded. This
is also the defence against evidence that tries to instruct the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence, EvidenceKind, without_call
from auditor.judges._agree import QUOTE_DISAGREES, disagreement, keyed_rival_quoted
from auditor.judges._carry import (
    DOES_NOT_SUPPORT,
    Quoted,
    contradiction_shortfall,
    normalised,
    read_quotes,
    support_shortfall,
)
from auditor.text import normalise


class Label(StrEnum):
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    ABSENT = "absent"
    UNJUDGED = "unjudged"


class UnjudgedReason(StrEnum):
    TIMEOUT = "timeout"
    PARSE_FAILURE = "parse_failure"
    TRUNCATED = "truncated"  # the judge's output was cut off
    EVIDENCE_CLIPPED = "evidence_clipped"  # evidence had to be clipped to fit the judge's context
    REFUSED = "refused"
    API_ERROR = "api_error"
    MISSING = "missing"  # the judge returned no verdict for this claim
    OFFLINE_UNDECIDED = "offline_undecided"  # the offline judge did not read all the evidence
    QUOTE_DISAGREES = "quote_disagrees"  # a supported verdict's quote may say otherwise (_agree)


class Citation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str
    quote: str


class ConflictQuote(BaseModel):
    """One side of a conflict: an admitted item's quote that supports, or contradicts, the claim."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str
    quote: str
    stance: Literal["supports", "contradicts"]


class LeftOut(BaseModel):
    """Text of one evidence item the judge was not shown (its budget was spent on other windows).

    ``ranges`` are ``(start, end)`` character offsets into the item's text; ``chars`` is their
    length and ``total`` the item's. ``shares_words`` says whether any of it shares a content word
    or a number with the claim, i.e. whether the judge might have missed something relevant.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str
    ranges: tuple[tuple[int, int], ...]
    chars: int
    total: int
    shares_words: bool


class JudgeIdentity(BaseModel):
    """Who judged: part of every verdict, of the verdict cache key, and of the run record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str  # "offline" | "openai"
    model: str | None = None
    prompt_version: str | None = None
    approximate: bool = False


class ClaimVerdict(BaseModel):
    """The judgement of one claim.

    ``inadmissible_support`` lists excluded evidence that would have supported the claim (the
    verdict itself is decided on admitted evidence only). ``judge_errors`` records what was wrong
    with the judge's output (a quote not found, an unknown evidence id) even when a verdict stands.
    ``common_knowledge`` is set only when the policy allows common knowledge and the judge deemed
    the claim such; it is reported separately, never merged into supported.
    ``conflicts`` holds both sides when one admitted item supports the claim and another
    contradicts it (:mod:`auditor.judges._conflicts`); ``conflict_resolution`` is how the policy's
    ``on_conflict`` settled it (``flag``, ``contradicted`` or ``prefer_newest``), set by the pipeline.
    ``left_out`` lists, item by item, the evidence text an LLM judge was not shown because it
    exceeded the prompt budget (:mod:`auditor.judges._excerpt`); a judge note says the same.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim_id: str
    label: Label
    citations: tuple[Citation, ...] = ()
    inadmissible_support: tuple[str, ...] = ()
    rationale: str | None = None
    unjudged_reason: UnjudgedReason | None = None
    judge_errors: tuple[str, ...] = ()
    common_knowledge: bool = False
    settled_by: str = ""  # which stage decided: "offline", "llm", "cache"
    conflicts: tuple[ConflictQuote, ...] = ()
    conflict_resolution: Literal["flag", "contradicted", "prefer_newest"] | None = None
    left_out: tuple[LeftOut, ...] = ()  # evidence text the judge was not shown (LLM budget)


class Judge(Protocol):
    """Judges the claims of one answer against its evidence.

    Contract: returns exactly one verdict per claim in ``claims`` (same ``claim_id``), deciding on
    ``admitted`` evidence only; it may consult ``excluded`` to fill ``inadmissible_support``.
    A failure is an ``unjudged`` verdict with a reason, never an exception and never a guess.
    """

    identity: JudgeIdentity

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]: ...


def quote_in(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text``, ignoring case and runs of whitespace."""
    needle = normalise(quote)
    return bool(needle) and needle in normalised(text)  # an item's text is normalised once (cached)


def verify_quotes(
    verdict: ClaimVerdict, evidence: Mapping[str, Evidence], *, claim_text: str
) -> ClaimVerdict:
    """Check every citation against the item it names, then that the quotes carry ``claim_text``.

    A citation naming an unknown item, or quoting text that item does not contain, is dropped and
    recorded in ``judge_errors``. A ``supported`` or ``contradicted`` verdict left with no valid
    citation becomes ``absent``; so does one whose verified quotes, taken together, cannot state the
    claim (``supported``: its figures, dates, entities and enough of its words; ``contradicted``: a
    rival figure, date or entity, or its negation), with ``quote_does_not_support`` in
    ``judge_errors`` and the citations dropped. A common-knowledge verdict is counted apart from
    the rates, so only its quotes' presence is checked.
    """
    kept: list[Citation] = []
    errors = list(verdict.judge_errors)
    for citation in verdict.citations:
        item = evidence.get(citation.evidence_id)
        if item is None:
            errors.append(f"cited unknown or inadmissible evidence {citation.evidence_id!r}")
        elif not quote_in(citation.quote, item.text):
            errors.append(f"quote not found in {citation.evidence_id}: {citation.quote[:80]!r}")
        elif item.kind is EvidenceKind.TOOL_RESULT and not quote_in(citation.quote, without_call(item.text)):
            # the "(called as ...)" line is what the agent asked, not what the tool answered
            errors.append(f"quote only from the tool call of {citation.evidence_id}: {citation.quote[:80]!r}")
        else:
            kept.append(citation)
    label = verdict.label
    rationale = verdict.rationale
    reason = verdict.unjudged_reason
    judged = label in (Label.SUPPORTED, Label.CONTRADICTED)
    why = None
    if judged and not kept:
        why = "no verified quote"
    elif judged and not verdict.common_knowledge:
        triples = [(c.quote, c.evidence_id, evidence[c.evidence_id].text) for c in kept]
        quoted = read_quotes(triples)
        shortfall = (
            support_shortfall(claim_text, quoted)
            if label is Label.SUPPORTED
            else _contradiction_shortfall(claim_text, quoted, triples)
        )
        if shortfall is not None:
            why = f"{shortfall}, quoted {kept[0].quote[:80]!r}"
            errors.append(DOES_NOT_SUPPORT)
            kept = []
        elif label is Label.SUPPORTED and (against := disagreement(claim_text, triples)) is not None:
            # the quote holds the claim's words but says otherwise: never support, whatever the
            # judge said (the mark of an obeyed instruction planted in the evidence)
            errors.append(QUOTE_DISAGREES)
            note = f"{against.why}: {against.quote[:80]!r}" + (f" ({rationale})" if rationale else "")
            if against.certain:
                label, rationale = Label.CONTRADICTED, f"the judge said supported, but {note}"
            else:
                label, reason = Label.UNJUDGED, UnjudgedReason.QUOTE_DISAGREES
                rationale = f"the judge said supported, but {note}"
    if why is not None:
        rationale = f"demoted from {label.value}: {why}" + (f" ({rationale})" if rationale else "")
        label = Label.ABSENT
    return verdict.model_copy(
        update={
            "label": label,
            "citations": tuple(kept),
            "judge_errors": tuple(errors),
            "rationale": rationale,
            "unjudged_reason": reason,
        }
    )


def _contradiction_shortfall(
    claim_text: str, quoted: Quoted, triples: Sequence[tuple[str, str, str]]
) -> str | None:
    """None when the quotes contradict the claim: by :func:`contradiction_shortfall`, or by a
    certain disagreement (a supported verdict the check turned, checked again in the pipeline)."""
    shortfall = contradiction_shortfall(claim_text, quoted)
    if shortfall is None:
        return None
    against = disagreement(claim_text, triples)
    if against is not None and against.certain:
        return None
    return None if keyed_rival_quoted(claim_text, triples) else shortfall


def check_complete(
    claims: Sequence[Claim], verdicts: Sequence[ClaimVerdict], settled_by: str
) -> list[ClaimVerdict]:
    """One verdict per claim, in claim order; a claim the judge skipped is ``unjudged: missing``."""
    by_id = {v.claim_id: v for v in verdicts}
    return [
        by_id.get(c.claim_id)
        or ClaimVerdict(
            claim_id=c.claim_id,
            label=Label.UNJUDGED,
            unjudged_reason=UnjudgedReason.MISSING,
            settled_by=settled_by,
        )
        for c in claims
    ]
