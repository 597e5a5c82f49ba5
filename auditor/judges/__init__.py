"""The judges stage: claims and admitted evidence in, one verdict per claim out.

Every judge implements the :class:`Judge` protocol and returns :class:`ClaimVerdict` objects
(``supported`` / ``contradicted`` / ``absent`` / ``unjudged`` with quotes). The stage is laid out by
job (docs/architecture.md):

- here: the protocol and the verdict model (``_verdicts``), :func:`build_judge` (``_setup``), the
  cascade that settles certain claims offline before asking a model (``_cascade``: it composes two
  judges, so it belongs to neither) and :func:`describe_unjudged` (every ``unjudged`` reason in a
  sentence for people);
- :mod:`auditor.judges.offline`: the offline judge (deterministic cues, the embedded default);
- :mod:`auditor.judges.llm`: the LLM judge, the LLM decomposer and the fused decompose-and-judge call;
- :mod:`auditor.judges.verify`: what every judge's verdict passes alike: :func:`verify_quotes` (each
  quote is in its item, carries the claim and agrees with it), :func:`verify_conflicts` and
  :func:`settle_conflict` (both sides kept when admitted sources disagree, the policy's
  ``on_conflict`` applied), :func:`check_citations` (each citation marker against the items it cites);
- :mod:`auditor.judges.reading`: how a claim and an item are read (stems, figures, names, windows),
  shared by the offline judge, the checks and the LLM judge's excerpts;
- :mod:`auditor.judges.cache`: the caches that make a re-audit free.
"""

from __future__ import annotations

from auditor.judges._cascade import CascadeJudge
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
)
from auditor.judges.cache import (
    CachingFused,
    CachingJudge,
    DecompositionCache,
    FusedCache,
    JsonlVerdictCache,
    MemoryVerdictCache,
    VerdictCache,
    cacheable_fused,
    fused_from_json,
    fused_to_json,
)
from auditor.judges.llm import PROMPT_VERSION, FusedAuditor, FusedResult, LLMDecomposer, LLMJudge, call_failed
from auditor.judges.offline import OfflineJudge, SupportScore
from auditor.judges.verify import (
    QUOTE_DISAGREES,
    Attribution,
    MarkerCheck,
    OnConflict,
    check_citations,
    clear_quote_caches,
    settle_conflict,
    verify_conflicts,
    verify_quotes,
    with_state_conflict,
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
