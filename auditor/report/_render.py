"""The HTML audit report: one self-contained file rendered from the Jinja2 templates.

One job: turn an :class:`~auditor.results.AuditResult` into a typed :class:`ReportContext` and render
``report.html.j2`` with it. Guarantees:

- the document makes no network request: CSS, JS and SVG are inlined, no fonts or images are fetched;
- trace content is untrusted, so templates are autoescaped and nothing from a trace is marked safe;
  the data the page's script reads is embedded with ``tojson`` (``<``, ``>``, ``&`` escaped);
- templates are strict (``StrictUndefined``): a missing figure fails the render instead of printing
  an empty cell;
- everything that needs care (where a quote sits in its evidence, how claims cut the answer text) is
  computed here, so the page's script only toggles classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

from jinja2 import Environment, FunctionLoader, StrictUndefined, Template

from auditor.errors import AuditorError
from auditor.metrics import Interval, Rate, Summary
from auditor.results import AnswerOut, AuditResult, ClaimOut, EvidenceOut

VERDICTS = ("supported", "contradicted", "absent", "unjudged")
FILTERS = (
    ("all", "All"),
    ("contradicted", "Has contradicted"),
    ("absent", "Has absent"),
    ("unjudged", "Has unjudged"),
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
class Piece:
    """A run of text. In an answer: plain, a claim (``key`` set) or a screened sentence.
    In an evidence item: ``marks`` names the citations whose quote covers this run."""

    text: str
    key: str | None = None
    verdict: str | None = None
    screen_reason: str | None = None
    marks: tuple[str, ...] = ()


@dataclass(frozen=True)
class BarPart:
    x: float
    width: float
    css: str
    label: str


@dataclass(frozen=True)
class CitationView:
    key: str
    evidence_anchor: str | None
    evidence_label: str
    quote: str
    found: bool


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
    data: dict[str, Any] = field(default_factory=dict)


def render_report(result: AuditResult, *, policy_rationale: str | None = None) -> str:
    """Render the audit as one self-contained HTML document.

    Args:
        result: the audit's public result; its ``summary`` must be a dumped metrics ``Summary``.
        policy_rationale: the policy file's rationale, shown beside its name and hash.

    Returns:
        The HTML document as a string.

    Raises:
        ReportError: the result's summary is not a metrics ``Summary``.
    """
    return render_context(build_context(result, policy_rationale=policy_rationale))


def write_report(result: AuditResult, path: str | Path, *, policy_rationale: str | None = None) -> Path:
    """Render the report and write it to ``path`` (UTF-8); returns the path written."""
    target = Path(path)
    target.write_text(render_report(result, policy_rationale=policy_rationale), encoding="utf-8")
    return target


def render_context(context: ReportContext) -> str:
    return template().render(report=context)


def environment() -> Environment:
    env = Environment(
        loader=FunctionLoader(_load_template),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = pct
    env.filters["ci"] = ci
    return env


def template() -> Template:
    return environment().get_template("report.html.j2")


def _load_template(name: str) -> str | None:
    item = resources.files("auditor.reports_templates").joinpath(name)
    return item.read_text(encoding="utf-8") if item.is_file() else None


def pct(value: float | Rate | None, digits: int = 1) -> str:
    number = value.value if isinstance(value, Rate) else value
    return "n/a" if number is None else f"{number * 100:.{digits}f}%"


def ci(interval: Interval | None) -> str:
    return "n/a" if interval is None else f"{interval.low * 100:.1f}\N{EN DASH}{interval.high * 100:.1f}%"


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
    data: dict[str, Any] = {"claims": {}}
    for answer in answers:
        for claim in answer.claims:
            data["claims"][claim.key] = {
                "answer": answer.anchor,
                "quotes": [c.key for c in claim.citations if c.found],
                "evidence": sorted({c.evidence_anchor for c in claim.citations if c.evidence_anchor}),
                "excluded": [x.anchor for x in claim.excluded_support if x.anchor],
            }
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
        data=data,
    )


def _answer_view(index: int, answer: AnswerOut) -> AnswerView:
    anchor = f"a{index}"
    anchors = {e.evidence_id: f"{anchor}e{k}" for k, e in enumerate(answer.evidence)}
    by_id = {e.evidence_id: e for e in answer.evidence}
    claims_out = sorted(answer.claims or [], key=lambda c: (c.start, c.end))
    keyed = [(f"{anchor}c{j}", c) for j, c in enumerate(claims_out)]
    marks: dict[str, list[tuple[int, int, str]]] = {}
    claims: list[ClaimView] = []
    for key, claim in keyed:
        if claim.screened:
            continue
        citations = []
        for q, cite in enumerate(claim.citations):
            ckey = f"{key}q{q}"
            item = by_id.get(cite.evidence_id)
            span = find_quote(item.text, cite.quote) if item else None
            if span and item:
                marks.setdefault(item.evidence_id, []).append((span[0], span[1], ckey))
            citations.append(
                CitationView(
                    ckey,
                    anchors.get(cite.evidence_id),
                    _label(item) if item else cite.evidence_id,
                    cite.quote,
                    span is not None,
                )
            )
        claims.append(_claim_view(key, claim, citations, by_id, anchors))
    cited_by: dict[str, list[str]] = {}
    for claim_view in claims:
        for c in claim_view.citations:
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
    if answer.refusal:
        status, tags = "refusal", ["refusal"]
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
        pieces=_answer_pieces(answer.text, keyed),
        claims=claims,
        screened=[Piece(c.text, key=k, screen_reason=c.screen_reason) for k, c in keyed if c.screened],
        evidence=evidence,
        status=status,
        tags=tags,
        counts=counts,
        groundedness=answer.groundedness,
        bar=_bar(counts),
    )


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
        judge_errors=list(claim.judge_errors),
        common_knowledge=claim.common_knowledge,
    )


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


def _answer_pieces(text: str, keyed: list[tuple[str, ClaimOut]]) -> list[Piece]:
    """Cut the answer text at the claims' offsets; overlapping or out-of-range claims are skipped."""
    pieces: list[Piece] = []
    pos = 0
    for key, claim in keyed:
        if claim.start < pos or claim.end > len(text) or claim.end <= claim.start:
            continue
        if claim.start > pos:
            pieces.append(Piece(text[pos : claim.start]))
        chunk = text[claim.start : claim.end]
        if claim.screened:
            pieces.append(Piece(chunk, key=key, screen_reason=claim.screen_reason or "screened"))
        else:
            pieces.append(Piece(chunk, key=key, verdict=claim.verdict or "unjudged"))
        pos = claim.end
    if pos < len(text):
        pieces.append(Piece(text[pos:]))
    return pieces


def _normalise(text: str) -> tuple[str, list[int]]:
    """Lower-case, whitespace-collapsed text and, per output character, its index in ``text``."""
    out: list[str] = []
    index: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not in_space and out:
                out.append(" ")
                index.append(i)
            in_space = True
            continue
        in_space = False
        for low in ch.lower():
            out.append(low)
            index.append(i)
    return "".join(out), index


def find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` sits in ``text``, compared case- and whitespace-insensitively (as the judge
    verified it); offsets are into the original ``text``. None when it is not there."""
    needle, _ = _normalise(quote)
    needle = needle.strip()
    if not needle:
        return None
    hay, index = _normalise(text)
    at = hay.find(needle)
    if at < 0:
        return None
    return index[at], index[at + len(needle) - 1] + 1


def marked_pieces(text: str, spans: list[tuple[int, int, str]]) -> list[Piece]:
    """Cut ``text`` at every span boundary; each piece lists the span keys that cover it."""
    cuts = sorted({0, len(text), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    pieces = []
    for start, end in pairwise(cuts):
        if end > start:
            pieces.append(
                Piece(text[start:end], marks=tuple(k for s, e, k in spans if s <= start and end <= e))
            )
    return pieces or [Piece(text)]


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
