"""Build the claim extractor and judge a ``--judge`` specification names.

``offline`` is the embedded default: the rule-based extractor and the offline judge, no network.
``openai:MODEL`` uses any OpenAI-compatible endpoint (``base_url``); by default through the
cascade (claims the offline checks settle with certainty need no call) and the caches (verdicts,
LLM decompositions, fused results: in the store during a run, else in the app directory), so a
re-audit of the same traces makes no calls in any mode.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from auditor.claims import ClaimExtractor, RuleExtractor
from auditor.errors import UsageError
from auditor.judges._cascade import CascadeJudge
from auditor.judges.cache import (
    CachingExtractor,
    CachingFused,
    CachingJudge,
    DecompositionCache,
    FusedCache,
    JsonlDecompositionCache,
    JsonlFusedCache,
    JsonlVerdictCache,
    VerdictCache,
)
from auditor.judges.llm import FusedAuditor, LLMDecomposer, LLMJudge
from auditor.judges.offline import OfflineJudge
from auditor.llm import LLMBudget, LLMClient, price_table
from auditor.settings import app_dir, setting

Decomposer = Literal["rules", "llm", "fused"]


@dataclass
class JudgeSetup:
    """The extractor and judge for a run, and what must be closed or reported after it."""

    extractor: ClaimExtractor
    judge: OfflineJudge | LLMJudge | CascadeJudge | CachingJudge
    client: LLMClient | None = None
    cascade: CascadeJudge | None = None
    cache: CachingJudge | None = None
    fused: FusedAuditor | CachingFused | None = (
        None  # decomposes and judges in one call instead of extractor + judge
    )
    decomposition_cache: CachingExtractor | None = None  # the extractor, when LLM decompositions are cached
    notes: list[str] = field(default_factory=list)

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()

    async def check(self) -> None:
        """Before any work: is the LLM endpoint there, is the key good, is the model known? (One
        cheap request; nothing for the offline judge.) Closes the client when the check fails.

        Raises:
            LLMError: the reason, e.g. connection refused, HTTP 401 (bad key), no such model.
        """
        if self.client is None:
            return
        try:
            await self.client.check()
        except BaseException:
            await self.aclose()
            raise

    def usage(self) -> dict[str, Any] | None:
        """The run record's usage: LLM calls and tokens, cascade and cache counts (None offline)."""
        if self.client is None:
            return None
        usage: dict[str, Any] = {"llm": asdict(self.client.usage)}
        if self.cascade is not None:
            stats = self.cascade.stats
            usage["cascade"] = {**asdict(stats), "calls_saved_per_answer": stats.calls_saved_per_answer}
        if self.cache is not None:
            usage["cache"] = {"hits": self.cache.hits, "misses": self.cache.misses}
        if self.decomposition_cache is not None:
            usage["decomposition_cache"] = {
                "hits": self.decomposition_cache.hits,
                "misses": self.decomposition_cache.misses,
            }
        if isinstance(self.fused, CachingFused):
            usage["fused_cache"] = {"hits": self.fused.hits, "misses": self.fused.misses}
        return usage

    def outcome(self) -> Literal["finished", "failed"]:
        """How a run with this setup ended: ``failed`` when LLM calls were made and every one failed."""
        usage = self.client.usage if self.client is not None else None
        return "failed" if usage is not None and usage.calls and usage.failed == usage.calls else "finished"


def build_judge(
    spec: str,
    *,
    base_url: str | None = None,
    cascade: bool = True,
    use_cache: bool = True,
    decomposer: Decomposer = "rules",
    concurrency: int = 8,
    cache_backend: VerdictCache | None = None,
    decomposition_backend: DecompositionCache | None = None,
    fused_backend: FusedCache | None = None,
    budget: LLMBudget | None = None,
) -> JudgeSetup:
    """The judge setup for ``spec`` (``offline`` or ``openai:MODEL``).

    With ``use_cache``, verdicts, LLM decompositions (``decomposer="llm"``) and fused results
    (``decomposer="fused"``) are cached. ``cache_backend``, ``decomposition_backend`` and
    ``fused_backend`` are where they live (the store's tables in a run); without one, a JSON-lines
    file in the app directory (``verdict-cache.jsonl``, ``decomposition-cache.jsonl``,
    ``fused-cache.jsonl``). ``budget`` is the rate (and cluster-wide concurrency) budget the
    client shares with other clients (:class:`~auditor.llm.LocalBudget` in one process, a
    ``ClusterBudget`` handle on Ray workers); the offline judge ignores it.

    Raises:
        UsageError: an unknown spec, or ``openai:`` with no key and no ``base_url``.
    """
    if spec == "offline":
        if decomposer != "rules":
            raise UsageError(f"--decomposer {decomposer} needs an LLM judge: pass --judge openai:MODEL.")
        return JudgeSetup(extractor=RuleExtractor(), judge=OfflineJudge())
    kind, _, model = spec.partition(":")
    if kind != "openai" or not model:
        raise UsageError(
            f"Unknown judge {spec!r}: use 'offline' or 'openai:MODEL' (e.g. openai:gpt-4.1-mini)."
        )
    key = setting("api_key")
    if not key and not base_url:
        raise UsageError(
            "No key found: set OPENAI_API_KEY, pass --base-url for a local server, or use --judge offline."
        )
    # Local OpenAI-compatible servers (vLLM, Ollama) accept any key; the client insists on one.
    client = LLMClient(
        model,
        base_url=base_url,
        api_key=key or "unused",
        concurrency=concurrency,
        prices=price_table(setting("llm_prices")),
        budget=budget,
    )
    setup = JudgeSetup(
        extractor=RuleExtractor() if decomposer == "rules" else LLMDecomposer(client),
        judge=LLMJudge(client),
        client=client,
    )
    if decomposer == "fused":
        # Claims are unknown before the call: no cascade, and the cache holds whole answers.
        fused = FusedAuditor(client)
        setup.fused = fused
        if use_cache:
            setup.fused = CachingFused(
                fused,
                fused_backend or JsonlFusedCache(app_dir() / "fused-cache.jsonl"),
                endpoint=client.endpoint,
            )
        return setup
    if use_cache and isinstance(setup.extractor, LLMDecomposer):
        decompositions = decomposition_backend or JsonlDecompositionCache(
            app_dir() / "decomposition-cache.jsonl"
        )
        setup.decomposition_cache = CachingExtractor(
            setup.extractor, decompositions, endpoint=client.endpoint
        )
        setup.extractor = setup.decomposition_cache
    if cascade:
        setup.cascade = CascadeJudge(setup.judge)
        setup.judge = setup.cascade
    if use_cache:
        backend = cache_backend or JsonlVerdictCache(app_dir() / "verdict-cache.jsonl")
        setup.cache = CachingJudge(setup.judge, backend, endpoint=client.endpoint)
        setup.judge = setup.cache
    return setup
