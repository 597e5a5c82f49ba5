"""The decomposition and fused caches: a re-run on the same answers makes no calls, through the real client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from auditor.claims import Decomposition
from auditor.evidence import Answer, Evidence
from auditor.judges import (
    CachingFused,
    ClaimVerdict,
    DecompositionCache,
    FusedAuditor,
    FusedCache,
    FusedResult,
    JudgeIdentity,
    Label,
    LLMDecomposer,
    UnjudgedReason,
    call_failed,
)
from auditor.judges.cache._cache import CachingExtractor, decomposition_key, fused_key, rebase
from auditor.judges.cache._cache_files import (
    JsonlDecompositionCache,
    JsonlFusedCache,
    MemoryDecompositionCache,
    MemoryFusedCache,
)
from auditor.judges.llm._parse import unjudged
from auditor.llm import LLMClient
from tests.support.fake_openai import FakeOpenAI, make_answer
from tests.test_llm_modes import POLICY, REFUND, answers, check_offsets, client_for


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(hang_seconds=5.0) as s:
        yield s


def decompose(
    server: FakeOpenAI,
    cache: DecompositionCache,
    items: Sequence[Answer] | None = None,
    model: str = "gpt-4.1-mini",
) -> tuple[list[Decomposition], CachingExtractor]:
    async def go() -> tuple[list[Decomposition], CachingExtractor]:
        async with LLMClient(
            model, base_url=server.base_url, api_key="test", timeout=2.0, max_retries=1, backoff_base=0.01
        ) as client:
            extractor = CachingExtractor(LLMDecomposer(client), cache)
            return await extractor.decompose(
                items if items is not None else [a for a, _, _ in answers()]
            ), extractor

    return asyncio.run(go())


def test_cached_decompositions_make_zero_requests(server: FakeOpenAI) -> None:
    cache = MemoryDecompositionCache()
    first, _ = decompose(server, cache)
    assert server.requests == 4 and len(cache) == 4
    second, extractor = decompose(server, cache)
    assert server.requests == 4  # the second run asked the server nothing
    assert (extractor.hits, extractor.misses) == (4, 0)
    assert second == first
    assert extractor.name == "llm:gpt-4.1-mini"


def test_decomposition_key_is_text_question_and_extractor(server: FakeOpenAI) -> None:
    cache = MemoryDecompositionCache()
    answer = answers()[0][0]
    decompose(server, cache, [answer])
    other_question = answer.model_copy(update={"question": "Anything else?"})
    decompose(server, cache, [other_question])
    assert server.requests == 2
    decompose(server, cache, [answer], model="gpt-4.1")
    assert server.requests == 3  # another model, another key
    identity = JudgeIdentity(kind="openai", model="m", prompt_version="p1")
    assert decomposition_key(answer, identity) != decomposition_key(
        answer, identity.model_copy(update={"prompt_version": "p2"})
    )


def test_same_text_in_another_answer_is_one_call_with_its_own_ids(server: FakeOpenAI) -> None:
    text, question = answers()[1][0].text, answers()[1][0].question
    one = make_answer(text, [], answer_id="x1", question=question)[0]
    two = make_answer(text, [], answer_id="y2", question=question)[0]
    (d1, d2), _ = decompose(server, MemoryDecompositionCache(), [one, two])
    assert server.requests == 1
    assert d2.answer_id == "y2" and [c.claim_id for c in d2.claims] == [
        f"y2:c{n}" for n in range(len(d1.claims))
    ]
    assert all(c.answer_id == "y2" for c in d2.claims)
    check_offsets(two, d2)
    assert [c.text for c in d2.claims] == [c.text for c in d1.claims]


def test_a_failed_decomposition_is_not_cached(server: FakeOpenAI) -> None:
    cache = MemoryDecompositionCache()
    answer = answers()[2][0]
    server.enqueue("length")
    (failed,), _ = decompose(server, cache, [answer])
    assert call_failed(failed) and [c.text for c in failed.claims] == [answer.text]
    assert len(cache) == 0
    (fixed,), extractor = decompose(server, cache, [answer])
    assert (
        server.requests == 2 and extractor.misses == 1 and not call_failed(fixed) and len(fixed.claims) == 2
    )
    decompose(server, cache, [answer])
    assert server.requests == 2


def test_relocated_claims_are_cached_but_failures_recognised_only_by_their_own_error() -> None:
    ok = Decomposition(
        answer_id="a",
        claims=(),
        errors=("claim re-located from 0-3 to 4-7: 'whole answer kept as one claim'",),
    )
    assert not call_failed(ok)


def test_jsonl_decomposition_cache_survives_a_restart(server: FakeOpenAI, tmp_path: Path) -> None:
    path = tmp_path / "decompositions.jsonl"
    first, _ = decompose(server, JsonlDecompositionCache(path))
    with path.open("a") as f:
        f.write("{damaged\n")
    reopened = JsonlDecompositionCache(path)
    assert reopened.damaged_lines == 1 and len(reopened) == 4
    second, _ = decompose(server, reopened)
    assert server.requests == 4 and second == first


def fused(
    server: FakeOpenAI, cache: FusedCache, items: Any = None, allow_common_knowledge: bool = False
) -> tuple[list[FusedResult], CachingFused]:
    async def go() -> tuple[list[FusedResult], CachingFused]:
        async with client_for(server) as client:
            auditor = CachingFused(FusedAuditor(client), cache)
            return [
                await auditor.audit(a, adm, exc, allow_common_knowledge)
                for a, adm, exc in (items or answers())
            ], auditor

    return asyncio.run(go())


def test_cached_fused_results_make_zero_requests(server: FakeOpenAI) -> None:
    cache = MemoryFusedCache()
    first, _ = fused(server, cache)
    assert server.requests == 4 and len(cache) == 4
    second, auditor = fused(server, cache)
    assert server.requests == 4 and (auditor.hits, auditor.misses) == (4, 0)
    assert [r.decomposition for r in second] == [r.decomposition for r in first]
    assert [[v.model_copy(update={"settled_by": None}) for v in r.verdicts] for r in second] == [
        [v.model_copy(update={"settled_by": None}) for v in r.verdicts] for r in first
    ]
    assert {v.settled_by for r in second for v in r.verdicts} == {"cache"}


def test_fused_key_is_answer_evidence_identity_and_common_knowledge(server: FakeOpenAI) -> None:
    cache = MemoryFusedCache()
    item = answers()[2:3]
    fused(server, cache, item)
    fused(server, cache, item, allow_common_knowledge=True)
    assert server.requests == 2
    answer, _adm, exc = item[0]
    fused(server, cache, [(answer, (REFUND, POLICY), exc)])
    assert server.requests == 3  # more evidence, another key
    moved = answer.model_copy(update={"answer_id": "b7"})
    (result,), _ = fused(server, cache, [(moved, *item[0][1:])])
    assert server.requests == 3  # same text, question and evidence: a hit, under the new answer's ids
    assert [v.claim_id for v in result.verdicts] == [c.claim_id for c in result.decomposition.judgeable]
    assert all(c.claim_id.startswith("b7:") for c in result.decomposition.claims)
    identity = JudgeIdentity(kind="openai", model="m", prompt_version="p")
    assert fused_key(answer, "d", identity) != fused_key(
        answer, "d", identity.model_copy(update={"model": "n"})
    )


def test_fused_failures_and_unjudged_verdicts_are_not_cached(server: FakeOpenAI) -> None:
    cache = MemoryFusedCache()
    item = answers()[2:3]
    server.enqueue("length")
    (failed,), _ = fused(server, cache, item)
    assert failed.failed and [v.unjudged_reason for v in failed.verdicts] == [UnjudgedReason.TRUNCATED]
    assert len(cache) == 0
    (ok,), auditor = fused(server, cache, item)
    assert not ok.failed and auditor.misses == 1 and len(cache) == 1 and server.requests == 2


class HalfJudged:
    """A fused auditor whose second verdict is ``unjudged: missing`` (the call itself succeeded)."""

    identity = JudgeIdentity(kind="openai", model="stub", prompt_version="p")

    def __init__(self) -> None:
        self.calls = 0

    async def audit(
        self,
        answer: Answer,
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> FusedResult:
        self.calls += 1
        claims = tuple(
            make_answer(
                answer.text,
                [s + "." for s in answer.text.rstrip(".").split(". ")],
                answer_id=answer.answer_id,
            )[1]
        )
        verdicts = [
            ClaimVerdict(claim_id=claims[0].claim_id, label=Label.SUPPORTED, settled_by="llm"),
            unjudged(claims[1].claim_id, UnjudgedReason.MISSING, "no label for an unscreened claim"),
        ]
        return FusedResult(Decomposition(answer_id=answer.answer_id, claims=claims), verdicts)


def test_a_fused_result_with_an_unjudged_verdict_is_not_cached() -> None:
    inner, cache = HalfJudged(), MemoryFusedCache()
    answer, adm, exc = answers()[2]
    wrapped = CachingFused(inner, cache)
    for _ in range(2):
        result = asyncio.run(wrapped.audit(answer, adm, exc))
        assert [v.label.value for v in result.verdicts] == ["supported", "unjudged"]
    assert inner.calls == 2 and len(cache) == 0


def test_jsonl_fused_cache_survives_a_restart(server: FakeOpenAI, tmp_path: Path) -> None:
    path = tmp_path / "fused.jsonl"
    first, _ = fused(server, JsonlFusedCache(path))
    reopened = JsonlFusedCache(path)
    assert reopened.damaged_lines == 0 and len(reopened) == 4
    second, _ = fused(server, reopened)
    assert server.requests == 4 and [r.decomposition for r in second] == [r.decomposition for r in first]


def test_rebase_keeps_an_answer_at_home() -> None:
    answer = answers()[3][0]
    d = Decomposition(answer_id=answer.answer_id, claims=())
    assert rebase(d, answer.answer_id) == (d, {})
