"""The run's LLM usage as the report shows it: calls, tokens, cache hits and the estimated cost.

Read from the run record's ``usage`` (``auditor.judges.JudgeSetup.usage``), which an older or a
hand-made result may lack or hold partly: a missing count is shown as missing, never as zero, and a
cost the price table could not estimate stays unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_CACHES = (("cache", "verdicts"), ("decomposition_cache", "decompositions"), ("fused_cache", "fused calls"))


@dataclass(frozen=True)
class CacheView:
    name: str
    hits: int
    misses: int


@dataclass(frozen=True)
class UsageView:
    calls: int
    failed: int
    attempts: int | None
    retries: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_prompt_tokens: int | None
    cost_usd: float | None  # None: a model the price table does not list
    by_kind: list[tuple[str, int]]
    caches: list[CacheView]
    settled_offline: int | None  # claims the cascade settled without a call (None: no cascade)


def usage_view(usage: dict[str, Any] | None) -> UsageView | None:
    """The usage panel's figures, or None for a run that made no LLM calls (the offline judge)."""
    llm = (usage or {}).get("llm")
    if not isinstance(llm, dict) or not llm.get("calls"):
        return None
    caches = []
    for key, name in _CACHES:
        counts = (usage or {}).get(key)
        if isinstance(counts, dict):
            caches.append(CacheView(name, int(counts.get("hits", 0)), int(counts.get("misses", 0))))
    cascade = (usage or {}).get("cascade")
    offline = cascade.get("settled_offline") if isinstance(cascade, dict) else None
    by_kind = llm.get("by_kind")
    return UsageView(
        calls=int(llm["calls"]),
        failed=int(llm.get("failed") or 0),
        attempts=_int(llm.get("attempts")),
        retries=_int(llm.get("retries")),
        prompt_tokens=_int(llm.get("prompt_tokens")),
        completion_tokens=_int(llm.get("completion_tokens")),
        cached_prompt_tokens=_int(llm.get("cached_prompt_tokens")),
        cost_usd=float(llm["cost_usd"]) if isinstance(llm.get("cost_usd"), int | float) else None,
        by_kind=sorted(by_kind.items()) if isinstance(by_kind, dict) else [],
        caches=caches,
        settled_offline=_int(offline),
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None
