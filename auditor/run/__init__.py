"""The runs around the pipeline: ``audit()``, ``calibrate()`` and ``compare_policies()`` (sync edges).

``audit()`` reads trace files, audits every answer and stores the run as it goes (resumable, with
a lease); ``calibrate()`` audits a labelled file the same way (with no run of its own) and stores
the judge's calibration (:mod:`auditor.calibration`), which later audits use to correct their
rates; ``compare_policies()`` audits the same answers under two policies (``auditor policy diff``).
"""

from auditor.run._audit import AuditOptions, audit, audit_answers_async, audit_async, finish_result
from auditor.run._calibrate import calibrate, calibrate_async
from auditor.run._compare import compare_policies
from auditor.run._correction import choose_calibration, with_correction
from auditor.run._progress import Progress

__all__ = [
    "AuditOptions",
    "Progress",
    "audit",
    "audit_answers_async",
    "audit_async",
    "calibrate",
    "calibrate_async",
    "choose_calibration",
    "compare_policies",
    "finish_result",
    "with_correction",
]
