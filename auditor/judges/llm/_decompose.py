"""The LLM claim extractor: one call per answer, offsets checked against the answer text.

Models are unreliable at character offsets, so every returned claim is validated: if
``answer.text[start:end]`` is not the claim's text, the text is searched for (exactly, then
ignoring case and whitespace; the occurrence nearest the given offset that overlaps no earlier
claim wins) and the claim is re-located; a claim found nowhere is dropped and the drop recorded in
:attr:`LLMDecomposer.errors`. The invariant ``answer.text[start:end] == claim.text`` therefore holds
for every claim this module returns. An answer whose call failed becomes one claim covering the
whole answer (the :class:`~auditor.claims.ClaimExtractor` contract: never raise for odd text).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TypeVar

from pydantic import ValidationError

from auditor.claims import Claim, Decomposition, ScreenReason
from auditor.evidence import Answer
from auditor.judges._verdicts import JudgeIdentity
from auditor.judges.llm._parse import CallFailed, ask_json
from auditor.judges.llm._prompts import (
    PROMPT_VERSION,
    ClaimOut,
    DecomposeInput,
    DecomposeOutput,
    decompose_schema,
    render_decompose,
)
from auditor.llm import LLMClient

C = TypeVar("C", bound=ClaimOut)

#: How the error of a failed decomposition ends (the call failed; the whole answer is one claim).
WHOLE_ANSWER_KEPT = "whole answer kept as one claim"


def call_failed(decomposition: Decomposition) -> bool:
    """True for a decomposition whose call failed (its claim is the whole answer): never cache it."""
    return any(e.endswith("; " + WHOLE_ANSWER_KEPT) for e in decomposition.errors)


def _overlaps(span: tuple[int, int], taken: Sequence[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


def locate(
    text: str, claim_text: str, start: int, end: int, taken: Sequence[tuple[int, int]] = ()
) -> tuple[int, int] | None:
    """Where ``claim_text`` is in ``text``: the given span if right, else the nearest free occurrence."""
    if (
        0 <= start <= end <= len(text)
        and text[start:end] == claim_text
        and not _overlaps((start, end), taken)
    ):
        return start, end
    needle = claim_text.strip()
    if not needle:
        return None
    tokens = needle.split()
    pattern = re.compile(r"\s+".join(re.escape(t) for t in tokens), re.IGNORECASE)
    spans = [(m.start(), m.end()) for m in pattern.finditer(text)]
    free = [s for s in spans if not _overlaps(s, taken)]
    if not free:
        return None
    return min(free, key=lambda s: abs(s[0] - start))


def _screen(reason: str | None, errors: list[str], text: str) -> ScreenReason | None:
    try:
        return ScreenReason(reason) if reason else None
    except ValueError:
        errors.append(f"unknown screen_reason {str(reason)[:30]!r} for {text[:40]!r}: kept as a claim")
        return None


def validate_claims(answer: Answer, outs: Sequence[C], errors: list[str]) -> list[tuple[C, Claim]]:
    """Claims with offsets that round-trip, in answer order; ids ``{answer_id}:c{n}``.

    Each result pairs the model's claim with the checked :class:`Claim` (the fused mode reads the
    verdict fields from the former).
    """
    placed: list[tuple[C, int, int]] = []
    for out in outs:
        span = locate(answer.text, out.text, out.start, out.end, [(s, e) for _, s, e in placed])
        if span is None:
            errors.append(f"claim not found in the answer, dropped: {out.text[:60]!r}")
            continue
        if span != (out.start, out.end):
            errors.append(
                f"claim re-located from {out.start}-{out.end} to {span[0]}-{span[1]}: {out.text[:40]!r}"
            )
        placed.append((out, *span))
    placed.sort(key=lambda p: p[1])
    result = []
    for n, (out, s, e) in enumerate(placed):
        reason = _screen(out.screen_reason, errors, out.text) if out.screened else None
        result.append(
            (
                out,
                Claim(
                    claim_id=f"{answer.answer_id}:c{n}",
                    answer_id=answer.answer_id,
                    text=answer.text[s:e],
                    start=s,
                    end=e,
                    screened=reason is not None,
                    screen_reason=reason,
                ),
            )
        )
    return result


def whole_answer(answer: Answer) -> tuple[Claim, ...]:
    """The fallback: one claim spanning the answer's stripped text (none for an empty answer)."""
    stripped = answer.text.strip()
    if not stripped:
        return ()
    start = answer.text.index(stripped)
    return (
        Claim(
            claim_id=f"{answer.answer_id}:c0",
            answer_id=answer.answer_id,
            text=stripped,
            start=start,
            end=start + len(stripped),
        ),
    )


class LLMDecomposer:
    """Implements :class:`~auditor.claims.ClaimExtractor` with one LLM call per answer.

    Args:
        client: the :class:`~auditor.llm.LLMClient`.
        tokens_base: ``max_tokens`` for the reply's frame.
        tokens_per_char: ``max_tokens`` per character of answer (claims copy the answer's text).
        max_output_tokens: ceiling on ``max_tokens``.

    :attr:`errors` maps an answer id to what was wrong with the model's output for it (re-located
    or dropped claims, a failed call) in the latest :meth:`decompose`. :attr:`identity` (model and
    prompt version) is what :class:`~auditor.judges.cache._cache.CachingExtractor` keys on; a failed call's
    decomposition is recognised by :func:`call_failed`.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        tokens_base: int = 200,
        tokens_per_char: float = 0.6,
        max_output_tokens: int = 8_192,
    ) -> None:
        self.client = client
        self.name = f"llm:{client.model}"
        # What decides the output, for the decomposition cache: the model and the prompt version.
        self.identity = JudgeIdentity(kind="openai", model=client.model, prompt_version=PROMPT_VERSION)
        self.tokens_base = tokens_base
        self.tokens_per_char = tokens_per_char
        self.max_output_tokens = max_output_tokens
        self.errors: dict[str, list[str]] = {}

    def cache_settings(self) -> dict[str, str]:
        """What changes a decomposition beyond model, prompt version and endpoint (its cache key)."""
        return {"temperature": str(self.client.temperature)}

    def max_tokens_for(self, answer: Answer) -> int:
        return min(self.max_output_tokens, self.tokens_base + int(len(answer.text) * self.tokens_per_char))

    async def decompose(self, answers: Sequence[Answer]) -> list[Decomposition]:
        self.errors = {}
        return list(await asyncio.gather(*(self._one(a) for a in answers)))

    async def _one(self, answer: Answer) -> Decomposition:
        errors = self.errors.setdefault(answer.answer_id, [])
        messages = render_decompose(
            DecomposeInput(answer_id=answer.answer_id, question=answer.question, answer=answer.text)
        )
        try:
            raw = await ask_json(
                self.client,
                messages,
                schema_name="answer_claims",
                schema=decompose_schema(),
                max_tokens=self.max_tokens_for(answer),
                kind="decompose",
            )
            output = DecomposeOutput.model_validate(raw)
        except CallFailed as failed:
            errors.append(
                f"decomposition failed ({failed.reason.value}): {failed.message}; {WHOLE_ANSWER_KEPT}"
            )
            return Decomposition(
                answer_id=answer.answer_id,
                claims=whole_answer(answer),
                extractor=self.name,
                errors=tuple(errors),
            )
        except ValidationError as err:
            errors.append(
                f"decomposition output does not match the schema ({err.error_count()} errors); "
                f"{WHOLE_ANSWER_KEPT}"
            )
            return Decomposition(
                answer_id=answer.answer_id,
                claims=whole_answer(answer),
                extractor=self.name,
                errors=tuple(errors),
            )
        if output.refusal:
            return Decomposition(answer_id=answer.answer_id, claims=(), refusal=True, extractor=self.name)
        claims = tuple(c for _, c in validate_claims(answer, output.claims, errors))
        return Decomposition(
            answer_id=answer.answer_id, claims=claims, extractor=self.name, errors=tuple(errors)
        )
