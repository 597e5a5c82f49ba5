"""Groundedness checks in a test suite: :func:`assert_grounded` and the pytest plugin.

``assert_grounded(answer, evidence_or_trace, policy=...)`` audits one answer as ``auditor audit``
would (same judge, same policy thresholds) and raises :class:`NotGroundedError`, an
``AssertionError`` whose message lists each unsupported claim with its verdict, quotes and
reason. The pytest plugin (``auditor.testing._plugin``, entry point ``pytest11``) adds the
``grounding`` fixture, the ``golden_set`` marker (one test case per answer of a records or trace
file) and the ``--auditor-judge`` / ``--auditor-policy`` options; it imports nothing of the
auditor until a test uses it. Nothing here needs pytest except the plugin module.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auditor.testing._check import CheckConfig, NotGroundedError, assert_grounded, explain

__all__ = ["CheckConfig", "NotGroundedError", "assert_grounded", "explain"]


def __getattr__(name: str) -> Any:
    # Lazy: pytest imports this package (for the plugin) in every session, tests or not.
    if name not in __all__:
        raise AttributeError(f"module 'auditor.testing' has no attribute {name!r}")
    value = getattr(import_module("auditor.testing._check"), name)
    globals()[name] = value
    return value
