"""The report's view model: an audit result as the typed :class:`ReportContext` the template reads.

Every string the page shows and every anchor linking claims, quotes and evidence is built here;
the summary is validated as a metrics ``Summary`` first, so a result the page cannot show fails
with :class:`ReportError` before anything is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from auditor.errors import AuditorError
from auditor.judges import describe_unjudged
from auditor.metrics import Summary
from auditor.report._pieces import Piece, answer_pieces, marked_pieces
from auditor.report._quotes import CitationView, ConflictView, Marks, conflict_view, quote_view
from auditor.report._usage import UsageView, usage_view
from auditor.results import AnswerOut, AuditResult, CitationMarkerOut, ClaimOut, EvidenceOut

VERDICTS = ("supported", "contradicted", "absent", "unjudged")
FILTERS = (
    ("all", "All"),
    ("contradicted", "Has contradicted"),
    ("absent", "Has absent"),
    ("unjudged", "Has unjudged"),
    ("conflict", "Has conflicting sources"),
    ("misattributed", "Has misattributed"),
    ("undecided", "Has undecided"),
    ("grounded", "Grounded"),
    ("refusal", "Refusals"),
)
_KIND_LABELS = {
    "tool_result": "tool result",
    "retrieved_document": "retrieved document",
    "user_message": "user message",
    "system_prompt": "system prompt",
    "model_output": "intermediate model output",
    "other": "other",
}


class ReportError(AuditorError):
    """The result cannot be rendered (for example its summary is not a metrics ``Summary``)."""


@dataclass(frozen=True)
class BarPart:
    x: float
    width: float
    css: str
    label: str


@dataclass(frozen=True)
class CitedView:
    """One item a citation marker resolves to, linked to its evidence card."""

    anchor: str | None
    label: str
    admitted: bool | None


@dataclass(frozen=True)
class MarkerView:
    """One citation marker of a claim: what it resolves to and whether that supports the claim."""

    marker: str
    items: list[CitedView]
    resolved_by: str | None
    supports: bool | None
    outcome: str  # "supports", "does not support", "unresolved"
    reason: str


@dataclass(frozen=True)
class ExcludedView:
    anchor: str | None
    label: str
    reason: str


@dataclass(frozen=True)
class ClaimView:
    key: str
    text: str
    verdict: str
    rationale: str | None
    citations: list[CitationView]
    excluded_support: list[ExcludedView]
    rests_only_on_excluded: bool
    unjudged_reason: str | None
    judge_errors: list[str]
    common_knowledge: bool
    markers: list[MarkerView] = field(default_factory=list)
    misattributed: bool = False
    conflict: ConflictView | None = None
    unjudged_text: str = ""  # the reason in a sentence (:func:`auditor.judges.describe_unjudged`)


@dataclass(frozen=True)
class EvidenceView:
    anchor: str
    evidence_id: str
    kind: str
    kind_label: str
    name: str | None
    url: str | None
    hop_path: list[str]
    source_class: str | None
    admitted: bool | None
    reason: str | None
    error: bool
    pieces: list[Piece]
    metadata: list[tuple[str, str]]
    cited_by: list[str]
    callout: str = ""  # how a citation names it: "the user's own message", "document Warranty policy"


@dataclass(frozen=True)
class AnswerView:
    anchor: str
    answer_id: str
    trace_id: str
    question: str | None
    question_type: str | None
    pieces: list[Piece]
    claims: list[ClaimView]
    screened: list[Piece]
    evidence: list[EvidenceView]
    status: str
    tags: list[str]
    counts: dict[str, int]
    groundedness: float | None
    bar: list[BarPart]
    why: str = ""  # why an answer that is not grounded is not, in words, for its card's badge


@dataclass(frozen=True)
class FilterView:
    key: str
    label: str
    count: int


@dataclass(frozen=True)
class ReportContext:
    """Everything ``report.html.j2`` reads; nothing else is passed to the template."""

    title: str
    result: AuditResult
    summary: Summary
    policy_rationale: str | None
    approximate_judge: bool
    answers: list[AnswerView]
    filters: list[FilterView]
    claim_bar: list[BarPart]
    usage: UsageView | None = None  # LLM calls, tokens, caches, cost; None for an offline run
    data: dict[str, Any] = field(default_factory=dict)  # the page's JSON (auditor.report._data.page_data)


def build_context(result: AuditResult, *, policy_rationale: str | None = None) -> ReportContext:
    """The typed context for ``report.html.j2``: every string the page shows, every offset it needs."""
    try:
        summary = Summary.model_validate(result.summary)
    except ValueError as err:
        raise ReportError(
            f"The result's summary is not a metrics Summary, so the report cannot show its "
            f"figures: re-run the audit with this auditor version ({err})"
        ) from err
    answers = [_answer_view(i, a) for i, a in enumerate(result.answers)]
    judge = result.run.judge
    counts = {key: sum(key in a.tags for a in answers) for key, _ in FILTERS}
    counts["all"] = len(answers)
    claim_counts = {v: getattr(summary, v) for v in VERDICTS} | {"screened": summary.screened}
    return ReportContext(
        title=f"Groundedness audit {result.run.id}",
        result=result,
        summary=summary,
        policy_rationale=policy_rationale,
        approximate_judge=judge is not None and (judge.approximate or judge.kind == "offline"),
        answers=answers,
        filters=[FilterView(key, label, counts[key]) for key, label in FILTERS],
        claim_bar=_bar(claim_counts),
        usage=usage_view(result.run.usage),
    )


def _answer_view(index: int, answer: AnswerOut) -> AnswerView:
    anchor = f"a{index}"
    anchors = {e.evidence_id: f"{anchor}e{k}" for k, e in enumerate(answer.evidence)}
    by_id = {e.evidence_id: e for e in answer.evidence}
    claims_out = sorted(answer.claims or [], key=lambda c: (c.start, c.end))
    keyed = [(f"{anchor}c{j}", c) for j, c in enumerate(claims_out)]
    labels = {e.evidence_id: _label(e) for e in answer.evidence}
    marks: Marks = {}
    claims: list[ClaimView] = []
    for key, claim in keyed:
        if claim.screened:
            continue
        citations = [
            quote_view(f"{key}q{q}", c.evidence_id, c.quote, by_id, anchors, labels, marks)
            for q, c in enumerate(claim.citations)
        ]
        view = _claim_view(key, claim, citations, by_id, anchors)
        if claim.conflicts:
            view = replace(view, conflict=conflict_view(key, claim, by_id, anchors, labels, marks))
        claims.append(view)
    cited_by: dict[str, list[str]] = {}
    for claim_view in claims:
        for c in (*claim_view.citations, *_sides(claim_view)):
            if c.evidence_anchor and claim_view.key not in cited_by.setdefault(c.evidence_anchor, []):
                cited_by[c.evidence_anchor].append(claim_view.key)
    evidence = [
        _evidence_view(
            anchors[e.evidence_id], e, marks.get(e.evidence_id, []), cited_by.get(anchors[e.evidence_id], [])
        )
        for e in answer.evidence
    ]
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    counts["screened"] = sum(c.screened for c in claims_out)
    tags = [v for v in ("contradicted", "absent", "unjudged") if counts[v]]
    if any(c.misattributed for c in claims):
        tags.append("misattributed")
    if any(c.conflict for c in claims):
        tags.append("conflict")
    if answer.undecided or any(c.unjudged_reason == "offline_undecided" for c in claims):
        tags.append("undecided")
    if answer.refusal:
        status, tags = "refusal", ["refusal"]
    elif answer.undecided:
        status = "undecided"  # not "not grounded" beside a percentage that leaves the doubt out
    elif answer.grounded:
        status = "grounded"
        tags.append("grounded")
    elif answer.grounded is False:
        status = "not grounded"
    else:
        status = "no judged claims"
    return AnswerView(
        anchor=anchor,
        answer_id=answer.answer_id,
        trace_id=answer.trace_id,
        question=answer.question,
        question_type=answer.question_type,
        pieces=answer_pieces(answer.text, keyed),
        claims=claims,
        screened=[Piece(c.text, key=k, screen_reason=c.screen_reason) for k, c in keyed if c.screened],
        evidence=evidence,
        status=status,
        tags=tags,
        counts=counts,
        groundedness=None if answer.undecided else answer.groundedness,
        bar=_bar(counts),
        why=_why_not_grounded(counts, tags) if status == "not grounded" else "",
    )


def _why_not_grounded(counts: dict[str, int], tags: list[str]) -> str:
    """The reasons behind a "not grounded" badge, so a card whose bar is mostly green says why."""
    reasons = []
    if counts["contradicted"]:
        reasons.append(f"{_claims(counts['contradicted'])} contradicted by its evidence")
    if counts["absent"]:
        reasons.append(f"{_claims(counts['absent'])} found in no admitted evidence")
    if counts["unjudged"]:
        reasons.append(f"{_claims(counts['unjudged'])} the judge could not decide")
    if "conflict" in tags:
        reasons.append("its admitted sources disagree")
    return "; ".join(reasons) or "too few of its claims supported for the policy's threshold"


def _claims(n: int) -> str:
    return f"{n} claim{'' if n == 1 else 's'}"


def _claim_view(
    key: str,
    claim: ClaimOut,
    citations: list[CitationView],
    by_id: dict[str, EvidenceOut],
    anchors: dict[str, str],
) -> ClaimView:
    excluded = [
        ExcludedView(
            anchors.get(eid),
            _label(by_id[eid]) if eid in by_id else eid,
            (by_id[eid].reason or "") if eid in by_id else "",
        )
        for eid in claim.inadmissible_support
    ]
    return ClaimView(
        key=key,
        text=claim.text,
        verdict=claim.verdict or "unjudged",
        rationale=claim.rationale,
        citations=citations,
        excluded_support=excluded,
        rests_only_on_excluded=bool(excluded) and claim.verdict != "contradicted" and not citations,
        unjudged_reason=claim.unjudged_reason,
        unjudged_text=describe_unjudged(claim.unjudged_reason),
        judge_errors=list(claim.judge_errors),
        common_knowledge=claim.common_knowledge,
        markers=[_marker_view(m, by_id, anchors) for m in claim.citation_markers],
        misattributed=claim.misattributed,
    )


_OUTCOMES = {True: "supports", False: "does not support", None: "unresolved"}


def _marker_view(
    marker: CitationMarkerOut, by_id: dict[str, EvidenceOut], anchors: dict[str, str]
) -> MarkerView:
    items = [
        CitedView(anchors.get(eid), _label(by_id[eid]), by_id[eid].admitted)
        if eid in by_id
        else CitedView(None, eid, None)
        for eid in marker.evidence_ids
    ]
    return MarkerView(
        marker=marker.marker,
        items=items,
        resolved_by=marker.resolved_by,
        supports=marker.supports,
        outcome=_OUTCOMES[marker.supports],
        reason=marker.reason,
    )


def _sides(claim: ClaimView) -> list[CitationView]:
    return [*claim.conflict.supports, *claim.conflict.contradicts] if claim.conflict else []


def _evidence_view(
    anchor: str, item: EvidenceOut, spans: list[tuple[int, int, str]], cited_by: list[str]
) -> EvidenceView:
    return EvidenceView(
        anchor=anchor,
        evidence_id=item.evidence_id,
        kind=item.kind,
        kind_label=_KIND_LABELS.get(item.kind, item.kind),
        name=item.name,
        url=item.url,
        hop_path=list(item.hop_path),
        source_class=item.source_class,
        admitted=item.admitted,
        reason=item.reason,
        error=item.error,
        pieces=marked_pieces(item.text, spans),
        metadata=[(k, _short(v)) for k, v in sorted(item.metadata.items())],
        cited_by=cited_by,
        callout=_label(item),
    )


def _label(item: EvidenceOut) -> str:
    """How a callout names an item: "the user's own message", "document Warranty policy 2024"."""
    if item.kind == "user_message":
        return "the user's own message"
    if item.kind == "system_prompt":
        return "the system prompt"
    if item.kind == "model_output":
        return "an intermediate model output"
    title = item.metadata.get("title")
    name = title if isinstance(title, str) and title else item.name
    return (
        f"{_KIND_LABELS.get(item.kind, item.kind)} {name}" if name else _KIND_LABELS.get(item.kind, item.kind)
    )


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bar(counts: dict[str, int], width: float = 100.0) -> list[BarPart]:
    total = sum(counts.get(k, 0) for k in (*VERDICTS, "screened"))
    parts: list[BarPart] = []
    x = 0.0
    for kind in (*VERDICTS, "screened"):
        n = counts.get(kind, 0)
        if n and total:
            w = width * n / total
            parts.append(BarPart(round(x, 3), round(w, 3), kind, f"{n} {kind}"))
            x += w
    return parts
