"""Caches that make a re-audit free: verdicts, decompositions and fused results by content key.

The wrappers (:class:`CachingJudge`, :class:`CachingExtractor`, :class:`CachingFused`) and their
in-memory and JSON-lines stores; the database store is :mod:`auditor.store`.
"""

from __future__ import annotations

from auditor.judges.cache._cache import (
    CachingExtractor,
    CachingFused,
    CachingJudge,
    DecompositionCache,
    FusedCache,
    VerdictCache,
    cacheable_fused,
    fused_from_json,
    fused_to_json,
)
from auditor.judges.cache._cache_files import (
    JsonlDecompositionCache,
    JsonlFusedCache,
    JsonlVerdictCache,
    MemoryVerdictCache,
)

__all__ = [
    "CachingExtractor",
    "CachingFused",
    "CachingJudge",
    "DecompositionCache",
    "FusedCache",
    "JsonlDecompositionCache",
    "JsonlFusedCache",
    "JsonlVerdictCache",
    "MemoryVerdictCache",
    "VerdictCache",
    "cacheable_fused",
    "fused_from_json",
    "fused_to_json",
]
