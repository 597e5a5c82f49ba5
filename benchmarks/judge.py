"""The offline judge's speed on the labelled dev set (its accuracy is :mod:`benchmarks.accuracy`'s).

The dev set is read where it lives (``../shared/data/labelled/dev.jsonl`` beside the checkout, or
``--dev PATH``); it is never copied. The records are audited through the normal pipeline (records
adapter, default policy, rule-based decomposer, offline judge); then claims per second of
``OfflineJudge.judge_sync`` over every answer, evidence preparation included (its per-item cache
cleared first) and with it warm.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from auditor.calibration import load_labelled
from auditor.judges import OfflineJudge
from auditor.judges.reading import _windows as windows
from auditor.pipeline import AnswerAudit
from auditor.run import audit_async
from auditor.trace import FORMAT

DEV = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "labelled" / "dev.jsonl"
)  # ../shared beside the checkout


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
    _, audits = await audit_async([dev], judge="offline", format=FORMAT, store=False)
    cleared = _clear_caches()
    claims, cold = _time_judge(audits)
    _, warm = _time_judge(audits)

    return {
        "dev_path": str(dev),
        "records": len(records),
        "claims_judged": claims,
        "caches_cleared": cleared,
        "seconds_cold": cold,
        "seconds_warm": warm,
        "claims_per_second_cold": claims / cold,
        "claims_per_second_warm": claims / warm,
    }
