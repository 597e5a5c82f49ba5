"""``compare_policies()``: the same answers audited under two policies (``auditor policy diff``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from auditor.judges import build_judge
from auditor.llm import run_sync
from auditor.metrics import PolicyComparison, verdict_diff
from auditor.pipeline import audit_all, audit_out, find_answers
from auditor.policy import Policy, diff
from auditor.results import AnswerOut, judge_ref


def compare_policies(
    paths: Sequence[Path],
    policy_a: Policy,
    policy_b: Policy,
    *,
    judge: str = "offline",
    base_url: str | None = None,
    format: str | None = None,
    concurrency: int = 8,
) -> PolicyComparison:
    """Audit the answers in ``paths`` (found with ``policy_a``) under both policies with one judge,
    and compare. Both audits judge the same claims; nothing is stored. Raises as :func:`audit`."""
    ingested, answers = find_answers(paths, format, policy_a)
    setup = build_judge(judge, base_url=base_url, concurrency=concurrency)

    async def both() -> list[list[AnswerOut]]:
        await setup.check()
        try:
            return [
                [audit_out(x) for x in await audit_all(answers, p, setup.extractor, setup.judge, concurrency)]
                for p in (policy_a, policy_b)
            ]
        finally:
            await setup.aclose()

    a, b = run_sync(both)
    evidence = diff(policy_a, policy_b, answers)
    judged = verdict_diff(
        a, b, evidence, judge_ref(setup.judge.identity), policy_a.thresholds, policy_b.thresholds
    )
    return PolicyComparison(evidence=evidence, verdicts=judged, problems=len(ingested.problems))
