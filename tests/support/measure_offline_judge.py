"""Measure the offline judge on the labelled dev set (a development figure, not a benchmark).

Usage: ``.venv/bin/python tests/support/measure_offline_judge.py [path/to/dev.jsonl]``

Answer level: an answer is predicted hallucinated iff any judged claim is not ``supported``;
compared with ``answer_label``. Claim level: a claim overlapping a labelled span is unsupported
in the human view (for claim-unit records, the record's verdict decides). Claims come from
``auditor.claims.decompose_answer`` (the rule-based decomposer).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from auditor.claims import decompose_answer
from auditor.evidence_model import Answer, Evidence, EvidenceKind
from auditor.judges.offline import OfflineJudge
from auditor.verdicts import Label

DEFAULT = Path("/work/shared/data/labelled/dev.jsonl")


def _segment(record: dict[str, Any]) -> str:
    return f"{record['dataset']}/{record['task_type']}"


def _answer(record: dict[str, Any]) -> tuple[Answer, list[Evidence]]:
    kind = EvidenceKind.TOOL_RESULT if record["task_type"] == "Data2txt" else EvidenceKind.RETRIEVED_DOCUMENT
    evidence = [Evidence(evidence_id=f"{record['id']}/{s['id']}", kind=kind, name=s["id"], text=s["text"],
                         trace_id=record["id"]) for s in record["sources"]]
    answer = Answer(answer_id=record["id"], trace_id=record["id"], span_id="0", question=record.get("question"),
                    text=record["answer"], generated_at=datetime(2025, 1, 1, tzinfo=UTC))
    return answer, evidence


def _prf(tp: int, fp: int, fn: int) -> str:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return f"P={p:.2f} R={r:.2f} F1={f:.2f}"


def main(path: Path) -> None:
    judge = OfflineJudge()
    answer_counts: dict[str, Counter[str]] = defaultdict(Counter)
    claim_counts: dict[str, Counter[str]] = defaultdict(Counter)
    labels: Counter[str] = Counter()
    policy_counts: Counter[str] = Counter()  # the design's rule: grounded iff >= 0.9 supported, none contradicted
    baseline: Counter[str] = Counter()  # predicting "hallucinated" for every answer
    by_label: Counter[tuple[str, bool]] = Counter()  # (judge label, human says unsupported)
    n_claims = 0
    elapsed = 0.0
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        seg = _segment(record)
        answer, evidence = _answer(record)
        claims = decompose_answer(answer).judgeable
        started = time.perf_counter()
        verdicts = judge.judge_sync(claims, evidence)
        elapsed += time.perf_counter() - started
        n_claims += len(claims)
        labels.update(v.label.value for v in verdicts)
        predicted = any(v.label is not Label.SUPPORTED for v in verdicts)
        actual = record["answer_label"] == "hallucinated"
        supported = sum(v.label is Label.SUPPORTED for v in verdicts)
        policy_rule = (not verdicts or supported / len(verdicts) < 0.9
                       or any(v.label is Label.CONTRADICTED for v in verdicts))
        policy_counts[("t" if policy_rule == actual else "f") + ("p" if policy_rule else "n")] += 1
        baseline[("t" if actual else "f") + "p"] += 1
        answer_counts[seg][("t" if predicted == actual else "f") + ("p" if predicted else "n")] += 1
        spans = [(s["start"], s["end"]) for s in record["labels"]]
        for claim, verdict in zip(claims, verdicts, strict=True):
            if record["unit"] == "claim":
                human_bad = record["verdict"] != "supported"
            else:
                human_bad = any(s < claim.end and claim.start < e for s, e in spans)
            judge_bad = verdict.label is not Label.SUPPORTED
            by_label[(verdict.label.value, human_bad)] += 1
            claim_counts[seg][("t" if judge_bad == human_bad else "f") + ("p" if judge_bad else "n")] += 1
    print(f"{n_claims} claims judged in {elapsed:.2f}s ({n_claims / max(elapsed, 1e-9):.0f} claims/s); "
          f"verdicts {dict(labels)}")
    print("segment                            answers  tp fp fn tn  answer-level 'hallucinated'      "
          "claims  claim agreement")
    total_a: Counter[str] = Counter()
    total_c: Counter[str] = Counter()
    for seg in sorted(answer_counts):
        a, c = answer_counts[seg], claim_counts[seg]
        total_a.update(a)
        total_c.update(c)
        _row(seg, a, c)
    _row("ALL", total_a, total_c)
    print(f"answer-level, grounded iff >= 90% supported and none contradicted: "
          f"{_prf(policy_counts['tp'], policy_counts['fp'], policy_counts['fn'])}; "
          f"baseline 'always hallucinated': {_prf(baseline['tp'], baseline['fp'], 0)}")
    for label in ("supported", "contradicted", "absent"):
        n = by_label[(label, True)] + by_label[(label, False)]
        print(f"judge {label:12}: {n:5} claims, {by_label[(label, True)]:4} unsupported in the human view "
              f"({by_label[(label, True)] / max(n, 1):.0%})")


def _row(seg: str, a: Counter[str], c: Counter[str]) -> None:
    n_a, n_c = sum(a.values()), sum(c.values())
    agree = (c["tp"] + c["tn"]) / n_c if n_c else 0.0
    print(f"{seg:34} {n_a:7} {a['tp']:3} {a['fp']:2} {a['fn']:2} {a['tn']:2}  {_prf(a['tp'], a['fp'], a['fn']):28} "
          f"{n_c:6}  {agree:.2f} ({_prf(c['tp'], c['fp'], c['fn'])} for unsupported)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
