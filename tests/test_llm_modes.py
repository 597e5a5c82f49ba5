"""LLM decomposition, fused mode, the cascade and the verdict cache, against the local fake server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from auditor.claims import Claim, Decomposition, ScreenReason
from auditor.evidence import Answer, Evidence
from auditor.judges import (
    CachingJudge,
    CascadeJudge,
    ClaimVerdict,
    FusedAuditor,
    FusedResult,
    JsonlVerdictCache,
    Label,
    LLMDecomposer,
    LLMJudge,
    MemoryVerdictCache,
    UnjudgedReason,
    VerdictCache,
)
from auditor.judges.llm._decompose import locate
from auditor.llm import LLMClient
from tests.support.fake_openai import FakeOpenAI, fenced_blocks, make_answer, make_evidence


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(hang_seconds=5.0) as s:
        yield s


def client_for(server: FakeOpenAI, **kw: Any) -> LLMClient:
    return LLMClient(
        "gpt-4.1-mini",
        base_url=server.base_url,
        api_key="test",
        timeout=2.0,
        max_retries=1,
        backoff_base=0.01,
        **kw,
    )


# A small realistic set: support-agent answers over tool results, one with a user-message-only claim.
ORDER = make_evidence(
    "ev-order",
    '{"order_id": "10042", "status": "delivered", "carrier": "DHL", "delivered_on": "2026-03-09"}',
    name="get_order",
)
REFUND = make_evidence(
    "ev-refund",
    "Refund for order 10042: $80.00, issued on 2026-03-12 to the original card. "
    "Refunds take 5 business days to appear on a statement.",
    name="get_refund",
)
POLICY = make_evidence(
    "ev-policy",
    "Returns are accepted within 30 days of delivery. Items must be unused and "
    "in their original packaging. Return shipping is free for members.",
    kind="retrieved_document",
    name="search_docs",
)
USER = make_evidence(
    "ev-user", "I'm a member and I was told the refund would be $95.", kind="user_message", name=None
)

SET: list[tuple[str, str | None, tuple[Evidence, ...], tuple[Evidence, ...]]] = [
    (
        "Order 10042 was delivered by DHL on 2026-03-09. The refund of $80.00 was issued on 2026-03-12 to the "
        "original card. Refunds take 5 business days to appear on a statement. Let me know if I can help further.",
        "Where is my refund for order 10042?",
        (ORDER, REFUND),
        (USER,),
    ),
    (
        "Returns are accepted within 30 days of delivery. Items must be unused and in their original packaging. "
        "Return shipping is free for members. You are a member.",
        "Can I return my jacket?",
        (POLICY,),
        (USER,),
    ),
    (
        "The refund for order 10042 was $95.00. It was issued on 2026-03-12 to the original card.",
        "How much was refunded?",
        (REFUND,),
        (USER,),
    ),
    ("Refunds take 5 business days to appear on a statement.", "When will I see my refund?", (REFUND,), ()),
]


def answers() -> list[tuple[Answer, tuple[Evidence, ...], tuple[Evidence, ...]]]:
    return [
        (make_answer(text, [], adm + exc, answer_id=f"a{n}", question=q)[0], adm, exc)
        for n, (text, q, adm, exc) in enumerate(SET)
    ]


def check_offsets(answer: Answer, decomposition: Decomposition) -> None:
    spans = [(c.start, c.end) for c in decomposition.claims]
    assert spans == sorted(spans)
    for claim in decomposition.claims:
        assert answer.text[claim.start : claim.end] == claim.text


def test_locate_relocates_or_rejects() -> None:
    text = "Alpha beta. Gamma delta. Alpha beta."
    assert locate(text, "Gamma delta.", 12, 24) == (12, 24)
    assert locate(text, "Gamma delta.", 15, 27) == (12, 24)  # wrong offsets: found by search
    assert locate(text, "gamma   DELTA.", 0, 5) == (12, 24)  # case and whitespace forgiven
    assert locate(text, "Alpha beta.", 30, 41) == (25, 36)  # nearest occurrence to the given offset
    assert locate(text, "Alpha beta.", 0, 11, taken=[(0, 11)]) == (25, 36)  # never overlaps a placed claim
    assert locate(text, "Epsilon.", 0, 8) is None


def test_llm_decomposer_offsets_round_trip_and_screening(server: FakeOpenAI) -> None:
    async def go() -> list[Decomposition]:
        async with client_for(server) as client:
            return await LLMDecomposer(client).decompose([a for a, _, _ in answers()])

    out = asyncio.run(go())
    for (answer, _, _), decomposition in zip(answers(), out, strict=True):
        check_offsets(answer, decomposition)
        assert decomposition.extractor == "llm:gpt-4.1-mini"
    first = out[0]
    assert [c.claim_id for c in first.claims] == [f"a0:c{n}" for n in range(4)]
    assert first.claims[-1].screened and first.claims[-1].screen_reason == ScreenReason.OFFER_TO_HELP
    assert len(first.judgeable) == 3
    assert server.by_kind["decompose"] == 4


def test_llm_decomposer_relocates_bad_offsets_and_drops_invented_claims(server: FakeOpenAI) -> None:
    server.enqueue("bad_offsets")
    answer = answers()[1][0]

    async def go() -> tuple[list[Decomposition], dict[str, list[str]]]:
        async with client_for(server) as client:
            decomposer = LLMDecomposer(client)
            return await decomposer.decompose([answer]), decomposer.errors

    (decomposition,), errors = asyncio.run(go())
    check_offsets(answer, decomposition)
    assert len(decomposition.claims) == 4
    assert any("dropped: 'A claim the answer never made.'" in e for e in errors["a1"])
    assert sum("re-located" in e for e in errors["a1"]) == 4


def test_llm_decomposer_failure_keeps_whole_answer_and_refusal(server: FakeOpenAI) -> None:
    for _ in range(2):
        server.enqueue("malformed")
    failing = answers()[2][0]
    refusal = make_answer("I don't have that information.", [], answer_id="r1")[0]

    async def go() -> tuple[list[Decomposition], dict[str, list[str]]]:
        async with client_for(server) as client:
            decomposer = LLMDecomposer(client)
            one = await decomposer.decompose([failing])
            two = await decomposer.decompose([refusal])
            return one + two, {**decomposer.errors}

    (broken, refused), errors = asyncio.run(go())
    assert [c.text for c in broken.claims] == [failing.text]
    assert refused.refusal and refused.claims == ()
    assert "r1" in errors and errors["r1"] == []


def fused_run(server: FakeOpenAI, **kw: Any) -> tuple[list[FusedResult], LLMClient]:
    async def go() -> tuple[list[FusedResult], LLMClient]:
        async with client_for(server) as client:
            auditor = FusedAuditor(client, **kw)
            return [await auditor.audit(a, adm, exc) for a, adm, exc in answers()], client

    return asyncio.run(go())


def test_fused_mode_decomposes_and_judges_in_one_call(server: FakeOpenAI) -> None:
    results, _client = fused_run(server)
    assert server.requests == 4 and server.by_kind["fused"] == 4
    for (answer, _, _), result in zip(answers(), results, strict=True):
        check_offsets(answer, result.decomposition)
        assert [v.claim_id for v in result.verdicts] == [c.claim_id for c in result.decomposition.judgeable]
    assert [v.label for v in results[2].verdicts] == [Label.CONTRADICTED, Label.SUPPORTED]
    member = results[1].verdicts[-1]  # "You are a member." rests only on the user's own message
    assert member.label == Label.ABSENT and member.inadmissible_support == ("ev-user",)


def test_fused_mode_failure_is_unjudged(server: FakeOpenAI) -> None:
    server.enqueue("length")
    results, _ = fused_run(server)
    assert [v.unjudged_reason for v in results[0].verdicts] == [UnjudgedReason.TRUNCATED]
    assert results[0].decomposition.claims[0].text == answers()[0][0].text


def rule_claims(answer: Answer) -> list[Claim]:
    """Sentence claims (what a decomposer would give), computed without a server."""
    from tests.support.fake_openai import decompose_text

    return [
        Claim(
            claim_id=f"{answer.answer_id}:c{n}",
            answer_id=answer.answer_id,
            text=c["text"],
            start=c["start"],
            end=c["end"],
        )
        for n, c in enumerate(c for c in decompose_text(answer.text)["claims"] if not c["screened"])
    ]


async def judge_all(
    judge: Any, items: Sequence[tuple[Answer, tuple[Evidence, ...], tuple[Evidence, ...]]]
) -> list[list[ClaimVerdict]]:
    return [await judge.judge(a, rule_claims(a), adm, exc) for a, adm, exc in items]


@pytest.mark.parametrize("offline_judge", [False, True], ids=["lexical-llm", "offline-backed-llm"])
def test_cascade_settles_verbatim_claims_offline_and_agrees_with_the_llm(
    server: FakeOpenAI, offline_judge: bool
) -> None:
    server.offline_judge = offline_judge

    async def go() -> tuple[list[list[ClaimVerdict]], list[list[ClaimVerdict]], CascadeJudge, int]:
        async with client_for(server) as client:
            alone = await judge_all(LLMJudge(client), answers())
            llm_requests = server.requests
            cascade = CascadeJudge(LLMJudge(client))
            return alone, await judge_all(cascade, answers()), cascade, llm_requests

    alone, cascaded, cascade, llm_requests = asyncio.run(go())
    assert [[v.label for v in vs] for vs in cascaded] == [[v.label for v in vs] for vs in alone]
    offline = [v for vs in cascaded for v in vs if v.settled_by == "offline"]
    assert len(offline) >= 4 and all(v.label == Label.SUPPORTED and v.citations for v in offline)
    stats = cascade.stats
    assert stats.claims == 10 and stats.settled_offline == len(offline)
    assert stats.settled_offline + stats.settled_llm == stats.claims
    assert llm_requests == 4 and server.requests - llm_requests == stats.llm_calls == 3
    # every judge request of the cascade carried only the claims the offline stage left
    sent = sum(
        kind == "CLAIM"
        for body in server.bodies[4:]
        for kind, _, _ in fenced_blocks(body["messages"][1]["content"])
    )
    assert sent == stats.settled_llm


def test_cascade_makes_no_call_when_everything_is_verbatim(server: FakeOpenAI) -> None:
    answer, claims = make_answer(
        "Return shipping is free for members.", ["Return shipping is free for members."], (POLICY,)
    )

    async def go() -> list[ClaimVerdict]:
        async with client_for(server) as client:
            return await CascadeJudge(LLMJudge(client)).judge(answer, claims, [POLICY], [])

    (verdict,) = asyncio.run(go())
    assert verdict.label == Label.SUPPORTED and verdict.settled_by == "offline" and server.requests == 0


def test_cascade_accepts_any_settle_function_and_distrusts_bad_quotes(server: FakeOpenAI) -> None:
    answer, claims = make_answer(
        "Return shipping is free for members.", ["Return shipping is free for members."], (POLICY,)
    )
    from auditor.judges import Citation

    def liar(claim: Claim, admitted: Sequence[Evidence]) -> ClaimVerdict | None:
        return ClaimVerdict(
            claim_id=claim.claim_id,
            label=Label.SUPPORTED,
            citations=(Citation(evidence_id="ev-policy", quote="not in the text"),),
        )

    async def go() -> list[ClaimVerdict]:
        async with client_for(server) as client:
            return await CascadeJudge(LLMJudge(client), settle=liar).judge(answer, claims, [POLICY], [])

    (verdict,) = asyncio.run(go())
    assert verdict.settled_by == "llm" and server.requests == 1


def cached_run(
    server: FakeOpenAI, cache: VerdictCache, items: Any = None
) -> tuple[list[list[ClaimVerdict]], CachingJudge]:
    async def go() -> tuple[list[list[ClaimVerdict]], CachingJudge]:
        async with client_for(server) as client:
            judge = CachingJudge(LLMJudge(client), cache)
            return await judge_all(judge, items or answers()), judge

    return asyncio.run(go())


def test_cache_hit_makes_zero_requests(server: FakeOpenAI) -> None:
    cache = MemoryVerdictCache()
    first, _ = cached_run(server, cache)
    assert server.requests == 4
    second, judge = cached_run(server, cache)
    assert server.requests == 4  # the re-audit asked the server nothing
    assert judge.hits == 10 and judge.misses == 0
    assert all(v.settled_by == "cache" for vs in second for v in vs)
    assert [[v.label for v in vs] for vs in second] == [[v.label for v in vs] for vs in first]


def test_jsonl_cache_survives_a_restart_and_keys_on_evidence(server: FakeOpenAI, tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    cached_run(server, JsonlVerdictCache(path))
    assert server.requests == 4
    with path.open("a") as f:
        f.write("{damaged\n")
    reopened = JsonlVerdictCache(path)
    assert reopened.damaged_lines == 1 and len(reopened) == 10
    cached_run(server, reopened)
    assert server.requests == 4
    changed = [
        (a, (make_evidence("ev-refund", "Refund for order 10042: $95.00."),), exc)
        for a, adm, exc in answers()[2:3]
    ]
    cached_run(server, reopened, changed)
    assert server.requests == 5  # different evidence, different key


def test_failures_are_not_cached(server: FakeOpenAI) -> None:
    cache = MemoryVerdictCache()
    server.enqueue("length")
    first, _ = cached_run(server, cache, answers()[:1])
    assert all(v.unjudged_reason == UnjudgedReason.TRUNCATED for v in first[0])
    second, judge = cached_run(server, cache, answers()[:1])
    assert judge.hits == 0 and server.requests == 2
    assert all(v.label != Label.UNJUDGED for v in second[0])


# ---- measured cost per answer: separate (decompose + judge) vs fused vs cascade -------------------


def measure(server: FakeOpenAI) -> dict[str, dict[str, float]]:
    items = answers()

    async def separate(client: LLMClient, judge: Any) -> None:
        decompositions = await LLMDecomposer(client).decompose([a for a, _, _ in items])
        for (answer, adm, exc), d in zip(items, decompositions, strict=True):
            await judge.judge(answer, d.judgeable, adm, exc)

    async def fused(client: LLMClient) -> None:
        auditor = FusedAuditor(client)
        for answer, adm, exc in items:
            await auditor.audit(answer, adm, exc)

    async def run(mode: str) -> dict[str, float]:
        async with client_for(server) as client:
            if mode == "separate":
                await separate(client, LLMJudge(client))
            elif mode == "cascade":
                await separate(client, CascadeJudge(LLMJudge(client)))
            else:
                await fused(client)
            u, n = client.usage, len(items)
            return {
                "calls": u.calls / n,
                "prompt": u.prompt_tokens / n,
                "completion": u.completion_tokens / n,
                "total": u.total_tokens / n,
            }

    return {mode: asyncio.run(run(mode)) for mode in ("separate", "fused", "cascade")}


def test_measured_tokens_and_calls_per_answer(server: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    numbers = measure(server)
    with capsys.disabled():
        for mode, row in numbers.items():
            print(
                f"\n{mode:9s} calls/answer {row['calls']:.2f}  prompt {row['prompt']:.0f}  "
                f"completion {row['completion']:.0f}  total {row['total']:.0f} tokens/answer"
            )
    assert numbers["separate"]["calls"] == 2 and numbers["fused"]["calls"] == 1
    assert numbers["cascade"]["calls"] < numbers["separate"]["calls"]
    assert numbers["fused"]["total"] < numbers["separate"]["total"]
    assert numbers["cascade"]["total"] < numbers["separate"]["total"]
