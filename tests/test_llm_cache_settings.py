"""The cache keys carry the judge settings that change a verdict (issue 28 item 2): the sampling
temperature, the evidence budget of the prompt, and the cascade's offline stage. A changed setting
is a miss, judged afresh by the server; the same settings are a hit with no call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from auditor.judges import (
    CachingFused,
    CachingJudge,
    CascadeJudge,
    FusedAuditor,
    JudgeIdentity,
    LLMDecomposer,
    LLMJudge,
    MemoryVerdictCache,
)
from auditor.judges._verdicts import settings_of
from auditor.judges.cache._cache import CachingExtractor, decomposition_key, fused_key
from auditor.judges.cache._cache_files import MemoryDecompositionCache, MemoryFusedCache
from auditor.llm import LLMClient
from tests.support.fake_openai import FakeOpenAI, make_answer
from tests.test_llm_modes import POLICY

CLAIM = "Returns are accepted within 30 days of delivery."
Build = Callable[[LLMClient], object]


def judge_once(
    server: FakeOpenAI, cache: MemoryVerdictCache, build: Build, temperature: float | None = 0.0
) -> str:
    """Judge the claim once through a verdict cache; which stage settled it."""

    async def go() -> str:
        client = LLMClient("fake-judge", base_url=server.base_url, api_key="unused", temperature=temperature)
        try:
            judge = CachingJudge(build(client), cache, endpoint=client.endpoint)  # type: ignore[arg-type]
            answer, claims = make_answer(CLAIM, [CLAIM], (POLICY,))
            (verdict,) = await judge.judge(answer, claims, (POLICY,), ())
            assert verdict.label.value == "supported"
            return verdict.settled_by
        finally:
            await client.aclose()

    return asyncio.run(go())


def plain(client: LLMClient) -> object:
    return LLMJudge(client)


def small_budget(client: LLMClient) -> object:
    return LLMJudge(client, max_evidence_chars=2_000)


def cascaded(client: LLMClient) -> object:
    return CascadeJudge(LLMJudge(client))


@pytest.mark.parametrize(
    ("changed", "temperature"),
    [
        (small_budget, 0.0),
        (plain, 0.7),
        (cascaded, 0.0),  # the cascade's offline stage first
    ],
    ids=["evidence_budget", "temperature", "cascade"],
)
def test_a_changed_setting_is_a_miss_and_the_same_settings_a_hit(changed: Build, temperature: float) -> None:
    cache = MemoryVerdictCache()
    with FakeOpenAI() as server:
        assert judge_once(server, cache, plain) == "llm"
        assert judge_once(server, cache, plain) == "cache"  # the same settings: a hit, no call
        assert server.by_kind["judge"] == 1
        # a miss: judged afresh, by the server, or (the cascade) by its offline stage, which settles
        # this verbatim claim itself rather than take what the model said without it
        again = judge_once(server, cache, changed, temperature)
        assert again == ("offline" if changed is cascaded else "llm")
        assert server.by_kind["judge"] == (1 if again == "offline" else 2)
        assert len(cache) == 2


def test_the_settings_enter_every_key() -> None:
    client = LLMClient("m", base_url="http://127.0.0.1:9/v1", api_key="unused")
    other = LLMClient("m", base_url="http://127.0.0.1:9/v1", api_key="unused", temperature=1.0)
    identity = JudgeIdentity(kind="openai", model="m", prompt_version="v")
    answer, _ = make_answer(CLAIM, [CLAIM], (POLICY,))
    assert settings_of(LLMJudge(client)) == ("evidence_chars=60000", "temperature=0.0")
    assert settings_of(LLMJudge(client)) != settings_of(LLMJudge(client, max_evidence_chars=1_000))
    assert settings_of(LLMDecomposer(client)) != settings_of(LLMDecomposer(other))
    assert settings_of(FusedAuditor(client)) != settings_of(FusedAuditor(client, max_evidence_chars=1_000))
    assert settings_of(CascadeJudge(LLMJudge(client))) != settings_of(LLMJudge(client))
    cold, warm = settings_of(LLMDecomposer(client)), settings_of(LLMDecomposer(other))
    assert decomposition_key(answer, identity, "e", cold) != decomposition_key(answer, identity, "e", warm)
    assert fused_key(answer, "d", identity, False, "e", cold) != fused_key(
        answer, "d", identity, False, "e", warm
    )
    wrapped = CachingExtractor(LLMDecomposer(other), MemoryDecompositionCache(), endpoint="e")
    assert wrapped.settings == ("temperature=1.0",)
    fused = CachingFused(FusedAuditor(client, max_evidence_chars=5), MemoryFusedCache(), endpoint="e")
    assert fused.settings == ("evidence_chars=5", "temperature=0.0")
