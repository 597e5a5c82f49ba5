"""The release gate: a golden run audited and judged against the policy's thresholds.

:func:`run_gate` audits, decides pass or fail (pass rate, no contradicted or unjudged claim,
refusal figures with labels) and :func:`write_junit` writes one JUnit test case per answer.
"""

from __future__ import annotations

from auditor.gate._gate import GateDecision, GateRun, describe_rate, run_gate
from auditor.gate._junit import write_junit

__all__ = [
    "GateDecision",
    "GateRun",
    "describe_rate",
    "run_gate",
    "write_junit",
]
