"""What the web pages show, as typed values: the rows, pieces and links the templates print.

Pure functions of stored answers (no I/O, no markup): a template only loops over these and
prints them through autoescaping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from auditor.results import AnswerOut, ClaimOut, EvidenceOut
from auditor.serve._figures import TrendPoint
from auditor.serve._filters import filter_params
from auditor.store import AnswerFilter, Conversation, Facets, ReceivedTrace, RunRow

#: Verdict labels of an answer, as the filters name them, with the words the page shows.
VERDICT_LABELS = {
    "grounded": "grounded",
    "ungrounded": "not grounded",
    "contradicted": "contradicted",
    "refusal": "refusal",
    "undecided": "undecided",
    "none": "not judged",
}
OUTCOME_LABELS = {
    "excluded": "some evidence excluded",
    "all_admitted": "all evidence admitted",
    "inadmissible_support": "a claim rests on excluded evidence",
}


def answer_verdict(answer: AnswerOut) -> str:
    """The answer's verdict as the ``verdict`` filter names it (``none`` when it was not judged)."""
    if answer.refusal:
        return "refusal"
    if answer.contradicted:
        return "contradicted"
    if answer.grounded is None:
        return "none"
    return "grounded" if answer.grounded else "ungrounded"


def answer_url(answer_id: str, run_id: str, view: str = "") -> str:
    return f"/answers/{answer_id}{view}?" + urlencode({"run": run_id})


def page_url(path: str, wanted: AnswerFilter, **extra: str) -> str:
    params = {**filter_params(wanted), **extra}
    return path + ("?" + urlencode(params) if params else "")


@dataclass(frozen=True)
class AnswerRow:
    answer: AnswerOut
    run_id: str
    verdict: str
    url: str


@dataclass(frozen=True)
class FilterForm:
    """The filter form: its current values and the choices of its drop-downs."""

    values: dict[str, str]
    facets: Facets
    verdicts: dict[str, str]
    outcomes: dict[str, str]


@dataclass(frozen=True)
class ListView:
    form: FilterForm
    rows: list[AnswerRow]
    next_url: str | None
    first_url: str | None
    error: str | None


@dataclass(frozen=True)
class Piece:
    """A run of the answer text: plain, or a claim (``index`` into the claims) with its verdict."""

    text: str
    index: int | None = None
    verdict: str | None = None


@dataclass(frozen=True)
class DetailView:
    run_id: str
    answer: AnswerOut
    verdict: str
    pieces: list[Piece]
    claims: list[ClaimOut]
    evidence: dict[str, EvidenceOut]
    attribution_url: str
    labels: dict[str, str]


@dataclass(frozen=True)
class RunsView:
    runs: list[RunRow]
    traces: list[ReceivedTrace]
    conversations: list[Conversation]


@dataclass(frozen=True)
class TrendView:
    form: FilterForm
    bucket: str
    points: list[TrendPoint]
    error: str | None
    #: The samples behind the figures (:func:`auditor.store.sample_json`): a rate is never shown without it.
    sample: dict[str, Any] | None = None


def form(wanted: AnswerFilter, facets: Facets) -> FilterForm:
    return FilterForm(filter_params(wanted), facets, VERDICT_LABELS, OUTCOME_LABELS)


def pieces(answer: AnswerOut) -> list[Piece]:
    """Cut the answer at its claims' offsets (screened sentences stay plain; overlaps are skipped)."""
    out: list[Piece] = []
    pos = 0
    text = answer.text
    for index, claim in enumerate(answer.claims or []):
        if claim.screened or claim.start < pos or claim.end > len(text) or claim.end <= claim.start:
            continue
        if claim.start > pos:
            out.append(Piece(text[pos : claim.start]))
        out.append(Piece(text[claim.start : claim.end], index, claim.verdict or "unjudged"))
        pos = claim.end
    if pos < len(text):
        out.append(Piece(text[pos:]))
    return out


def detail(run_id: str, answer: AnswerOut) -> DetailView:
    return DetailView(
        run_id=run_id,
        answer=answer,
        verdict=answer_verdict(answer),
        pieces=pieces(answer),
        claims=list(answer.claims or []),
        evidence={e.evidence_id: e for e in answer.evidence},
        # the view is a one-answer report, whose answer is "a0": land on it, not on the figures
        attribution_url=answer_url(answer.answer_id, run_id, "/attribution") + "#a0",
        labels=VERDICT_LABELS,
    )
