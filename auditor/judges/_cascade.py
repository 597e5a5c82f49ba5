"""The cascade: a cheap deterministic pass first, the LLM judge for whatever it cannot settle.

A claim the offline checks settle *with certainty* (by default :meth:`OfflineJudge.settle
<auditor.judges.OfflineJudge.settle>`: ``supported``, stated verbatim in an admitted item or with
every content word, figure and name in one window of it, with a quote that verifies) needs no
model call. Every other claim of the answer goes to the LLM judge in one call. Anything less than
certain goes to the LLM: a number missing from the evidence may still be "two weeks" for "14
days", and a changed figure is no certain contradiction (the rule is right 7 times in 10 on the dev
set). So an answer with one claim the offline checks cannot settle still costs its one call; what
the cascade saves there is the settled claims' share of the prompt.

:attr:`CascadeJudge.stats` counts, over the judge's life, the claims each stage settled and the
LLM calls made, and the answers that needed no call at all (each is one call saved against the
LLM judge alone, which makes one call per answer), for the run record and the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence
from auditor.judges._verdicts import ClaimVerdict, Configured, Judge, JudgeIdentity, Label, check_complete
from auditor.judges.verify import verify_quotes

Settle = Callable[[Claim, Sequence[Evidence]], ClaimVerdict | None]


@dataclass
class CascadeStats:
    answers: int = 0
    claims: int = 0
    settled_offline: int = 0
    settled_llm: int = 0
    llm_calls: int = 0  # one per answer with anything left for the LLM
    answers_without_call: int = 0  # every claim settled offline: the call the LLM judge alone makes, saved

    @property
    def calls_saved_per_answer(self) -> float | None:
        """LLM calls saved per answer against the LLM judge alone (one call per answer); None before any."""
        return self.answers_without_call / self.answers if self.answers else None


def _default_settle() -> Settle:
    from auditor.judges.offline import OfflineJudge

    return OfflineJudge().settle


class CascadeJudge:
    """Implements :class:`~auditor.judges.Judge`: ``settle`` first, then ``llm`` for the rest.

    Args:
        llm: the judge for unsettled claims (normally :class:`~auditor.judges.LLMJudge`); its
            identity is the cascade's, since the cascade must not change a verdict it would give.
        settle: ``settle(claim, admitted) -> ClaimVerdict | None``; None means "not certain". Default:
            :meth:`auditor.judges.OfflineJudge.settle`.
        trust: the labels accepted from ``settle``; any other label goes to the LLM.
    """

    def __init__(
        self,
        llm: Judge,
        settle: Settle | None = None,
        *,
        trust: frozenset[Label] = frozenset({Label.SUPPORTED}),
    ) -> None:
        self.llm = llm
        self.settle = settle or _default_settle()
        self.trust = trust
        self.identity: JudgeIdentity = llm.identity
        self.stats = CascadeStats()

    def cache_settings(self) -> dict[str, str]:
        """The LLM judge's settings, and the offline stage in front of it (which claims it may settle
        without a call changes what a verdict is): for the verdict cache's key."""
        inner = self.llm.cache_settings() if isinstance(self.llm, Configured) else {}
        stage = getattr(self.settle, "__qualname__", type(self.settle).__name__)
        return {**inner, "cascade": f"{stage}:{'+'.join(sorted(t.value for t in self.trust))}"}

    def certain(self, claim: Claim, admitted: Sequence[Evidence]) -> ClaimVerdict | None:
        """The verdict the cascade accepts for ``claim`` without a call, or None (it goes to the LLM)."""
        return self._settled(claim, admitted, {e.evidence_id: e for e in admitted})

    def _settled(
        self, claim: Claim, admitted: Sequence[Evidence], by_id: dict[str, Evidence]
    ) -> ClaimVerdict | None:
        verdict = self.settle(claim, admitted)
        if verdict is None or verdict.label not in self.trust:
            return None
        checked = verify_quotes(verdict, by_id, claim_text=claim.text)
        if checked.label != verdict.label or checked.judge_errors:
            return None  # a stage that is not sure of its own quote is not certain
        return checked.model_copy(update={"claim_id": claim.claim_id, "settled_by": "offline"})

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        by_id = {e.evidence_id: e for e in admitted}
        settled: list[ClaimVerdict] = []
        rest: list[Claim] = []
        for claim in claims:
            verdict = self._settled(claim, admitted, by_id)
            if verdict is None:
                rest.append(claim)
            else:
                settled.append(verdict)
        self.stats.answers += 1
        self.stats.claims += len(claims)
        self.stats.settled_offline += len(settled)
        if rest:
            self.stats.llm_calls += 1
            self.stats.settled_llm += len(rest)
            settled += await self.llm.judge(answer, rest, admitted, excluded, allow_common_knowledge)
        else:
            self.stats.answers_without_call += 1
        return check_complete(claims, settled, settled_by="llm")
