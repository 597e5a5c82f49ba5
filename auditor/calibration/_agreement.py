"""Judge calibration: agreement between a judge's verdicts and human labels (pure; no I/O).

The inputs are pairs (human verdict, judge verdict) over the three verdicts ``supported``,
``contradicted`` and ``absent``, grouped by labelled record (an answer), which
:mod:`auditor.calibration._labelled` builds from a labelled file and an audit. From them, at one level
(claims or answers), :func:`level_report` computes:

- the 3x3 confusion matrix (rows: human, columns: judge) and the 2x2 matrix over "unsupported"
  (contradicted or absent) versus supported;
- agreement (share of items on the diagonal) with a Wilson interval;
- Cohen's kappa on both matrices, ``(p_o - p_e) / (1 - p_e)``, with a 95% percentile interval from a
  **cluster bootstrap over records** (resample labelled records with replacement, keep every item
  of a drawn record together; 2,000 resamples, fixed seed): claims of one answer are not
  independent, and resampling records respects that. Undefined (None) when ``p_e == 1``;
- sensitivity (judge says unsupported among items humans call unsupported) and specificity (judge
  says supported among items humans call supported), each a :class:`~auditor.metrics.Rate`
  with Wilson and Clopper-Pearson intervals. At claim level these intervals treat claims as
  independent and are therefore optimistic; the answer-level figures are the ones
  :mod:`auditor.calibration._correction` uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import PurePath
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from auditor.judges import JudgeIdentity
from auditor.metrics import Rate, rate
from auditor.results import PolicyRef

Verdict3 = Literal["supported", "contradicted", "absent"]
VERDICTS: tuple[Verdict3, ...] = ("supported", "contradicted", "absent")
BINARY: tuple[str, str] = ("unsupported", "supported")  # positive class first
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261129
CONFIDENCE = 0.95


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Pair(_Model):
    """One compared item: what the annotators say and what the judge says."""

    record_id: str
    human: Verdict3
    judge: Verdict3


class ConfusionMatrix(_Model):
    """Counts; ``counts[i][j]`` is the number of items humans call ``labels[i]`` and the judge ``labels[j]``."""

    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def total(self) -> int:
        return sum(sum(row) for row in self.counts)

    def cell(self, human: str, judge: str) -> int:
        return self.counts[self.labels.index(human)][self.labels.index(judge)]


class Kappa(_Model):
    """Cohen's kappa with its bootstrap interval; all None when undefined (chance agreement is 1)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    method: str = f"cluster bootstrap over records, percentile, {BOOTSTRAP_RESAMPLES} resamples"
    confidence: float = CONFIDENCE


class Unmapped(_Model):
    """What could not be compared, by reason (``no answer found``, ``unjudged claim``, ...)."""

    records: dict[str, int] = Field(default_factory=dict)  # labelled records with no item at this level
    claims: dict[str, int] = Field(default_factory=dict)  # judge claims left out (claim level)
    labelled_spans: int = 0  # human spans overlapping no judged claim (claim level)


class LevelReport(_Model):
    """Agreement at one level (``claim`` or ``answer``)."""

    level: Literal["claim", "answer"]
    items: int
    records: int
    three_way: ConfusionMatrix
    binary: ConfusionMatrix
    agreement: Rate
    agreement_binary: Rate
    kappa: Kappa
    kappa_binary: Kappa
    sensitivity: Rate  # for "unsupported"
    specificity: Rate
    unmapped: Unmapped = Field(default_factory=Unmapped)


class Calibration(_Model):
    """A judge measured against human labels: what :meth:`auditor.store.Store.save_calibration` keeps."""

    id: str
    created_at: datetime
    auditor_version: str
    judge: JudgeIdentity
    policy: PolicyRef | None
    decomposer: str
    labelled_path: str
    labelled_sha256: str
    records: int
    claim: LevelReport
    answer: LevelReport
    by_segment: dict[str, LevelReport] = Field(default_factory=dict)  # "<dataset>/<task_type>"
    notes: list[str] = Field(default_factory=list)
    # What it was measured on (``auditor calibrate --name``; the records' datasets and task types).
    # Older calibrations have none recorded: :attr:`domain` reads them from ``by_segment``.
    name: str | None = None
    datasets: list[str] = Field(default_factory=list)
    task_types: list[str] = Field(default_factory=list)

    @property
    def judge_name(self) -> str:
        """The judge as ``--judge`` spells it (``offline``, ``openai:MODEL``)."""
        return self.judge.kind + (f":{self.judge.model}" if self.judge.model else "")

    @property
    def display_name(self) -> str:
        """The name given at ``auditor calibrate --name``, else the labelled file's name."""
        return self.name or PurePath(self.labelled_path).name or self.id[:12]

    @property
    def label(self) -> str:
        """How the report and the console name this calibration: name, judge, date, size and id."""
        return (
            f"{self.display_name} ({self.judge_name}, {self.created_at:%Y-%m-%d}, "
            f"{self.answer.items} labelled answers, id {self.id[:12]})"
        )

    @property
    def domain(self) -> tuple[list[str], list[str]]:
        """The datasets and task types of its labelled records (``-`` and empty names left out)."""
        if self.datasets or self.task_types:
            return self.datasets, self.task_types
        datasets, task_types = set(), set()
        for key in self.by_segment:  # "<dataset>/<task_type>/<level>"
            parts = key.rsplit("/", 2)
            if len(parts) == 3:
                datasets.add(parts[0])
                task_types.add(parts[1])
        return sorted(datasets - {"-", ""}), sorted(task_types - {"-", ""})


def is_unsupported(verdict: str) -> bool:
    return verdict != "supported"


def confusion(
    pairs: Sequence[Pair], labels: Sequence[str] = VERDICTS, *, binary: bool = False
) -> ConfusionMatrix:
    """The confusion matrix of ``pairs`` (rows human, columns judge); ``binary`` folds into unsupported/supported."""
    names = tuple(BINARY if binary else labels)
    index = {name: i for i, name in enumerate(names)}
    counts = [[0] * len(names) for _ in names]
    for pair in pairs:
        human, judge = pair.human, pair.judge
        if binary:
            human = "unsupported" if is_unsupported(human) else "supported"  # type: ignore[assignment]
            judge = "unsupported" if is_unsupported(judge) else "supported"  # type: ignore[assignment]
        counts[index[human]][index[judge]] += 1
    return ConfusionMatrix(labels=names, counts=tuple(tuple(row) for row in counts))


def kappa_of(counts: Sequence[Sequence[int]]) -> float | None:
    """Cohen's kappa of a square count matrix; None with no item or when chance agreement is 1."""
    matrix = np.asarray(counts, dtype=float)
    total = matrix.sum()
    if total == 0:
        return None
    observed = np.trace(matrix) / total
    expected = float((matrix.sum(axis=1) * matrix.sum(axis=0)).sum() / total**2)
    if expected >= 1.0 - 1e-12:
        return None
    return float((observed - expected) / (1.0 - expected))


def _kappas(stacked: np.ndarray) -> np.ndarray:
    """Kappa of each matrix in a (B, k, k) array; NaN where undefined."""
    totals = stacked.sum(axis=(1, 2))
    safe = np.where(totals == 0, 1.0, totals)
    observed = np.trace(stacked, axis1=1, axis2=2) / safe
    expected = (stacked.sum(axis=2) * stacked.sum(axis=1)).sum(axis=1) / safe**2
    with np.errstate(divide="ignore", invalid="ignore"):
        values = (observed - expected) / (1.0 - expected)
    values[(totals == 0) | (expected >= 1.0 - 1e-12)] = np.nan
    return np.asarray(values)


def bootstrap_kappa(
    per_record: Sequence[ConfusionMatrix], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Kappa:
    """Kappa of the summed matrices with a cluster-bootstrap percentile interval (records resampled).

    Args:
        per_record: one confusion matrix per labelled record (all with the same labels).
        resamples: bootstrap resamples; resamples where kappa is undefined are dropped.
        seed: the generator's seed (the interval is reproducible).
    """
    if not per_record:
        return Kappa(value=None)
    cube = np.asarray([m.counts for m in per_record], dtype=float)  # (R, k, k)
    value = kappa_of(cube.sum(axis=0))
    if value is None:
        return Kappa(value=None)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(
        len(per_record), np.full(len(per_record), 1.0 / len(per_record)), size=resamples
    )
    stacked = np.einsum("br,rij->bij", weights, cube)
    draws = _kappas(stacked)
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return Kappa(value=value)
    tail = (1.0 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Kappa(value=value, low=float(low), high=float(high))


def level_report(
    level: Literal["claim", "answer"],
    pairs_by_record: dict[str, list[Pair]],
    unmapped: Unmapped | None = None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> LevelReport:
    """Every agreement figure at one level from the compared items, grouped by record."""
    groups = [pairs for pairs in pairs_by_record.values() if pairs]
    pairs = [p for group in groups for p in group]
    three = confusion(pairs)
    binary = confusion(pairs, binary=True)
    tp, fn = binary.cell("unsupported", "unsupported"), binary.cell("unsupported", "supported")
    fp, tn = binary.cell("supported", "unsupported"), binary.cell("supported", "supported")
    agree3 = sum(three.counts[i][i] for i in range(len(VERDICTS)))
    return LevelReport(
        level=level,
        items=len(pairs),
        records=len(groups),
        three_way=three,
        binary=binary,
        agreement=rate(agree3, len(pairs), intervals=True),
        agreement_binary=rate(tp + tn, len(pairs), intervals=True),
        kappa=bootstrap_kappa([confusion(g) for g in groups], resamples=resamples),
        kappa_binary=bootstrap_kappa([confusion(g, binary=True) for g in groups], resamples=resamples),
        sensitivity=rate(tp, tp + fn, intervals=True),
        specificity=rate(tn, tn + fp, intervals=True),
        unmapped=unmapped or Unmapped(),
    )
