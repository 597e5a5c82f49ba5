"""The types claim decomposition produces (the algorithms live in :mod:`auditor.claims`)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from auditor.evidence import Answer


class ScreenReason(StrEnum):
    """Why a sentence was screened out instead of judged."""

    HEDGE = "hedge"  # "I think", "it may be that" with no checkable content left
    QUESTION_RESTATEMENT = "question_restatement"
    OFFER_TO_HELP = "offer_to_help"
    PLEASANTRY = "pleasantry"
    VAGUE = "vague"  # asserts nothing specific enough to check
    REFUSAL = "refusal"  # "I don't have that information"


class Claim(BaseModel):
    """One atomic claim, or one screened-out sentence, of an answer.

    Invariant: ``answer.text[start:end] == text``. Screened claims carry a ``screen_reason`` and
    never get a verdict. ``citations`` are the markers (``[1]``, ``[doc-3]``, a URL) attached to
    the claim in the answer, as written.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim_id: str
    answer_id: str
    text: str
    start: int
    end: int
    screened: bool = False
    screen_reason: ScreenReason | None = None
    citations: tuple[str, ...] = ()


class Decomposition(BaseModel):
    """An answer split into claims; a refusal has no judged claims."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer_id: str
    claims: tuple[Claim, ...]
    refusal: bool = False
    extractor: str = "rules"
    errors: tuple[str, ...] = ()  # what was wrong with an LLM extractor's output (re-located, dropped claims)

    @property
    def judgeable(self) -> list[Claim]:
        return [c for c in self.claims if not c.screened]


class ClaimExtractor(Protocol):
    """Splits answers into claims.

    Contract: every returned claim satisfies ``answer.text[start:end] == text``; claims do not
    overlap; an answer that is a refusal has ``refusal=True``. Never raises for odd text: an
    answer it cannot split becomes one claim.
    """

    name: str

    async def decompose(self, answers: Sequence[Answer]) -> list[Decomposition]: ...
