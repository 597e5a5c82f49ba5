"""The one place that talks to an LLM: an ``openai.AsyncOpenAI`` wrapper.

:class:`LLMClient` adds structured output, retry classification with backoff (429 / 5xx /
timeouts, ``Retry-After``), one named concurrency limiter, an optional shared rate budget
(:class:`LLMBudget`, :class:`LocalBudget`, :func:`parse_rate`) and usage accounting. Nothing here
knows what a claim or a verdict is; the judges stage builds its prompts on top.
"""

from __future__ import annotations

from auditor.errors import LLMConnectionError, LLMError, LLMStatusError, LLMTimeoutError
from auditor.llm._budget import LLMBudget, LocalBudget, parse_rate
from auditor.llm._client import Completion, LLMClient, Usage, run_sync
from auditor.llm._prices import price_table

__all__ = [
    "Completion",
    "LLMBudget",
    "LLMClient",
    "LLMConnectionError",
    "LLMError",
    "LLMStatusError",
    "LLMTimeoutError",
    "LocalBudget",
    "Usage",
    "parse_rate",
    "price_table",
    "run_sync",
]
