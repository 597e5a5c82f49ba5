"""trace-auditor: a groundedness auditor for tool-using agents.

The pipeline, one package per stage: ``trace -> evidence -> policy -> claims -> judges ->
results -> metrics -> store | report`` (``docs/architecture.md``). See ``README.md`` for the commands and the JSON contract.

The names below are the public API; they are imported on first use, so ``import auditor`` stays
cheap (no model client, database or statistics library is loaded until asked for).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "audit": "auditor.run",
    "AuditOptions": "auditor.run",
    "collect_evidence": "auditor.pipeline",
    "read_traces": "auditor.trace",
    "reconstruct": "auditor.evidence",
    "load_policy": "auditor.policy",
    "Policy": "auditor.policy",
    "AuditResult": "auditor.results",
    "render_report": "auditor.report",
    "write_report": "auditor.report",
    "Store": "auditor.store",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'auditor' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
