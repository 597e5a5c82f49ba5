"""The run's figures as the JSON result, the store and the report carry them.

Every rate is a :class:`Rate`: numerator, denominator and value together, never a bare number.
Intervals are on answers (claims within one answer are not independent trials), so claim-level
rates carry no interval. The functions that compute these live in :mod:`auditor.metrics`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Interval(_Model):
    method: Literal["wilson", "clopper-pearson"]
    confidence: float = 0.95
    low: float
    high: float


class Rate(_Model):
    """``numerator / denominator``; ``value`` is None when the denominator is 0."""

    numerator: int
    denominator: int
    value: float | None
    wilson: Interval | None = None  # set only for rates over answers
    clopper_pearson: Interval | None = None


class Segment(_Model):
    """The headline figures restricted to one source class or one question type."""

    name: str
    answers: int
    judged_claims: int
    groundedness_rate: Rate  # supported / judged claims in the segment
    answers_with_unsupported_claim: Rate  # over the segment's decided answers (not undecided); intervals set
    answer_pass_rate: Rate  # grounded answers in the segment; intervals set
    # None only in summaries written before these figures existed:
    answer_rate: Rate | None = None  # non-refusal answers / answers in the segment (refusals too); intervals
    refusals: int = 0
    empty_answers: int = 0  # non-refusal answers with nothing to judge (blank, or every sentence screened)
    claims_with_conflict: Rate | None = None  # judged claims whose admitted sources disagree / judged claims
    answers_with_conflict: Rate | None = None  # over ``answers``; intervals set
    # answers with no decided unsupported claim but an unjudged one: out of the unsupported rate
    undecided_answers: int = 0
    # Supported verdicts whose quote said otherwise (a negation, a rival figure or name): turned
    # contradicted when certain, else unjudged (quote_disagrees). Counted whatever they became.
    quote_disagreements: int = 0


class RefusalFigures(_Model):
    """From a labels file: always both, refusal accuracy and over-refusal, together."""

    labelled_answers: int
    unmatched_labels: int
    refusal_accuracy: Rate  # refused / unanswerable questions; intervals set
    over_refusal: Rate  # refused / answerable questions; intervals set


class CitationFigures(_Model):
    """Only when answers carry citation markers: a marker is not support."""

    coverage: Rate  # judged claims with a marker / judged claims
    support: Rate  # markers whose cited item supports the claim / markers on judged claims
    # supported claims that no cited item supports / judged claims with a marker
    misattribution: Rate = Rate(numerator=0, denominator=0, value=None)
    unresolved: int = 0  # markers on judged claims that name no admitted item (supports: null)


class ConflictFigures(_Model):
    """Claims on which admitted sources disagree: one item supports, another contradicts."""

    claims_with_conflict: Rate  # judged claims with a conflict / judged claims; no interval
    answers_with_conflict: Rate  # answers with one / answers with a judged or unjudged claim; intervals set
    flagged: int  # claims whose verdict on_conflict = "flag" left standing (the answer cannot pass)
    by_resolution: dict[str, int] = Field(default_factory=dict)  # flag / contradicted / prefer_newest


class CorrectedRate(_Model):
    """The raw share next to its corrected value; never replaces the raw figure."""

    status: Literal["corrected"] = "corrected"
    raw: Rate
    value: float  # clipped to [0, 1]
    unclipped: float
    low: float
    high: float
    confidence: float = 0.95
    method: str = "Rogan-Gladen; Monte Carlo over Jeffreys Beta posteriors of Se, Sp, p_obs"
    sensitivity: Rate
    specificity: Rate
    undefined_draws: int = 0
    calibration_id: str | None = None
    calibration: str | None = None  # how to name it: id, judge, date, labelled answers
    # Does the calibration's labelled data cover the run's question types (None: unchecked)?
    domain_fits: bool | None = None
    domain_note: str | None = None


class CannotCorrect(_Model):
    """Why no corrected figure can be given."""

    status: Literal["cannot_correct"] = "cannot_correct"
    raw: Rate
    reason: str
    calibration_id: str | None = None
    calibration: str | None = None
    domain_fits: bool | None = None
    domain_note: str | None = None


class Summary(_Model):
    answers: int
    refusals: int
    answer_rate: Rate  # answers that are not refusals / answers; intervals set
    claims: int
    screened: int
    screened_by_reason: dict[str, int] = Field(default_factory=dict)
    judged_claims: int
    supported: int
    contradicted: int
    absent: int
    unjudged: int
    common_knowledge: int
    unjudged_by_reason: dict[str, int] = Field(default_factory=dict)  # e.g. offline_undecided, timeout
    # "The judge could not decide N answers": no claim decided unsupported, at least one unjudged.
    # Neither grounded nor counted as having an unsupported claim; out of that rate's denominator.
    undecided_answers: int = 0
    # Supported verdicts whose quote said otherwise (a negation, a rival figure or name): turned
    # contradicted when certain, else unjudged (quote_disagrees). Counted whatever they became.
    quote_disagreements: int = 0
    groundedness_rate: Rate  # supported / judged claims (headline 1)
    contradiction_rate: Rate  # contradicted / judged claims
    answers_with_unsupported_claim: Rate  # (headline 2) decided unsupported / decided answers (not undecided)
    answer_pass_rate: Rate  # grounded / non-refusal answers, under the policy thresholds
    by_source_class: list[Segment] = Field(default_factory=list)
    by_question_type: list[Segment] = Field(default_factory=list)
    refusal: RefusalFigures | None = None
    citations: CitationFigures | None = None
    conflicts: ConflictFigures | None = None  # always set by summarise; None in older summaries
    empty_answers: int = 0  # non-refusal answers with nothing to judge (blank, or every sentence screened)
    # Set when a calibration of the run's judge exists: never replaces the raw figure above.
    corrected_unsupported: CorrectedRate | CannotCorrect | None = Field(default=None, discriminator="status")
