"""The verdict cache keys the endpoint: a verdict cached from one server is not served to a run
that names another server with the same model name (issue 28)."""

from __future__ import annotations

import asyncio

from auditor.judges import JudgeIdentity, Label, MemoryVerdictCache, build_judge
from auditor.judges.cache._cache import cache_key
from tests.support.fake_openai import FakeOpenAI, make_answer
from tests.test_llm_modes import POLICY

CLAIM = "Returns are accepted within 30 days of delivery."


def judge_once(server: FakeOpenAI, cache: MemoryVerdictCache) -> Label:
    async def go() -> Label:
        setup = build_judge("openai:fake-judge", base_url=server.base_url, cascade=False, cache_backend=cache)
        try:
            answer, claims = make_answer(CLAIM, [CLAIM], (POLICY,))
            (verdict,) = await setup.judge.judge(answer, claims, (POLICY,), ())
            return verdict.label
        finally:
            await setup.aclose()

    return asyncio.run(go())


def test_a_verdict_cached_from_one_server_is_not_served_for_another() -> None:
    cache = MemoryVerdictCache()
    with FakeOpenAI() as first, FakeOpenAI() as second:
        assert judge_once(first, cache) is Label.SUPPORTED
        assert first.by_kind["judge"] == 1
        assert judge_once(first, cache) is Label.SUPPORTED  # same server: a hit, no call
        assert first.by_kind["judge"] == 1
        judge_once(second, cache)  # same model name, another endpoint: a miss, judged there
        assert second.by_kind["judge"] == 1
        assert first.by_kind["judge"] == 1


def test_the_endpoint_changes_the_key_and_no_endpoint_keeps_the_old_one() -> None:
    identity = JudgeIdentity(kind="openai", model="m", prompt_version="v")
    keys = {cache_key(CLAIM, "d", identity, endpoint=e) for e in ("http://a/v1/", "http://b/v1/")}
    assert len(keys) == 2
    assert cache_key(CLAIM, "d", identity) not in keys
