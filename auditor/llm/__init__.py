"""The one place that talks to an LLM: an ``openai.AsyncOpenAI`` wrapper.

:class:`LLMClient` adds structured output, retry classification with backoff (429 / 5xx /
timeouts, ``Retry-After``), one named concurrency limiter and usage accounting. Nothing here knows
what a claim or a verdict is; the judges stage builds its prompts on top.
"""

from __future__ import annotations

from auditor.errors import LLMConnectionError, LLMError, LLMStatusError, LLMTimeoutError
from auditor.llm._client import Completion, LLMClient, Usage, run_sync
from auditor.llm._prices import price_table

__all__ = [
    "Completion",
    "LLMClient",
    "LLMConnectionError",
    "LLMError",
    "LLMStatusError",
    "LLMTimeoutError",
    "Usage",
    "price_table",
    "run_sync",
]
