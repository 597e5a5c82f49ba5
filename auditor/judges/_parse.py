"""Turning evidence into prompt input and model output into verdicts, shared by every LLM mode.

:func:`ask_json` makes one structured call and turns every way it can fail into a
:class:`CallFailed` carrying the ``unjudged`` reason. Two rules live here so the separate and fused modes cannot drift apart:

- :func:`fit_evidence` clips evidence to a context budget and says which items it clipped (the
  judge then marks affected claims ``unjudged: evidence_clipped``; clipping is never silent).
- :func:`to_verdict` converts one model verdict into a :class:`ClaimVerdict`: a label outside the
  offered set is ``unjudged: parse_failure``; an ``inadmissible_support`` id that is not excluded
  evidence is dropped and recorded; ``common_knowledge`` counts only when the policy allowed it;
  the items cited in ``conflicting`` become the other side of a conflict
  (:func:`auditor.judges._conflicts.with_conflict`); and the quotes are always verified
  (:func:`auditor.judges.verify_quotes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from auditor.errors import LLMConnectionError, LLMStatusError, LLMTimeoutError
from auditor.evidence import Evidence
from auditor.judges._conflicts import with_conflict
from auditor.judges._prompts import JUDGE_LABELS, EvidenceIn, VerdictOut, parse_json
from auditor.judges._verdicts import Citation, ClaimVerdict, Label, UnjudgedReason, verify_quotes
from auditor.llm import Completion, LLMClient

CLIP_MARK = "\n[... clipped: {n} characters not shown]"


def _share(lengths: list[int], budget: int) -> list[int]:
    """Water-filling: short items keep all their text, long ones share what remains equally."""
    allowed = [0] * len(lengths)
    remaining = max(0, budget)
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for pos, i in enumerate(order):
        fair = remaining // (len(order) - pos)
        allowed[i] = min(lengths[i], fair)
        remaining -= allowed[i]
    return allowed


def fit_evidence(
    admitted: Sequence[Evidence], excluded: Sequence[Evidence], budget_chars: int
) -> tuple[tuple[EvidenceIn, ...], tuple[EvidenceIn, ...], set[str]]:
    """Prompt items for the evidence within ``budget_chars`` of text; admitted items are served first.

    Returns the admitted and excluded prompt items and the ids of items that were clipped.
    """
    clipped: set[str] = set()

    def convert(items: Sequence[Evidence], budget: int) -> tuple[tuple[EvidenceIn, ...], int]:
        allowed = _share([len(e.text) for e in items], budget)
        out = []
        for item, keep in zip(items, allowed, strict=True):
            text = item.text
            if keep < len(text):
                clipped.add(item.evidence_id)
                text = text[:keep] + CLIP_MARK.format(n=len(text) - keep)
            out.append(
                EvidenceIn(
                    evidence_id=item.evidence_id,
                    kind=item.kind.value,
                    name=item.name,
                    text=text,
                    clipped=keep < len(item.text),
                )
            )
        return tuple(out), budget - sum(allowed)

    admitted_in, left = convert(admitted, budget_chars)
    excluded_in, _ = convert(excluded, left)
    return admitted_in, excluded_in, clipped


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
    clipped_admitted: bool,
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
    if clipped_admitted and verdict.label == Label.ABSENT:
        # The missing text might have addressed the claim: "absent" cannot be asserted.
        return verdict.model_copy(
            update={
                "label": Label.UNJUDGED,
                "unjudged_reason": UnjudgedReason.EVIDENCE_CLIPPED,
                "judge_errors": (
                    *verdict.judge_errors,
                    "admitted evidence was clipped to fit the context budget",
                ),
            }
        )
    return verdict


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
