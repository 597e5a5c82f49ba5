"""The LLM judge: fenced prompts, strict parsing, the judge, the decomposer and the fused call.

:class:`LLMJudge` asks a model for verdicts with quotes; :class:`LLMDecomposer` asks it for claims;
:class:`FusedAuditor` does both in one call. Prompts fence the evidence (``_fence``, ``_prompts``),
long evidence is cut to the window that matters (``_excerpt``), replies are parsed strictly
(``_parse``). Every verdict then passes :mod:`auditor.judges.verify` like any judge's.
"""

from __future__ import annotations

from auditor.judges.llm._decompose import LLMDecomposer, call_failed
from auditor.judges.llm._fused import FusedAuditor, FusedResult
from auditor.judges.llm._llm import LLMJudge
from auditor.judges.llm._prompts import PROMPT_VERSION

__all__ = [
    "PROMPT_VERSION",
    "FusedAuditor",
    "FusedResult",
    "LLMDecomposer",
    "LLMJudge",
    "call_failed",
]
