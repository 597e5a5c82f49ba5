"""Citations judged against what they cite: does the item a marker names support its claim?

A claim's verdict is decided on the whole admitted set; a marker claims more: that *this* item
says it. After the verdict is verified, each resolved marker
(:class:`~auditor.claims.MarkerResolution`) is checked against its cited items, at no extra call
where the verdict already answers the question:

- the marker names nothing, or only excluded items: ``supports`` is None, with the reason;
- the claim is unjudged: None (nothing was decided);
- the claim is ``absent``: False (no admitted item supports it, so neither does the cited one);
- the verdict's verified quotes come from a cited item: True when ``supported``, False when
  ``contradicted`` (the cited item contradicts it);
- otherwise (the quotes come from other items) the claim is **re-checked against the cited admitted
  items alone** with the same judge, its verdict verified like any other (:func:`verify_quotes`);
  ``supported`` there is True, anything judged is False, a failure None. Claims of one answer
  citing the same items are re-checked in one call.

A claim is **misattributed** when its verdict is ``supported`` (on verified quotes), some marker of
it was checked, and no marker's cited item supports it: supported elsewhere, not where it says.
See ``docs/metrics.md``, "Citations".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from auditor.claims import Claim, MarkerResolution
from auditor.evidence import Answer, Evidence
from auditor.judges._verdicts import ClaimVerdict, Judge, Label, check_complete
from auditor.judges.verify._quotes import verify_quotes


class MarkerCheck(BaseModel):
    """One marker of a claim: the items it resolves to and whether they support the claim."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    marker: str
    evidence_ids: tuple[str, ...] = ()
    resolved_by: str | None = None
    supports: bool | None = None
    reason: str = ""


class Attribution(BaseModel):
    """The markers of one claim, checked, and whether the claim is misattributed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim_id: str
    markers: tuple[MarkerCheck, ...]
    misattributed: bool = False


def _check(
    resolution: MarkerResolution, verdict: ClaimVerdict, admitted: Mapping[str, Evidence]
) -> tuple[MarkerCheck, frozenset[str] | None]:
    """The check of one marker decided without a call, or the cited admitted ids to re-check against."""
    base = MarkerCheck(
        marker=resolution.marker, evidence_ids=resolution.evidence_ids, resolved_by=resolution.resolved_by
    )
    cited = frozenset(i for i in resolution.evidence_ids if i in admitted)
    if not resolution.evidence_ids:
        return base.model_copy(update={"reason": resolution.reason or "names no evidence item"}), None
    if not cited:
        listed = ", ".join(resolution.evidence_ids)
        return base.model_copy(update={"reason": f"cites only evidence the policy excludes ({listed})"}), None
    if verdict.label is Label.UNJUDGED:
        why = verdict.unjudged_reason.value if verdict.unjudged_reason else "unknown"
        return base.model_copy(update={"reason": f"the claim was not judged ({why})"}), None
    if verdict.label is Label.ABSENT:
        return base.model_copy(
            update={
                "supports": False,
                "reason": "no admitted item supports the claim, the cited one included",
            }
        ), None
    if {c.evidence_id for c in verdict.citations} & cited:
        if verdict.label is Label.SUPPORTED:
            return base.model_copy(
                update={"supports": True, "reason": "the verified quote comes from the cited item"}
            ), None
        return base.model_copy(
            update={"supports": False, "reason": "the cited item contradicts the claim"}
        ), None
    return base, cited


def _rechecked(check: MarkerCheck, verdict: ClaimVerdict, original: ClaimVerdict) -> MarkerCheck:
    elsewhere = ", ".join(dict.fromkeys(c.evidence_id for c in original.citations)) or "other items"
    if verdict.label is Label.SUPPORTED and verdict.citations:
        return check.model_copy(
            update={
                "supports": True,
                "reason": "re-checked against the cited item alone: it supports the claim",
            }
        )
    if verdict.label is Label.UNJUDGED:
        why = verdict.unjudged_reason.value if verdict.unjudged_reason else "unknown"
        return check.model_copy(
            update={"reason": f"the re-check against the cited item alone failed ({why})"}
        )
    said = "contradicts" if verdict.label is Label.CONTRADICTED else "does not state"
    if original.label is Label.SUPPORTED:
        reason = f"supported by {elsewhere}, but the cited item {said} it (re-checked alone)"
    else:
        reason = f"re-checked against the cited item alone: it {said} the claim"
    return check.model_copy(update={"supports": False, "reason": reason})


async def check_citations(
    answer: Answer,
    claims: Sequence[Claim],
    verdicts: Sequence[ClaimVerdict],
    resolutions: Mapping[str, Sequence[MarkerResolution]],
    admitted: Sequence[Evidence],
    judge: Judge | None,
    allow_common_knowledge: bool = False,
) -> dict[str, Attribution]:
    """Check every marker of ``claims`` against the items it cites (module docstring).

    Args:
        answer: the answer the claims come from.
        claims: the judged claims, in the order of ``verdicts``.
        verdicts: their verified verdicts.
        resolutions: each claim's markers resolved (:func:`~auditor.claims.resolve_markers`).
        admitted: the evidence the policy admits.
        judge: the judge for re-checks; None leaves a marker that needs one undecided.
        allow_common_knowledge: the policy's switch, passed to the re-check.

    Returns:
        An :class:`Attribution` per claim that carries a marker, by claim id.
    """
    by_id = {e.evidence_id: e for e in admitted}
    by_claim = {c.claim_id: c for c in claims}
    checks: dict[str, list[MarkerCheck]] = {}
    pending: dict[frozenset[str], list[tuple[str, int]]] = {}
    original = {v.claim_id: v for v in verdicts}
    for verdict in verdicts:
        for resolution in resolutions.get(verdict.claim_id, ()):
            check, cited = _check(resolution, verdict, by_id)
            row = checks.setdefault(verdict.claim_id, [])
            row.append(check)
            if cited is not None:
                pending.setdefault(cited, []).append((verdict.claim_id, len(row) - 1))
    for cited, slots in pending.items():
        items = [e for e in admitted if e.evidence_id in cited]
        group = [by_claim[c] for c in dict.fromkeys(claim_id for claim_id, _ in slots)]
        if judge is None:
            for claim_id, k in slots:
                checks[claim_id][k] = checks[claim_id][k].model_copy(
                    update={"reason": "no judge to re-check the claim against the cited item"}
                )
            continue
        raw = await judge.judge(answer, group, items, [], allow_common_knowledge)
        cited_by_id = {e.evidence_id: e for e in items}
        rechecked = {
            v.claim_id: verify_quotes(v, cited_by_id, claim_text=c.text)
            for c, v in zip(group, check_complete(group, raw, settled_by=judge.identity.kind), strict=True)
        }
        for claim_id, k in slots:
            checks[claim_id][k] = _rechecked(checks[claim_id][k], rechecked[claim_id], original[claim_id])
    out: dict[str, Attribution] = {}
    for claim_id, row in checks.items():
        verdict = original[claim_id]
        supported = verdict.label is Label.SUPPORTED and bool(verdict.citations)
        decided = [m.supports for m in row if m.supports is not None]
        out[claim_id] = Attribution(
            claim_id=claim_id,
            markers=tuple(row),
            misattributed=supported and bool(decided) and not any(decided),
        )
    return out
