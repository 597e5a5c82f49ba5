"""Talking to LLMs: the client (retries, limiter, accounting), typed prompts, the LLM decomposer, fused mode.

:mod:`auditor.llm.client` is the only module that imports ``openai``. Judges built on it live in
:mod:`auditor.judges.llm` and :mod:`auditor.judges.cascade`.
"""

from auditor.errors import LLMConnectionError, LLMError, LLMStatusError, LLMTimeoutError
from auditor.llm.client import Completion, LLMClient, Usage, run_sync
from auditor.llm.prompts import PROMPT_VERSION

__all__ = [
    "PROMPT_VERSION",
    "Completion",
    "LLMClient",
    "LLMConnectionError",
    "LLMError",
    "LLMStatusError",
    "LLMTimeoutError",
    "Usage",
    "run_sync",
]
