"""The pipeline splits answers a batch at a time, one batch ahead of the judging, not all first,
when the extractor is local; an extractor that makes calls gets every answer at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from auditor.claims import Claim, Decomposition, RuleExtractor
from auditor.evidence import Answer, Evidence
from auditor.judges import ClaimVerdict, OfflineJudge
from auditor.pipeline import audit_all, find_answers
from auditor.policy import load_policy
from tests.conftest import FIXTURES

INPUTS = sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))


class Recorder:
    """Logs, in order, each batch the extractor is asked to split and each answer the judge judges."""

    def __init__(self) -> None:
        self.events: list[tuple[str, tuple[str, ...]]] = []


class RecordingExtractor:
    name = "rules"

    def __init__(self, log: Recorder, local: bool = True) -> None:
        self.inner = RuleExtractor()
        self.log = log
        self.local = local

    async def decompose(self, answers: Sequence[Answer]) -> list[Decomposition]:
        self.log.events.append(("split", tuple(a.answer_id for a in answers)))
        return await self.inner.decompose(answers)


class RecordingJudge:
    def __init__(self, log: Recorder) -> None:
        self.inner = OfflineJudge()
        self.identity = self.inner.identity
        self.log = log

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        self.log.events.append(("judge", (answer.answer_id,)))
        await asyncio.sleep(0)  # a request in flight
        return await self.inner.judge(answer, claims, admitted, excluded, allow_common_knowledge)


def test_answers_are_split_a_batch_ahead_and_judged_as_when_split_all_at_once() -> None:
    policy = load_policy()
    _, answers = find_answers(INPUTS, None, policy, None)
    assert len(answers) >= 5
    log = Recorder()
    audits = asyncio.run(
        audit_all(answers, policy, RecordingExtractor(log), RecordingJudge(log), concurrency=2)
    )

    splits = [ids for kind, ids in log.events if kind == "split"]
    ids = [a.answer_id for a in answers]
    assert splits == [tuple(ids[i : i + 2]) for i in range(0, len(ids), 2)]  # every answer once, in batches
    first_judged = next(i for i, (kind, _) in enumerate(log.events) if kind == "judge")
    last_split = max(i for i, (kind, _) in enumerate(log.events) if kind == "split")
    assert first_judged < last_split  # judging began before the last answers were split

    together = asyncio.run(
        audit_all(answers, policy, RuleExtractor(), OfflineJudge(), concurrency=len(answers))
    )
    assert [a.answer.answer_id for a in audits] == ids
    assert [[(v.claim_id, v.label) for v in a.verdicts] for a in audits] == [
        [(v.claim_id, v.label) for v in a.verdicts] for a in together
    ]


def test_an_extractor_that_makes_calls_is_given_every_answer_at_once() -> None:
    policy = load_policy()
    _, answers = find_answers(INPUTS, None, policy, None)
    log = Recorder()
    asyncio.run(
        audit_all(answers, policy, RecordingExtractor(log, local=False), RecordingJudge(log), concurrency=2)
    )
    assert [ids for kind, ids in log.events if kind == "split"] == [tuple(a.answer_id for a in answers)]
    assert log.events[0][0] == "split"  # its requests fill the concurrency before any judging


def test_a_job_cancelled_while_its_batch_is_split_leaves_the_batch_to_the_others() -> None:
    from auditor.pipeline import _DecomposedAhead

    policy = load_policy()
    _, answers = find_answers(INPUTS, None, policy, None)

    class SlowExtractor(RuleExtractor):
        async def decompose(self, batch: Sequence[Answer]) -> list[Decomposition]:
            await asyncio.sleep(0.01)
            return await super().decompose(batch)

    async def go() -> list[str]:
        ahead = _DecomposedAhead(SlowExtractor(), answers, 2)
        slots = asyncio.Semaphore(2)
        first = asyncio.ensure_future(ahead.audit(0, policy, OfflineJudge(), slots))
        second = asyncio.ensure_future(ahead.audit(1, policy, OfflineJudge(), slots))
        await asyncio.sleep(0)
        first.cancel()
        return [(await second).answer.answer_id]

    assert asyncio.run(go()) == [answers[1].answer_id]


def test_an_answer_hands_its_slot_on_before_it_concludes(monkeypatch: pytest.MonkeyPatch) -> None:
    import auditor.pipeline as pipeline

    policy = load_policy()
    _, answers = find_answers(INPUTS, None, policy, None)
    log = Recorder()
    conclude = pipeline._conclude

    def logged(answer: Answer, *args: Any) -> Any:
        log.events.append(("conclude", (answer.answer_id,)))
        return conclude(answer, *args)

    monkeypatch.setattr(pipeline, "_conclude", logged)
    first, second = answers[0].answer_id, answers[1].answer_id
    asyncio.run(audit_all(answers[:2], policy, RuleExtractor(), RecordingJudge(log), concurrency=1))
    order = [event for event in log.events if event[0] in ("judge", "conclude")]
    # one slot: the second answer's request goes out before the first answer concludes
    assert order == [
        ("judge", (first,)),
        ("judge", (second,)),
        ("conclude", (first,)),
        ("conclude", (second,)),
    ]
