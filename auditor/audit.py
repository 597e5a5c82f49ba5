"""``audit()``: the library call behind ``auditor audit`` (a sync edge over the async pipeline)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from auditor.judging import Decomposer, build_judge
from auditor.llm.client import run_sync
from auditor.pipeline import AnswerAudit, audit_paths
from auditor.policy import Policy, load_policy
from auditor.results import AuditResult
from auditor.labels import Labels
from auditor.metrics import summarise


async def audit_async(paths: Sequence[Path], *, policy: Policy | None = None, judge: str = "offline",
                      base_url: str | None = None, cascade: bool = True, cache: bool = True,
                      decomposer: Decomposer = "rules", format: str | None = None, trace_id: str | None = None,
                      concurrency: int = 8, labels: Labels | None = None) -> tuple[AuditResult, list[AnswerAudit]]:
    """Audit every answer in ``paths``: see :func:`audit`."""
    policy = policy or load_policy()
    setup = build_judge(judge, base_url=base_url, cascade=cascade, use_cache=cache, decomposer=decomposer,
                        concurrency=concurrency)
    try:
        result, audits = await audit_paths(paths, policy, setup.extractor, setup.judge, format, trace_id, concurrency)
    finally:
        await setup.aclose()
    markers = {c.claim_id: c.markers for a in result.answers for c in a.claims or []}
    summary = summarise(result.answers, labels, thresholds=policy.thresholds, markers=markers)
    usage: dict[str, Any] | None = None
    if setup.client is not None:
        usage = {"llm": asdict(setup.client.usage)}
        if setup.cascade is not None:
            usage["cascade"] = asdict(setup.cascade.stats)
        if setup.cache is not None:
            usage["cache"] = {"hits": setup.cache.hits, "misses": setup.cache.misses}
    run = result.run.model_copy(update={"usage": usage})
    return result.model_copy(update={"summary": summary.model_dump(mode="json"), "run": run}), audits


def audit(paths: Sequence[Path], *, policy: Policy | None = None, judge: str = "offline",
          base_url: str | None = None, cascade: bool = True, cache: bool = True,
          decomposer: Decomposer = "rules", format: str | None = None, trace_id: str | None = None,
          concurrency: int = 8, labels: Labels | None = None) -> AuditResult:
    """Audit every answer in ``paths`` and return the public JSON result.

    Args:
        paths: trace files, any installed format.
        policy: the admissible-source policy (the shipped default when None).
        judge: ``offline`` (approximate, no network) or ``openai:MODEL``.
        base_url: an OpenAI-compatible endpoint for ``openai:`` judges.
        cascade: settle claims the offline checks are certain about without an LLM call.
        cache: reuse verdicts cached in the app directory (LLM judges only).
        decomposer: ``rules`` or ``llm`` claim decomposition.
        format: force an adapter instead of sniffing.
        trace_id: keep only answers of this trace (a prefix is enough).
        concurrency: answers audited at once (and requests in flight).
        labels: a labels file's content (adds refusal accuracy and over-refusal).
    """
    result, _ = run_sync(lambda: audit_async(paths, policy=policy, judge=judge, base_url=base_url, cascade=cascade,
                                             cache=cache, decomposer=decomposer, format=format, trace_id=trace_id,
                                             concurrency=concurrency, labels=labels))
    return result
