"""Turning evidence into prompt input and model output into verdicts, shared by every LLM mode.

:func:`ask_json` makes one structured call and turns every way it can fail into a
:class:`CallFailed` carrying the ``unjudged`` reason. Two rules live here so the separate and fused modes cannot drift apart:

- :func:`auditor.judges.llm._excerpt.fit_evidence` fits evidence to a context budget by ranked windows
  and keeps what it left out; :func:`to_verdict` records that per claim (``left_out`` and a judge
  note) and makes an ``absent`` claim ``unjudged: evidence_clipped`` when the text left out shares a
  word with it (clipping is never silent).
- :func:`to_verdict` converts one model verdict into a :class:`ClaimVerdict`: a label outside the
  offered set is ``unjudged: parse_failure``; an ``inadmissible_support`` id that is not excluded
  evidence is dropped and recorded; ``common_knowledge`` counts only when the policy allowed it;
  the items cited in ``conflicting`` become the other side of a conflict
  (:func:`auditor.judges.verify._conflicts.with_conflict`); and the quotes are always verified
  (:func:`auditor.judges.verify_quotes`).
"""

from __future__ import annotations

from collections.abc import Mapping

from auditor.errors import LLMConnectionError, LLMStatusError, LLMTimeoutError
from auditor.evidence import Evidence
from auditor.judges._verdicts import Citation, ClaimVerdict, Label, LeftOut, UnjudgedReason
from auditor.judges.llm._excerpt import Fitted
from auditor.judges.llm._prompts import JUDGE_LABELS, VerdictOut, parse_json
from auditor.judges.verify import verify_quotes, with_conflict
from auditor.llm import Completion, LLMClient


def unjudged(claim_id: str, reason: UnjudgedReason, error: str, settled_by: str = "llm") -> ClaimVerdict:
    return ClaimVerdict(
        claim_id=claim_id,
        label=Label.UNJUDGED,
        unjudged_reason=reason,
        judge_errors=(error,) if error else (),
        settled_by=settled_by,
    )


def to_verdict(
    out: VerdictOut,
    claim_id: str,
    *,
    claim_text: str,
    admitted: Mapping[str, Evidence],
    excluded_ids: set[str],
    allow_common_knowledge: bool,
    fitted: Fitted,
) -> ClaimVerdict:
    """One checked verdict from one model verdict (see the module docstring for the rules)."""
    if out.label not in JUDGE_LABELS:
        return unjudged(
            claim_id,
            UnjudgedReason.PARSE_FAILURE,
            f"label {out.label[:40]!r} is not one of {', '.join(JUDGE_LABELS)}",
        )
    errors: list[str] = []
    inadmissible: list[str] = []
    for ev_id in out.inadmissible_support:
        if ev_id in excluded_ids:
            inadmissible.append(ev_id)
        else:
            errors.append(f"inadmissible_support names {ev_id[:40]!r}, which is not excluded evidence")
    common = out.common_knowledge
    if common and not allow_common_knowledge:
        errors.append("common_knowledge set although the policy does not allow it; ignored")
        common = False
    given = ClaimVerdict(
        claim_id=claim_id,
        label=Label(out.label),
        citations=tuple(Citation(evidence_id=c.evidence_id, quote=c.quote) for c in out.citations),
        inadmissible_support=tuple(dict.fromkeys(inadmissible)),
        rationale=out.rationale or None,
        judge_errors=tuple(errors),
        common_knowledge=common,
        settled_by="llm",
    )
    opposing = [Citation(evidence_id=c.evidence_id, quote=c.quote) for c in out.conflicting]
    verdict = verify_quotes(
        with_conflict(given, opposing),  # both sides are verified by the pipeline, as for every judge
        admitted,
        claim_text=claim_text,
    )
    left_out = fitted.left_out_for(claim_text)
    if not left_out:
        return verdict
    errors = [*verdict.judge_errors, *(not_shown_note(lo) for lo in left_out)]
    update: dict[str, object] = {"left_out": left_out, "judge_errors": tuple(errors)}
    if verdict.label == Label.ABSENT and any(
        lo.shares_words and lo.evidence_id in admitted for lo in left_out
    ):
        # Admitted text the judge did not see shares words with the claim: "absent" cannot be asserted.
        update["label"] = Label.UNJUDGED
        update["unjudged_reason"] = UnjudgedReason.EVIDENCE_CLIPPED
        update["judge_errors"] = (
            *errors,
            "admitted evidence was clipped to fit the context budget, and the part not shown shares "
            "words with the claim",
        )
    return verdict.model_copy(update=update)


def not_shown_note(lo: LeftOut, most: int = 4) -> str:
    """One line for ``judge_errors``: which characters of an item the judge did not see."""
    spans = ", ".join(f"{s:,}-{e:,}" for s, e in lo.ranges[:most])
    more = f" and {len(lo.ranges) - most} more range(s)" if len(lo.ranges) > most else ""
    share = (
        "some of it shares words with the claim"
        if lo.shares_words
        else "none of it shares a word with the claim"
    )
    return (
        f"evidence not shown to the judge: {lo.evidence_id} characters {spans}{more} "
        f"({lo.chars:,} of {lo.total:,}); {share}"
    )


class CallFailed(Exception):
    """Internal: the call produced no usable output; carries the reason for every claim."""

    def __init__(self, reason: UnjudgedReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


async def ask_json(
    client: LLMClient,
    messages: list[dict[str, str]],
    *,
    schema_name: str,
    schema: dict[str, object],
    max_tokens: int,
    kind: str,
    parse_retries: int = 1,
) -> object:
    """One structured call: the parsed JSON, or :class:`CallFailed` with the unjudged reason.

    Malformed JSON is asked again ``parse_retries`` times; truncation is not (a longer answer
    would need a larger budget, which the caller sized).
    """
    last = ""
    for _ in range(1 + parse_retries):
        try:
            completion: Completion = await client.complete(
                messages, schema_name=schema_name, schema=schema, max_tokens=max_tokens, kind=kind
            )
        except LLMTimeoutError as err:
            raise CallFailed(UnjudgedReason.TIMEOUT, str(err)) from err
        except (LLMStatusError, LLMConnectionError) as err:
            raise CallFailed(UnjudgedReason.API_ERROR, str(err)) from err
        if completion.refusal or completion.finish_reason == "content_filter":
            raise CallFailed(UnjudgedReason.REFUSED, f"the model refused: {(completion.refusal or '')[:120]}")
        if completion.truncated:
            raise CallFailed(
                UnjudgedReason.TRUNCATED, f"output cut off at max_tokens={max_tokens} (finish_reason=length)"
            )
        try:
            return parse_json(completion.content)
        except ValueError as err:
            last = f"malformed JSON from the model: {err}"
    raise CallFailed(UnjudgedReason.PARSE_FAILURE, last)
