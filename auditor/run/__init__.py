"""The runs around the pipeline: ``audit()``, ``calibrate()`` and ``compare_policies()`` (sync edges).

``audit()`` reads trace files, audits every answer and stores the run as it goes (resumable, with
a lease); ``calibrate()`` audits a labelled file the same way (with no run of its own) and stores
the judge's calibration (:mod:`auditor.calibration`), which later audits use to correct their
rates; ``compare_policies()`` audits the same answers under two policies (``auditor policy diff``).
``reaudit()`` judges a stored run's answers again from the traces the store kept (another
policy or judge, no files needed).
``AuditOptions`` is how the options of all of them travel, from the CLI to each Ray worker.
``audit_into_run()`` is the part every engine shares: answers audited into an open run, each saved
as it finishes (one process here; each shard's task on a Ray cluster in :mod:`auditor.scale`).
"""

from auditor.run._audit import (
    audit,
    audit_answers_async,
    audit_async,
    finish_result,
    open_run,
)
from auditor.run._calibrate import calibrate, calibrate_async
from auditor.run._compare import compare_policies
from auditor.run._correction import choose_calibration, with_correction
from auditor.run._into import RunTarget, audit_into_run, local_budget, store_judge
from auditor.run._options import AuditArgs, AuditOptions, with_changes
from auditor.run._progress import Progress
from auditor.run._reaudit import judge_spec, reaudit, reaudit_async, reaudit_options, stored_policy
from auditor.run._usage import UsageMeter, merge_usage

__all__ = [
    "AuditArgs",
    "AuditOptions",
    "Progress",
    "RunTarget",
    "UsageMeter",
    "audit",
    "audit_answers_async",
    "audit_async",
    "audit_into_run",
    "calibrate",
    "calibrate_async",
    "choose_calibration",
    "compare_policies",
    "finish_result",
    "judge_spec",
    "local_budget",
    "merge_usage",
    "open_run",
    "reaudit",
    "reaudit_async",
    "reaudit_options",
    "store_judge",
    "stored_policy",
    "with_changes",
    "with_correction",
]
