"""How good the offline judge is on the labelled sets, beside a naive lexical baseline (development figures).

``python -m benchmarks --only accuracy``. Both labelled files are read where they live
(``../shared/data/labelled/dev.jsonl`` and ``train.jsonl`` beside the checkout; ``--dev`` and
``--train`` override), never copied. Each is audited through the normal pipeline (records adapter,
default policy, rule-based decomposer, offline judge) and compared with the human labels by the
calibration code's overlap rule (:mod:`auditor.calibration`: a claim overlapping a labelled span is
unsupported in the human view; a claim-unit record is one item whose human verdict is the record's).
Per split and per ``dataset/task_type``:

- **answers**: the judge's answer-level verdict is the one the summary uses (``docs/metrics.md``): an
  answer with a decided unsupported claim (absent or contradicted) is *hallucinated*; else one with an
  undecided (``unjudged``) claim is *undecided*; else (every claim supported) *grounded*. Precision,
  recall, F1 and balanced accuracy for "hallucinated" are on the decided answers; ``decided`` is their
  share, ``fully decided`` the share of answers with no undecided claim at all. Answers with no claim
  (everything screened out) are left out and counted.
- **claims**: the share decided and the agreement with the human label on them (supported versus
  unsupported). A claim-unit record is one item, decided when its answer-level verdict is.
- **settle()**: the cascade's certain stage (:meth:`auditor.judges.CascadeJudge.certain`, quotes
  verified): the share of claims it settles without an LLM call and how often humans agree; also
  with each claim-unit record as one item (``items_*``: settled when all its claims are), and its
  cost per claim against the score-only settle() it replaced (``settle_speed``).
- **the naive lexical baseline**, in the same run, on the same records: per answer sentence, the
  share of its content words (lower-cased, stopwords of the ``stop-words`` package removed) found in
  the sources, and whether each of its numbers appears there; an answer is hallucinated when some
  sentence's share is below ``t`` or it has a number the sources lack. ``t`` is chosen on dev (all
  records) for the best F1 and applied unchanged to train. Its figures are on every answer and, beside
  the judge's, on the answers the judge decides.

**The cascade against the LLM set** (``cascade``, :mod:`benchmarks.cascade`): the LLM benchmark's
generated records (:func:`benchmarks.llm.write_records`), and the dev set, audited twice against the fake server in its own process, by
the LLM judge alone and through the cascade, with the calls counted at the server. The fake server's
verdicts come from the offline judge, so "agreement" there says whether the cascade changes a verdict
the stand-in LLM would give, not whether either is right.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stop_words import get_stop_words  # type: ignore[import-untyped]

from auditor.calibration import load_labelled
from auditor.calibration._labelled import LabelledRecord, human_claim_verdict
from auditor.judges import CascadeJudge, OfflineJudge
from auditor.pipeline import AnswerAudit
from auditor.results import AnswerOut
from auditor.run import audit_async
from auditor.trace import FORMAT
from benchmarks.cascade import llm_set, settle_speed

# ../shared beside the checkout
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "labelled"
DEV, TRAIN = DATA / "dev.jsonl", DATA / "train.jsonl"

Outcome = Literal["hallucinated", "grounded", "undecided"]

# ---------------------------------------------------------------------------------------------------
# Counting


def binary(pairs: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    """Figures for "hallucinated" from ``(predicted, actual)`` pairs: counts, P / R / F1, Se / Sp / BAcc."""
    c = Counter(("t" if p == a else "f") + ("p" if p else "n") for p, a in pairs)
    tp, fp, fn, tn = c["tp"], c["fp"], c["fn"], c["tn"]

    def div(a: int, b: int) -> float | None:
        return a / b if b else None

    p, r, sp = div(tp, tp + fp), div(tp, tp + fn), div(tn, tn + fp)
    f1 = 2 * p * r / (p + r) if p is not None and r is not None and p + r else None
    bacc = (r + sp) / 2 if r is not None and sp is not None else None
    return {
        "n": tp + fp + fn + tn,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": p,
        "recall": r,
        "f1": f1,
        "specificity": sp,
        "balanced_accuracy": bacc,
        "flagged_share": div(tp + fp, tp + fp + fn + tn),
        "true_share": div(tp + fn, tp + fp + fn + tn),
    }


def answer_outcome(verdicts: Sequence[str]) -> Outcome:
    """The summary's answer rule on one answer's claim verdicts (at least one)."""
    if any(v in ("absent", "contradicted") for v in verdicts):
        return "hallucinated"
    return "undecided" if "unjudged" in verdicts else "grounded"


# ---------------------------------------------------------------------------------------------------
# The naive lexical baseline

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Baseline:
    """One answer's baseline evidence: the lowest sentence share, and whether a number is missing."""

    lowest_share: float
    number_missing: bool

    def hallucinated(self, t: float) -> bool:
        return self.number_missing or self.lowest_share < t


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


def baseline(answer: str, sources: Sequence[str], stop: frozenset[str]) -> Baseline:
    """The baseline's reading of ``answer`` against ``sources`` (see the module docstring)."""
    joined = " ".join(sources)
    source_words = {w.casefold() for w in _WORD.findall(joined)}
    source_numbers = _numbers(joined)
    lowest, missing = 1.0, False
    for sentence in _SENTENCE.split(answer):
        content = [w for w in (w.casefold() for w in _WORD.findall(sentence)) if w not in stop]
        if content:
            lowest = min(lowest, sum(w in source_words for w in content) / len(content))
        missing = missing or bool(_numbers(sentence) - source_numbers)
    return Baseline(lowest, missing)


THRESHOLDS = [i / 100 for i in range(101)]


def choose_threshold(items: Sequence[tuple[Baseline, bool]]) -> float:
    """The ``t`` with the best F1 for "hallucinated" over ``(baseline, actual)`` items (lowest on ties)."""

    def f1(t: float) -> float:
        return binary((b.hallucinated(t), a) for b, a in items)["f1"] or 0.0

    return max(THRESHOLDS, key=lambda t: (f1(t), -t))


# ---------------------------------------------------------------------------------------------------
# One split


@dataclass
class _Row:
    """The items of one record."""

    segment: str
    actual: bool  # hallucinated in the human view
    outcome: Outcome | None  # None: no claim to judge
    baseline: Baseline
    # per claim: (unsupported in the human view, unsupported in the judge's; None when undecided)
    claims: list[tuple[bool, bool | None]] = field(default_factory=list)
    settled: list[bool] = field(default_factory=list)  # per claim settled: humans agree (supported)
    claims_total: int = 0
    # a claim-unit record as one item (as ``claims`` counts it): settled when all its claims are
    record_settled: bool | None = None


def _sources(path: Path) -> list[list[str]]:
    """The source texts of each record, in file order (blank lines skipped, as :func:`load_labelled`)."""
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            obj = json.loads(raw)
            out.append([str(s.get("text", "")) for s in obj.get("sources") or [] if isinstance(s, dict)])
    return out


def _row(
    record: LabelledRecord,
    answer: AnswerOut | None,
    audit: AnswerAudit | None,
    sources: list[str],
    cascade: CascadeJudge,
    stop: frozenset[str],
) -> _Row:
    row = _Row(record.segment, record.human != "supported", None, baseline(record.answer, sources, stop))
    if answer is None:
        return row
    shift = max(record.answer.find(answer.text), 0)
    claims = [c for c in answer.claims or [] if not c.screened]
    if not claims:
        return row
    verdicts = [c.verdict or "unjudged" for c in claims]
    row.outcome = answer_outcome(verdicts)
    if record.unit == "claim":
        decided = None if row.outcome == "undecided" else row.outcome == "hallucinated"
        row.claims.append((row.actual, decided))
    else:
        for c, v in zip(claims, verdicts, strict=True):
            human = human_claim_verdict(c.start + shift, c.end + shift, record.labels) != "supported"
            row.claims.append((human, None if v == "unjudged" else v != "supported"))
    if audit is not None:
        admitted = [e for e, d in zip(audit.answer.evidence, audit.decisions, strict=True) if d.admitted]
        for claim in audit.decomposition.judgeable:
            row.claims_total += 1
            if cascade.certain(claim, admitted) is not None:
                said = (
                    record.human
                    if record.unit == "claim"
                    else human_claim_verdict(claim.start + shift, claim.end + shift, record.labels)
                )
                row.settled.append(said == "supported")
        if record.unit == "claim" and row.claims_total:
            row.record_settled = len(row.settled) == row.claims_total
    return row


def _segment(rows: Sequence[_Row], t: float) -> dict[str, Any]:
    mapped = [r for r in rows if r.outcome is not None]
    decided = [r for r in mapped if r.outcome != "undecided"]
    fully = [r for r in mapped if all(j is not None for _, j in r.claims)]
    claims = [c for r in mapped for c in r.claims]
    decided_claims = [(h, j) for h, j in claims if j is not None]
    settled = [s for r in rows for s in r.settled]
    claims_total = sum(r.claims_total for r in rows)
    return {
        "records": len(rows),
        "answers": len(mapped),
        "no_claim": len(rows) - len(mapped),
        "undecided_answers": len(mapped) - len(decided),
        "decided_share": len(decided) / len(mapped) if mapped else None,
        "fully_decided_share": len(fully) / len(mapped) if mapped else None,
        "judge": binary((r.outcome == "hallucinated", r.actual) for r in decided),
        "baseline": binary((r.baseline.hallucinated(t), r.actual) for r in rows),
        "baseline_on_decided": binary((r.baseline.hallucinated(t), r.actual) for r in decided),
        "claims": len(claims),
        "claims_decided": len(decided_claims),
        "claims_decided_share": len(decided_claims) / len(claims) if claims else None,
        "claim_accuracy": (
            sum(h == j for h, j in decided_claims) / len(decided_claims) if decided_claims else None
        ),
        "settle": {
            "claims": claims_total,
            "settled": len(settled),
            "share": len(settled) / claims_total if claims_total else None,
            "agree": sum(settled),
            "accuracy": sum(settled) / len(settled) if settled else None,
            **_settle_items(rows),
        },
    }


def _settle_items(rows: Sequence[_Row]) -> dict[str, Any]:
    """settle() with a claim-unit record as one item, settled when every claim of it is (its human
    verdict is the record's, so a settled part of a record whose other part is unsupported is not
    counted wrong); claims of answer-unit records count one by one, as above."""
    items = settled = agree = 0
    for r in rows:
        if r.record_settled is None:
            items += r.claims_total
            settled += len(r.settled)
            agree += sum(r.settled)
        else:
            items += 1
            settled += r.record_settled
            agree += r.record_settled and not r.actual
    return {
        "items": items,
        "items_settled": settled,
        "items_share": settled / items if items else None,
        "items_accuracy": agree / settled if settled else None,
    }


async def split_rows(path: Path) -> list[_Row]:
    """Audit one labelled file with the offline judge and read each record's items."""
    records = load_labelled(path)
    sources = _sources(path)
    result, audits = await audit_async([path], judge="offline", format=FORMAT, store=False)
    answers = {a.trace_id: a for a in result.answers}
    by_trace = {a.answer.trace_id: a for a in audits}
    cascade = CascadeJudge(OfflineJudge())
    stop = frozenset(w.casefold() for w in get_stop_words("en"))
    return [
        _row(r, answers.get(r.trace_id), by_trace.get(r.trace_id), s, cascade, stop)
        for r, s in zip(records, sources, strict=True)
    ]


def segments(rows: Sequence[_Row], t: float) -> dict[str, Any]:
    """Figures per ``dataset/task_type``, then ``dataset/all tasks`` for a dataset of several tasks
    (RAGTruth: the issue's target is on its answers pooled), then ``ALL``."""
    groups: dict[str, list[_Row]] = defaultdict(list)
    datasets: dict[str, list[_Row]] = defaultdict(list)
    for row in rows:
        groups[row.segment].append(row)
        datasets[row.segment.partition("/")[0]].append(row)
    out = {name: _segment(group, t) for name, group in sorted(groups.items())}
    for dataset, group in sorted(datasets.items()):
        if sum(name.partition("/")[0] == dataset for name in groups) > 1:
            out[f"{dataset}/all tasks"] = _segment(group, t)
    out["ALL"] = _segment(rows, t)
    return out


async def run(dev: Path = DEV, train: Path | None = TRAIN, *, llm_answers: int = 24) -> dict[str, Any]:
    """Both splits (train skipped when ``train`` is None or missing) and the cascade on the LLM set."""
    dev_rows = await split_rows(dev)
    t = choose_threshold([(r.baseline, r.actual) for r in dev_rows])
    results: dict[str, Any] = {"baseline_threshold": t, "splits": {}}
    results["splits"]["dev"] = {"path": str(dev), "segments": segments(dev_rows, t)}
    if train is not None and train.exists():
        results["splits"]["train"] = {"path": str(train), "segments": segments(await split_rows(train), t)}
    if llm_answers:
        results["cascade"] = await llm_set(llm_answers, {"dev": dev})
        results["settle_speed"] = await settle_speed(dev)
    return results


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


HEADER = [
    "dataset/task",
    "answers",
    "decided (fully)",
    "judge BAcc / P / R / F1 on decided",
    "baseline BAcc / F1 (all)",
    "baseline BAcc on decided",
    "claims decided",
    "acc. on decided claims",
    "settle() share (acc.)",
]


def table_rows(split: dict[str, Any]) -> list[list[str]]:
    """One row per segment of one split, in :data:`HEADER`'s order."""
    rows = []
    for name, s in split["segments"].items():
        j, b, bd, st = s["judge"], s["baseline"], s["baseline_on_decided"], s["settle"]
        rows.append(
            [
                name,
                str(s["answers"]),
                f"{_f(s['decided_share'])} ({_f(s['fully_decided_share'])})",
                " / ".join(_f(j[k]) for k in ("balanced_accuracy", "precision", "recall", "f1")),
                f"{_f(b['balanced_accuracy'])} / {_f(b['f1'])}",
                _f(bd["balanced_accuracy"]),
                _f(s["claims_decided_share"]),
                _f(s["claim_accuracy"]),
                f"{_f(st['share'])} ({_f(st['accuracy'])})",
            ]
        )
    return rows


_NAMES = {
    "attributionbench": "AttributionBench",
    "factcheckgpt": "Factcheck-GPT",
    "faithbench": "FaithBench",
    "healthver": "HealthVer",
    "ragtruth": "RAGTruth",
    "wice": "WiCE",
}


def markdown(results: dict[str, Any]) -> str:
    """The README's table ("How good is the offline judge") from :func:`run`'s results."""
    lines = [
        "| split | dataset / task | answers | decided (fully) | judge BAcc / P / R / F1, decided answers "
        "| baseline BAcc: all / decided answers | claims decided (accuracy) | settle(): share (accuracy) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for split, data in results["splits"].items():
        for name, s in data["segments"].items():
            dataset, _, task = name.partition("/")
            shown = "**all**" if name == "ALL" else f"{_NAMES.get(dataset, dataset)} {task.replace('_', ' ')}"
            j, st = s["judge"], s["settle"]
            lines.append(
                f"| {split} | {shown} | {s['answers']:,} | {_f(s['decided_share'])} ({_f(s['fully_decided_share'])}) "
                f"| {' / '.join(_f(j[k]) for k in ('balanced_accuracy', 'precision', 'recall', 'f1'))} "
                f"| {_f(s['baseline']['balanced_accuracy'])} / {_f(s['baseline_on_decided']['balanced_accuracy'])} "
                f"| {_f(s['claims_decided_share'])} ({_f(s['claim_accuracy'])}) "
                f"| {_f(st['share'])} ({_f(st['accuracy'])}) |"
            )
    return "\n".join(lines)
