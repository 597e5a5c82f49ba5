"""Batch audits at scale: the same pipeline on a Ray cluster (the optional ``ray`` extra).

:func:`audit_on_ray` is :func:`auditor.run.audit` with its shards audited by Ray tasks: the files
are scanned in parallel and cut into shards (whole conversations on one), each shard's answers
are audited by :func:`auditor.run.audit_into_run` exactly as one process does, into one stored
run with idempotent writes, and the driver finishes it; :func:`reaudit_on_ray` does the same for
a stored run's kept traces (``auditor reaudit --engine ray``). :class:`ClusterBudget` is the one LLM
rate and concurrency budget for every worker. The input side (:func:`scan_file`,
:func:`plan_shards`, :func:`read_shard`) is usable on its own. Ray is imported only when a
function here needs it: without it, ``--engine ray`` is one line saying what to install.
See ``docs/scale.md``.
"""

from __future__ import annotations

from auditor.scale._budget import BudgetHandle, ClusterBudget
from auditor.scale._engine import RAY_MISSING, audit_on_ray, import_ray, reaudit_on_ray
from auditor.scale._plan import FileScan, Shard, TraceEntry, plan_shards, read_shard, scan_file
from auditor.scale._worker import ShardJob, ShardOutcome, audit_shard

__all__ = [
    "RAY_MISSING",
    "BudgetHandle",
    "ClusterBudget",
    "FileScan",
    "Shard",
    "ShardJob",
    "ShardOutcome",
    "TraceEntry",
    "audit_on_ray",
    "audit_shard",
    "import_ray",
    "plan_shards",
    "read_shard",
    "reaudit_on_ray",
    "scan_file",
]
