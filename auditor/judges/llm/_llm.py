"""The LLM judge: all claims of one answer in one chat completion, checked like any other judge.

Evidence goes first in the prompt (admitted and excluded in separate delimited sections), the
claims after it; the output is validated with pydantic. What can go wrong becomes data, claim by
claim (``unjudged`` with a reason), never an exception and never a guess:

===========================================  ==========================================
the model's output                            the claims' verdicts
===========================================  ==========================================
timed out / no connection after retries      ``unjudged: timeout``
an error status after retries                ``unjudged: api_error``
``finish_reason == "length"``                ``unjudged: truncated``
a refusal or content filter                  ``unjudged: refused``
not JSON / wrong shape (after one re-ask)     ``unjudged: parse_failure``
a label outside the offered set              that claim ``unjudged: parse_failure``
an unknown claim id                          recorded; claims left without a verdict are
                                             ``unjudged: parse_failure``
no verdict for a claim                       ``unjudged: missing``
evidence over the budget                     ranked windows shown; each verdict records what
                                             was left out (``left_out``, a judge note);
                                             ``absent`` becomes ``unjudged: evidence_clipped``
                                             when admitted text left out shares its words
a quote not in the item it cites             citation dropped; ``absent`` if none is left
===========================================  ==========================================
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence
from auditor.judges._verdicts import ClaimVerdict, JudgeIdentity, UnjudgedReason, check_complete
from auditor.judges.llm._excerpt import Fitted, fit_evidence
from auditor.judges.llm._parse import CallFailed, ask_json, to_verdict, unjudged
from auditor.judges.llm._prompts import (
    PROMPT_VERSION,
    ClaimIn,
    JudgeInput,
    JudgeOutput,
    judge_schema,
    render_judge,
)
from auditor.llm import LLMClient


class LLMJudge:
    """Judges the claims of one answer in one call to an OpenAI-compatible chat model.

    Args:
        client: the :class:`~auditor.llm.LLMClient` (model, endpoint, retries, limiter).
        max_evidence_chars: context budget for evidence text; beyond it, long items show the
            windows that best match the claims (:mod:`auditor.judges.llm._excerpt`).
        max_evidence_tokens: the same budget in estimated tokens (4 characters each); wins if given.
        tokens_base: ``max_tokens`` for the reply's frame.
        tokens_per_claim: ``max_tokens`` added per claim.
        max_output_tokens: ceiling on ``max_tokens``.
        parse_retries: re-asks after malformed output.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        max_evidence_chars: int = 60_000,
        max_evidence_tokens: int | None = None,
        tokens_base: int = 200,
        tokens_per_claim: int = 220,
        max_output_tokens: int = 8_192,
        parse_retries: int = 1,
    ) -> None:
        self.client = client
        self.budget_chars = max_evidence_tokens * 4 if max_evidence_tokens is not None else max_evidence_chars
        self.tokens_base = tokens_base
        self.tokens_per_claim = tokens_per_claim
        self.max_output_tokens = max_output_tokens
        self.parse_retries = parse_retries
        self.identity = JudgeIdentity(kind="openai", model=client.model, prompt_version=PROMPT_VERSION)

    def cache_settings(self) -> dict[str, str]:
        """What changes a verdict beyond model, prompt version and endpoint (the verdict cache's key)."""
        return {"temperature": str(self.client.temperature), "evidence_chars": str(self.budget_chars)}

    def max_tokens_for(self, n_claims: int) -> int:
        return min(self.max_output_tokens, self.tokens_base + self.tokens_per_claim * n_claims)

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        if not claims:
            return []
        fitted = fit_evidence(admitted, excluded, self.budget_chars, [c.text for c in claims])
        inp = JudgeInput(
            admitted=fitted.admitted,
            excluded=fitted.excluded,
            question=answer.question,
            answer=answer.text,
            claims=tuple(ClaimIn(claim_id=c.claim_id, text=c.text) for c in claims),
            allow_common_knowledge=allow_common_knowledge,
        )
        try:
            raw = await ask_json(
                self.client,
                render_judge(inp),
                schema_name="claim_verdicts",
                schema=judge_schema(allow_common_knowledge),
                max_tokens=self.max_tokens_for(len(claims)),
                kind="judge",
                parse_retries=self.parse_retries,
            )
            output = JudgeOutput.model_validate(raw)
        except CallFailed as failed:
            return [unjudged(c.claim_id, failed.reason, failed.message) for c in claims]
        except ValidationError as err:
            message = f"model output does not match the verdict schema: {err.error_count()} error(s)"
            return [unjudged(c.claim_id, UnjudgedReason.PARSE_FAILURE, message) for c in claims]
        return self._verdicts(
            output,
            claims,
            admitted,
            excluded,
            allow_common_knowledge,
            fitted=fitted,
            clipped_excluded=any(e.evidence_id in fitted.clipped for e in excluded),
        )

    def _verdicts(
        self,
        output: JudgeOutput,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool,
        *,
        fitted: Fitted,
        clipped_excluded: bool,
    ) -> list[ClaimVerdict]:
        wanted = {c.claim_id: c.text for c in claims}
        by_id = {e.evidence_id: e for e in admitted}
        excluded_ids = {e.evidence_id for e in excluded}
        got: dict[str, ClaimVerdict] = {}
        unknown: list[str] = []
        for out in output.verdicts:
            if out.claim_id not in wanted:
                unknown.append(out.claim_id[:40])
                continue
            if out.claim_id in got:
                continue  # a second verdict for the same claim: the first one stands
            verdict = to_verdict(
                out,
                out.claim_id,
                claim_text=wanted[out.claim_id],
                admitted=by_id,
                excluded_ids=excluded_ids,
                allow_common_knowledge=allow_common_knowledge,
                fitted=fitted,
            )
            if clipped_excluded:
                verdict = verdict.model_copy(
                    update={
                        "judge_errors": (
                            *verdict.judge_errors,
                            "excluded evidence was clipped: inadmissible_support may be incomplete",
                        )
                    }
                )
            got[out.claim_id] = verdict
        if unknown:
            message = f"the model answered for unknown claim id(s) {unknown}"
            for claim in claims:
                if claim.claim_id not in got:
                    got[claim.claim_id] = unjudged(claim.claim_id, UnjudgedReason.PARSE_FAILURE, message)
        return check_complete(claims, list(got.values()), settled_by="llm")
