"""The claims stage: an answer in, atomic claims with character offsets out.

The rule-based decomposer (:class:`RuleExtractor`, name ``rules``) splits sentences and clauses
without rewriting the text, and screens out what asserts nothing (hedges, restatements, offers,
pleasantries, refusals) with a reason. Claim text is always ``answer.text[start:end]``.
A claim keeps its citation markers as written; :func:`resolve_markers` looks them up among the
answer's evidence (by definition, id, URL or position in the last retrieval).
"""

from __future__ import annotations

from auditor.claims._markers import Target, parse_marker
from auditor.claims._model import Claim, ClaimExtractor, Decomposition, ScreenReason
from auditor.claims._resolve import MarkerResolution, MarkerResolver, normalise_url, resolve_markers
from auditor.claims._rules import RuleExtractor, attach_markers, decompose_answer, decompose_text
from auditor.claims._split import sentences

__all__ = [
    "Claim",
    "ClaimExtractor",
    "Decomposition",
    "MarkerResolution",
    "MarkerResolver",
    "RuleExtractor",
    "ScreenReason",
    "Target",
    "attach_markers",
    "decompose_answer",
    "decompose_text",
    "normalise_url",
    "parse_marker",
    "resolve_markers",
    "sentences",
]
