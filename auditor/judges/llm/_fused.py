"""Fused mode: one call that decomposes an answer AND judges its claims.

It saves the second call and sends the evidence once; the price is a longer, harder prompt. The
output goes through the same checks as the separate modes: offsets validated and re-located as in
:mod:`auditor.judges.llm._decompose`, verdicts converted and quote-verified as in
:mod:`auditor.judges.llm._llm`. A failed call leaves the whole answer as one claim, ``unjudged``
with the reason (``FusedResult.failed``). :class:`auditor.judges.CachingFused` caches results per
answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from auditor.claims import Decomposition
from auditor.evidence import Answer, Evidence
from auditor.judges._verdicts import ClaimVerdict, JudgeIdentity, UnjudgedReason
from auditor.judges.llm._decompose import validate_claims, whole_answer
from auditor.judges.llm._excerpt import fit_evidence
from auditor.judges.llm._parse import CallFailed, ask_json, to_verdict, unjudged
from auditor.judges.llm._prompts import (
    PROMPT_VERSION,
    FusedInput,
    FusedOutput,
    VerdictOut,
    fused_schema,
    render_fused,
)
from auditor.judges.reading import sentence_spans
from auditor.llm import LLMClient


@dataclass(frozen=True)
class FusedResult:
    decomposition: Decomposition
    verdicts: list[ClaimVerdict]  # one per judgeable claim, in claim order
    errors: list[str] = field(default_factory=list)  # re-located or dropped claims
    failed: bool = False  # the call failed: the whole answer is one claim, unjudged (never cached)


class FusedAuditor:
    """Decomposes and judges one answer per call.

    Args:
        client: the :class:`~auditor.llm.LLMClient`.
        max_evidence_chars: context budget for evidence text (ranked windows as in ``LLMJudge``).
        tokens_base, tokens_per_char, tokens_per_claim: ``max_tokens`` = base + per_char * len(answer)
            + per_claim * (estimated claims: one per 60 characters).
        max_output_tokens: ceiling on ``max_tokens``.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        max_evidence_chars: int = 60_000,
        tokens_base: int = 200,
        tokens_per_char: float = 0.6,
        tokens_per_claim: int = 220,
        max_output_tokens: int = 8_192,
    ) -> None:
        self.client = client
        self.budget_chars = max_evidence_chars
        self.tokens_base = tokens_base
        self.tokens_per_char = tokens_per_char
        self.tokens_per_claim = tokens_per_claim
        self.max_output_tokens = max_output_tokens
        self.name = f"llm-fused:{client.model}"
        self.identity = JudgeIdentity(kind="openai", model=client.model, prompt_version=PROMPT_VERSION)

    def cache_settings(self) -> dict[str, str]:
        """What changes a result beyond model, prompt version and endpoint (the fused cache's key)."""
        return {"temperature": str(self.client.temperature), "evidence_chars": str(self.budget_chars)}

    def max_tokens_for(self, answer: Answer) -> int:
        n = len(answer.text)
        wanted = self.tokens_base + int(n * self.tokens_per_char) + self.tokens_per_claim * (n // 60 + 1)
        return min(self.max_output_tokens, wanted)

    async def audit(
        self,
        answer: Answer,
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> FusedResult:
        # No claims before the call: the answer's sentences are the retrieval queries.
        sentences = [answer.text[s:e] for s, e in sentence_spans(answer.text)] or [answer.text]
        fitted = fit_evidence(admitted, excluded, self.budget_chars, sentences)
        inp = FusedInput(
            admitted=fitted.admitted,
            excluded=fitted.excluded,
            question=answer.question,
            answer_id=answer.answer_id,
            answer=answer.text,
            allow_common_knowledge=allow_common_knowledge,
        )
        try:
            raw = await ask_json(
                self.client,
                render_fused(inp),
                schema_name="answer_claims_verdicts",
                schema=fused_schema(allow_common_knowledge),
                max_tokens=self.max_tokens_for(answer),
                kind="fused",
            )
            output = FusedOutput.model_validate(raw)
        except (CallFailed, ValidationError) as err:
            reason, message = (
                (err.reason, err.message)
                if isinstance(err, CallFailed)
                else (
                    UnjudgedReason.PARSE_FAILURE,
                    f"output does not match the schema: {err.error_count()} errors",
                )
            )
            claims = whole_answer(answer)
            return FusedResult(
                Decomposition(answer_id=answer.answer_id, claims=claims, extractor=self.name),
                [unjudged(c.claim_id, reason, message) for c in claims],
                [message],
                failed=True,
            )
        if output.refusal:
            return FusedResult(
                Decomposition(answer_id=answer.answer_id, claims=(), refusal=True, extractor=self.name), []
            )
        errors: list[str] = []
        pairs = validate_claims(answer, output.claims, errors)
        by_id = {e.evidence_id: e for e in admitted}
        excluded_ids = {e.evidence_id for e in excluded}
        verdicts = []
        for out, claim in pairs:
            if claim.screened:
                continue
            if out.label is None:
                verdicts.append(
                    unjudged(claim.claim_id, UnjudgedReason.MISSING, "no label for an unscreened claim")
                )
                continue
            verdicts.append(
                to_verdict(
                    VerdictOut(
                        claim_id=claim.claim_id,
                        label=out.label,
                        citations=out.citations,
                        conflicting=out.conflicting,
                        inadmissible_support=out.inadmissible_support,
                        rationale=out.rationale,
                        common_knowledge=out.common_knowledge,
                    ),
                    claim.claim_id,
                    claim_text=claim.text,
                    admitted=by_id,
                    excluded_ids=excluded_ids,
                    allow_common_knowledge=allow_common_knowledge,
                    fitted=fitted,
                )
            )
        decomposition = Decomposition(
            answer_id=answer.answer_id, claims=tuple(c for _, c in pairs), extractor=self.name
        )
        return FusedResult(decomposition, verdicts, errors)
