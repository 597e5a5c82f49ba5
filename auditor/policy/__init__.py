"""The policy stage: which evidence items count, decided by a declared, hashed policy file.

It gives each evidence item a :class:`Decision` (admitted or excluded, the source class, the rule
and the reason in words) and never drops one: excluded evidence is kept so later stages can say
which excluded items would have supported a claim. ``_model`` is the file's schema and hash (``_sources`` its source classes),
``_loading`` TOML, shipped policies and error messages, ``_regex`` the RE2 patterns (linear-time
matching on untrusted metadata), ``_evaluate`` the decisions, ``_compare`` explain and diff.
"""

from __future__ import annotations

from auditor.policy._compare import (
    AnswerDiff,
    AnswerExplanation,
    Change,
    ExplainedItem,
    PolicyDiff,
    diff,
    explain,
)
from auditor.policy._evaluate import Decision, decide, document_date, evaluate
from auditor.policy._loading import (
    DEFAULT_POLICY,
    load_policy,
    parse_policy,
    policy_json_schema,
    shipped_policies,
)
from auditor.policy._model import AnswersSection, EvidenceSwitches, Policy, Thresholds
from auditor.policy._sources import MetadataCondition, RejectIf, SourceClass

__all__ = [
    "DEFAULT_POLICY",
    "AnswerDiff",
    "AnswerExplanation",
    "AnswersSection",
    "Change",
    "Decision",
    "EvidenceSwitches",
    "ExplainedItem",
    "MetadataCondition",
    "Policy",
    "PolicyDiff",
    "RejectIf",
    "SourceClass",
    "Thresholds",
    "decide",
    "diff",
    "document_date",
    "evaluate",
    "explain",
    "load_policy",
    "parse_policy",
    "policy_json_schema",
    "shipped_policies",
]
