"""The judges stage: claims and admitted evidence in, one verdict per claim out.

Every judge implements the :class:`Judge` protocol and returns :class:`ClaimVerdict` objects
(``supported`` / ``contradicted`` / ``absent`` / ``unjudged`` with quotes); :func:`verify_quotes`
checks every quote against its item, that the quotes carry the claim and that they agree with it
(:mod:`auditor.judges._agree`: no negation, rival figure or rival name), for all judges alike. Implementations: the offline judge
(deterministic cues, the embedded default), the LLM judge, the cascade that settles certain claims
offline before asking a model, the LLM decomposer and the fused decompose-and-judge call, and the
caches that make a re-audit free. :func:`verify_conflicts` and :func:`settle_conflict` keep both
sides when admitted sources disagree and apply the policy's ``on_conflict``. :func:`build_judge` turns a ``--judge`` spec into a ready set.
:func:`describe_unjudged` puts every ``unjudged`` reason in a sentence for people.
:func:`check_citations` judges each citation marker against the items it cites (misattribution).
"""

from __future__ import annotations

from auditor.judges._agree import QUOTE_DISAGREES
from auditor.judges._attribution import Attribution, MarkerCheck, check_citations
from auditor.judges._cache import (
    CachingFused,
    CachingJudge,
    DecompositionCache,
    FusedCache,
    VerdictCache,
    cacheable_fused,
    fused_from_json,
    fused_to_json,
)
from auditor.judges._cache_files import JsonlVerdictCache, MemoryVerdictCache
from auditor.judges._carry import clear_quote_caches
from auditor.judges._cascade import CascadeJudge
from auditor.judges._conflicts import OnConflict, settle_conflict, verify_conflicts, with_state_conflict
from auditor.judges._decompose import LLMDecomposer, call_failed
from auditor.judges._fused import FusedAuditor, FusedResult
from auditor.judges._llm import LLMJudge
from auditor.judges._offline import OfflineJudge, SupportScore
from auditor.judges._prompts import PROMPT_VERSION
from auditor.judges._setup import Decomposer, JudgeSetup, build_judge
from auditor.judges._unjudged import describe_unjudged
from auditor.judges._verdicts import (
    Citation,
    ClaimVerdict,
    ConflictQuote,
    Judge,
    JudgeIdentity,
    Label,
    LeftOut,
    UnjudgedReason,
    check_complete,
    verify_quotes,
)

__all__ = [
    "PROMPT_VERSION",
    "QUOTE_DISAGREES",
    "Attribution",
    "CachingFused",
    "CachingJudge",
    "CascadeJudge",
    "Citation",
    "ClaimVerdict",
    "ConflictQuote",
    "Decomposer",
    "DecompositionCache",
    "FusedAuditor",
    "FusedCache",
    "FusedResult",
    "JsonlVerdictCache",
    "Judge",
    "JudgeIdentity",
    "JudgeSetup",
    "LLMDecomposer",
    "LLMJudge",
    "Label",
    "LeftOut",
    "MarkerCheck",
    "MemoryVerdictCache",
    "OfflineJudge",
    "OnConflict",
    "SupportScore",
    "UnjudgedReason",
    "VerdictCache",
    "build_judge",
    "cacheable_fused",
    "call_failed",
    "check_citations",
    "check_complete",
    "clear_quote_caches",
    "describe_unjudged",
    "fused_from_json",
    "fused_to_json",
    "settle_conflict",
    "verify_conflicts",
    "verify_quotes",
    "with_state_conflict",
]
