"""trace-auditor: a groundedness auditor for tool-using agents.

The pipeline, one module per stage: ``trace -> evidence -> policy -> claims -> verdicts ->
metrics -> results -> store | report``. See ``README.md`` for the commands and the JSON contract.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
