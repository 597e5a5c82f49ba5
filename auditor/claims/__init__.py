"""The claims stage: an answer in, atomic claims with character offsets out.

The rule-based decomposer (:class:`RuleExtractor`, name ``rules``) splits sentences and clauses
without rewriting the text, and screens out what asserts nothing (hedges, restatements, offers,
pleasantries, refusals) with a reason. Claim text is always ``answer.text[start:end]``.
"""

from __future__ import annotations

from auditor.claims._model import Claim, ClaimExtractor, Decomposition, ScreenReason
from auditor.claims._rules import RuleExtractor, decompose_answer, decompose_text
from auditor.claims._split import sentences

__all__ = [
    "Claim",
    "ClaimExtractor",
    "Decomposition",
    "RuleExtractor",
    "ScreenReason",
    "decompose_answer",
    "decompose_text",
    "sentences",
]
