"""The offline components on the labelled dev set: speed and accuracy (development figures).

The dev set is read where it lives (``../shared/data/labelled/dev.jsonl`` beside the checkout, or ``--dev PATH``); it is
never copied. The records are audited through the normal pipeline (records adapter, default policy,
rule-based decomposer, offline judge) and compared with the labels by the calibration code
(:mod:`auditor.calibration._labelled`: a claim overlapping a labelled span is unsupported in the human
view; claim-unit records use the record's verdict). Reported per ``dataset/task_type`` with counts:

- offline judge, answer level: precision / recall / F1 for "hallucinated" (predicted: any claim not
  supported, the summary's "answers with an unsupported claim");
- the design's answer rule (``grounded`` under the policy: >= 90% supported, no contradiction);
- offline judge, claim level: balanced accuracy ((sensitivity + specificity) / 2 for "unsupported");
- the cascade's certain stage (``OfflineJudge.settle``): share of claims it settles and how many of
  those are unsupported in the human view (each is an error: settle only says ``supported``);
- the rule-based decomposer: labelled spans that fall in no judged claim (lost to screening).

Speed: claims per second of ``OfflineJudge.judge_sync`` over every answer, evidence preparation
included (its per-item cache cleared first) and with it warm.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from auditor.calibration import LevelReport, load_labelled
from auditor.calibration._agreement import level_report
from auditor.calibration._labelled import compare, human_claim_verdict
from auditor.judges import OfflineJudge
from auditor.judges import _windows as windows
from auditor.pipeline import AnswerAudit
from auditor.run import audit_async
from auditor.trace import FORMAT

DEV = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "labelled" / "dev.jsonl"
)  # ../shared beside the checkout


def _prf(report: LevelReport) -> dict[str, Any]:
    m = report.binary
    tp, fn = m.cell("unsupported", "unsupported"), m.cell("unsupported", "supported")
    fp, tn = m.cell("supported", "unsupported"), m.cell("supported", "supported")
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    f = 2 * p * r / (p + r) if p is not None and r is not None and p + r else None
    return {"n": report.items, "tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": p, "recall": r, "f1": f}


def _balanced(report: LevelReport) -> dict[str, Any]:
    se, sp = report.sensitivity.value, report.specificity.value
    return {
        "n": report.items,
        "positives": report.sensitivity.denominator,
        "sensitivity": se,
        "specificity": sp,
        "balanced_accuracy": (se + sp) / 2 if se is not None and sp is not None else None,
    }


def _clear_caches() -> int:
    cleared = 0
    for value in vars(windows).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()
            cleared += 1
    return cleared


def _time_judge(audits: list[AnswerAudit]) -> tuple[int, float]:
    judge = OfflineJudge()
    claims = 0
    started = time.perf_counter()
    for audit in audits:
        admitted = [e for e, d in zip(audit.answer.evidence, audit.decisions, strict=True) if d.admitted]
        excluded = [e for e, d in zip(audit.answer.evidence, audit.decisions, strict=True) if not d.admitted]
        judgeable = audit.decomposition.judgeable
        claims += len(judgeable)
        judge.judge_sync(judgeable, admitted, excluded)
    return claims, time.perf_counter() - started


async def run(dev: Path = DEV) -> dict[str, Any]:
    records = load_labelled(dev)
    result, audits = await audit_async([dev], judge="offline", format=FORMAT, store=False)
    answers = {a.trace_id: a for a in result.answers}
    cleared = _clear_caches()
    claims, cold = _time_judge(audits)
    _, warm = _time_judge(audits)

    groups = defaultdict(list)
    for record in records:
        groups[record.segment].append(record)
    groups["ALL"] = list(records)
    by_record = {r.trace_id: r for r in records}
    settle: dict[str, dict[str, int]] = defaultdict(
        lambda: {"claims": 0, "settled": 0, "settled_unsupported": 0}
    )
    judge = OfflineJudge()
    for audit in audits:
        found = by_record.get(audit.answer.trace_id)
        if found is None:
            continue
        record = found
        admitted = [e for e, d in zip(audit.answer.evidence, audit.decisions, strict=True) if d.admitted]
        shift = max(record.answer.find(audit.answer.text), 0)
        for claim in audit.decomposition.judgeable:
            verdict = judge.settle(claim, admitted)
            human = (
                record.human
                if record.unit == "claim"
                else human_claim_verdict(claim.start + shift, claim.end + shift, record.labels)
            )
            for key in (record.segment, "ALL"):
                settle[key]["claims"] += 1
                if verdict is not None:
                    settle[key]["settled"] += 1
                    settle[key]["settled_unsupported"] += human != "supported"
    segments: dict[str, Any] = {}
    for name, group in sorted(groups.items(), key=lambda kv: (kv[0] == "ALL", kv[0])):
        claim_items, claim_unmapped, answer_items, answer_unmapped = compare(group, answers)
        claim_report = level_report("claim", claim_items, claim_unmapped, resamples=200)
        answer_report = level_report("answer", answer_items, answer_unmapped, resamples=200)
        rule = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
        for record in group:
            audited = answers.get(record.trace_id)
            if audited is None or audited.grounded is None:
                continue
            predicted, actual = not audited.grounded, record.human != "supported"
            rule[("t" if predicted == actual else "f") + ("p" if predicted else "n")] += 1
        p = rule["tp"] / (rule["tp"] + rule["fp"]) if rule["tp"] + rule["fp"] else None
        r = rule["tp"] / (rule["tp"] + rule["fn"]) if rule["tp"] + rule["fn"] else None
        segments[name] = {
            "records": len(group),
            "answer": _prf(answer_report),
            "answer_policy_rule": {
                **rule,
                "precision": p,
                "recall": r,
                "f1": 2 * p * r / (p + r) if p is not None and r is not None and p + r else None,
            },
            "claim": _balanced(claim_report),
            "kappa_claim": claim_report.kappa.value,
            "kappa_answer": answer_report.kappa.value,
            "settle": settle[name],
            "lost_spans": claim_report.unmapped.labelled_spans,
            "unmapped_answers": sum(answer_report.unmapped.records.values()),
        }
    return {
        "dev_path": str(dev),
        "records": len(records),
        "claims_judged": claims,
        "caches_cleared": cleared,
        "seconds_cold": cold,
        "seconds_warm": warm,
        "claims_per_second_cold": claims / cold,
        "claims_per_second_warm": claims / warm,
        "segments": segments,
    }
