"""Verdicts: the judge interface and its output type.

Three verdicts per claim (``supported``, ``contradicted``, ``absent``) plus ``unjudged`` when the
judge failed (fail closed: never counted as supported). Every ``supported`` or ``contradicted``
verdict must cite evidence with a quote that is really in that item's text; the check every
judge's verdict passes is :func:`auditor.judges.verify.verify_quotes`.

:class:`Configured` is what a cached judge's settings look like: the caches key a verdict by them
(a changed temperature or evidence budget is a miss), :func:`settings_of` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence


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
    contradicts it (:mod:`auditor.judges.verify._conflicts`); ``conflict_resolution`` is how the policy's
    ``on_conflict`` settled it (``flag``, ``contradicted`` or ``prefer_newest``), set by the pipeline.
    ``left_out`` lists, item by item, the evidence text an LLM judge was not shown because it
    exceeded the prompt budget (:mod:`auditor.judges.llm._excerpt`); a judge note says the same.
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


@runtime_checkable
class Configured(Protocol):
    """A judge, decomposer or fused auditor whose settings change what it returns.

    Contract: ``cache_settings()`` names every setting, beyond the identity (model, prompt version)
    and the endpoint, that can change a cached result (a sampling temperature, the evidence budget
    of the prompt, a first stage that settles claims without the model), each as a string.
    """

    def cache_settings(self) -> Mapping[str, str]: ...


def settings_of(component: object) -> tuple[str, ...]:
    """``component``'s :class:`Configured` settings as sorted ``name=value`` key parts; () for
    a component without any (the offline judge, a third party's judge)."""
    if not isinstance(component, Configured):
        return ()
    return tuple(f"{k}={v}" for k, v in sorted(component.cache_settings().items()))
