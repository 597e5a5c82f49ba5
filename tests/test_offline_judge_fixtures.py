"""The offline judge end to end on the ingest fixtures under ``policies/strict.toml``.

The three incident lines the design asks for: a fabricated figure is ``absent``, a changed figure
is ``contradicted``, and a claim resting on the user's own message is ``absent`` with that message
listed as inadmissible support.
"""

from __future__ import annotations

import asyncio

import pytest

from auditor.claims import RuleExtractor
from auditor.evidence import EvidenceKind
from auditor.judges import OfflineJudge
from auditor.pipeline import audit_paths
from auditor.policy import load_policy
from auditor.results import AnswerOut, ClaimOut
from tests.conftest import FIXTURES


def judged(scenario: str) -> tuple[AnswerOut, list[ClaimOut]]:
    result, _ = asyncio.run(
        audit_paths(
            [FIXTURES / scenario / "openinference.otlp.jsonl"],
            load_policy("strict"),
            RuleExtractor(),
            OfflineJudge(),
        )
    )
    [answer] = result.answers[-1:]
    assert result.run.judge is not None and result.run.judge.kind == "offline"
    return answer, [c for c in answer.claims if not c.screened]


def test_changed_figure_is_contradicted() -> None:
    _, [claim] = judged("changed_figure")
    assert claim.verdict == "contradicted"
    assert [c.quote for c in claim.citations] == ['"amount": "$80.00"']
    assert claim.settled_by == "offline"


def test_fabricated_figure_is_absent() -> None:
    _, [claim] = judged("fabricated_figure")
    assert claim.verdict == "absent"
    assert claim.rationale == "15.00 found nowhere in admitted evidence"


def test_claim_resting_on_the_users_message_names_it() -> None:
    answer, [claim] = judged("user_message_support")
    assert claim.verdict == "absent"
    kinds = {e.evidence_id: e.kind for e in answer.evidence}
    assert claim.inadmissible_support
    assert {kinds[i] for i in claim.inadmissible_support} == {EvidenceKind.USER_MESSAGE.value}


@pytest.mark.parametrize("scenario", ["combined_documents", "multi_hop", "single_retrieval", "rag_chain"])
def test_grounded_answers_are_supported_with_verified_quotes(scenario: str) -> None:
    answer, claims = judged(scenario)
    assert claims and all(c.verdict == "supported" for c in claims)
    texts = {e.evidence_id: e.text.casefold() for e in answer.evidence if e.admitted}
    for claim in claims:
        assert claim.citations and all(c.quote.casefold() in texts[c.evidence_id] for c in claim.citations)
    if scenario == "combined_documents":
        assert len({c.evidence_id for c in claims[0].citations}) == 2
