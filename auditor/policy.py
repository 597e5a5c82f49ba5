"""The policy stage: which evidence items count, decided by a declared, hashed policy file.

``trace -> evidence -> policy -> claims -> ...``: this stage takes the answers evidence
reconstruction produced and gives each evidence item a :class:`Decision` (admitted or excluded,
the source class, the rule and the reason in words). It never drops an item: excluded evidence is
kept so later stages can say which excluded items would have supported a claim.

This module is the stage's public face; the work is in :mod:`auditor.policy_model` (the file's
schema and hash), :mod:`auditor.policy_loading` (TOML, shipped policies, error messages),
:mod:`auditor.policy_evaluate` (decisions) and :mod:`auditor.policy_compare` (explain and diff).
"""

from __future__ import annotations

from auditor.policy_compare import (
    AnswerDiff,
    AnswerExplanation,
    Change,
    ExplainedItem,
    PolicyDiff,
    diff,
    explain,
)
from auditor.policy_evaluate import Decision, decide, evaluate
from auditor.policy_loading import (
    DEFAULT_POLICY,
    load_policy,
    parse_policy,
    policy_json_schema,
    shipped_policies,
)
from auditor.policy_model import (
    AnswersSection,
    EvidenceSwitches,
    MetadataCondition,
    Policy,
    RejectIf,
    SourceClass,
    Thresholds,
)

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
    "evaluate",
    "explain",
    "load_policy",
    "parse_policy",
    "policy_json_schema",
    "shipped_policies",
]
