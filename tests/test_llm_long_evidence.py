"""Evidence longer than the LLM judge's budget: ranked windows, never a blind clip, and a per-claim
record of what the judge was not shown (auditor/judges/llm/_excerpt.py), through the real ``openai``
client against tests/support/fake_openai.py."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence
from auditor.judges import ClaimVerdict, FusedAuditor, FusedResult, Label, LLMJudge
from auditor.judges.llm._excerpt import cut, fit_evidence
from auditor.llm import LLMClient
from auditor.run import audit
from tests.support.fake_openai import FakeOpenAI, fenced_blocks, make_answer, make_evidence

# 300 KB of stock-count log lines, the sentence that supports the claim last.
LINE = "Shelf {:05d} in the Hamburg depot was counted on schedule.\n"
FACT = "The Leipzig warehouse holds 14 units of the blue kettle."
LOG = "".join(LINE.format(i) for i in range(5_200)) + FACT
AT_END = "The Leipzig warehouse holds 14 units of the blue kettle."
SHARED = "The Hamburg depot was counted on schedule."
HIDDEN_MATCH = "The Hamburg depot holds 99 crates of tea."
UNRELATED = "Paris has a tram network."
GAP = re.compile(r"\n\[\.\.\. (\d+) characters not shown \.\.\.\]\n")


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(hang_seconds=5.0) as s:
        yield s


def judge(
    server: FakeOpenAI, claims: list[str], admitted: tuple[Evidence, ...], **judge_args: Any
) -> tuple[list[ClaimVerdict], list[Claim]]:
    text = " ".join(claims)
    answer, cs = make_answer(text, claims, admitted)

    async def go() -> list[ClaimVerdict]:
        async with LLMClient("gpt-4.1-mini", base_url=server.base_url, api_key="test", timeout=5.0) as client:
            return await LLMJudge(client, **judge_args).judge(answer, cs, admitted, ())

    return asyncio.run(go()), cs


def evidence_text(server: FakeOpenAI, evidence_id: str) -> str:
    prompt = server.bodies[-1]["messages"][1]["content"]
    return next(t for k, a, t in fenced_blocks(prompt) if k == "EVIDENCE" and a["id"] == evidence_id)


def shown_spans(total: int, left_out: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """The complement of ``left_out`` in ``[0, total)``."""
    spans, pos = [], 0
    for s, e in left_out:
        if s > pos:
            spans.append((pos, s))
        pos = e
    if pos < total:
        spans.append((pos, total))
    return spans


def test_len_of_the_log_is_300_kb_and_the_fact_is_past_any_blind_clip() -> None:
    assert len(LOG) > 300_000 and LOG.index(FACT) > 299_000 and LOG.endswith(FACT)


def test_a_supporting_sentence_at_the_end_of_300_kb_reaches_the_prompt(server: FakeOpenAI) -> None:
    big = make_evidence("ev-log", LOG, name="stock_report")
    verdicts, _ = judge(server, [AT_END, SHARED], (big,))
    shown = evidence_text(server, "ev-log")
    assert FACT in shown
    assert len(GAP.sub("", shown)) <= 60_000  # the default budget, in evidence characters
    assert [v.label for v in verdicts] == [Label.SUPPORTED, Label.SUPPORTED]
    assert verdicts[0].citations[0].evidence_id == "ev-log" and FACT in verdicts[0].citations[0].quote

    # The record of what was not shown is exactly the complement of what the prompt holds.
    (left,) = verdicts[0].left_out
    assert left.evidence_id == "ev-log" and left.total == len(LOG)
    pieces = [LOG[s:e] for s, e in shown_spans(len(LOG), left.ranges)]
    gaps = [int(n) for n in GAP.findall(shown)]
    assert [t for t in GAP.split(shown)[::2] if t] == pieces
    assert sum(gaps) == left.chars == sum(e - s for s, e in left.ranges) == len(LOG) - sum(map(len, pieces))
    fact_at = LOG.index(FACT)
    assert not any(s < fact_at + len(FACT) and fact_at < e for s, e in left.ranges)
    # The claim about Leipzig shares no word with the hidden Hamburg lines; the Hamburg claim does.
    assert left.shares_words is False and verdicts[1].left_out[0].shares_words is True
    assert any(
        e.startswith("evidence not shown to the judge: ev-log characters ")
        and f"({left.chars:,} of {len(LOG):,})" in e
        and e.endswith("none of it shares a word with the claim")
        for e in verdicts[0].judge_errors
    )
    # docs/llm-judge.md shows this very note: it must be what the code prints.
    documented = (Path(__file__).parents[1] / "docs" / "llm-judge.md").read_text(encoding="utf-8")
    note = next(e for e in verdicts[0].judge_errors if e.startswith("evidence not shown"))
    assert f"\n{note}\n" in documented


def test_absent_stands_only_when_nothing_hidden_shares_the_claims_words(server: FakeOpenAI) -> None:
    big = make_evidence("ev-log", LOG, name="stock_report")
    verdicts, _ = judge(server, [HIDDEN_MATCH, UNRELATED], (big,))
    # Hidden lines mention the Hamburg depot: the judge might have missed the crates of tea.
    assert verdicts[0].label == Label.UNJUDGED and verdicts[0].unjudged_reason == "evidence_clipped"
    assert verdicts[0].left_out[0].shares_words
    # Nothing hidden mentions Paris or trams: absent is what the judge could see, and it says so.
    assert verdicts[1].label == Label.ABSENT and verdicts[1].left_out[0].shares_words is False


def test_evidence_within_the_budget_is_shown_whole_with_no_record(server: FakeOpenAI) -> None:
    small = make_evidence("ev-small", LOG[-3_000:], name="stock_report")
    verdicts, _ = judge(server, [AT_END], (small,))
    assert evidence_text(server, "ev-small") == LOG[-3_000:]
    assert verdicts[0].label == Label.SUPPORTED and verdicts[0].left_out == ()
    assert not any("not shown" in e for e in verdicts[0].judge_errors)


def test_each_claim_gets_its_best_window_before_any_gets_a_second(server: FakeOpenAI) -> None:
    # Many windows mention the depot, one mentions Leipzig: a budget of two windows holds both claims' best.
    big = make_evidence("ev-log", LOG, name="stock_report")
    verdicts, _ = judge(server, [SHARED, AT_END], (big,), max_evidence_chars=200)
    shown = evidence_text(server, "ev-log")
    assert FACT in shown and "Hamburg depot was counted on schedule." in shown
    assert [v.label for v in verdicts] == [Label.SUPPORTED, Label.SUPPORTED]


def test_windows_cover_the_text_and_end_at_natural_breaks() -> None:
    spans = cut(LOG, 800)
    assert spans[0][0] == 0 and spans[-1][1] == len(LOG)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert all(e - s <= 800 for s, e in spans)
    assert all(LOG[e - 1] == "\n" for _, e in spans[:-1])  # every cut on a line break here


def test_a_json_record_at_the_end_of_3_mb_is_shown_whole() -> None:
    records = [{"sku": f"A-{i:05d}", "warehouse": "Hamburg", "stock": i % 50} for i in range(40_000)]
    last = {"sku": "K-77", "name": "blue kettle", "warehouse": "Leipzig", "stock": 14}
    text = json.dumps([*records, last])
    fitted = fit_evidence(
        (make_evidence("ev-json", text),), (), 60_000, ["The Leipzig warehouse has 14 blue kettles."]
    )
    assert json.dumps(last) in fitted.admitted[0].text  # from its opening brace to its closing one
    (left,) = fitted.left_out_for("The Leipzig warehouse has 14 blue kettles.")
    assert left.total == len(text) and left.shares_words  # other records name a warehouse too


def test_excluded_items_are_fitted_after_admitted_ones() -> None:
    admitted = (make_evidence("ev-a", LOG),)
    excluded = (make_evidence("ev-x", "The Leipzig warehouse is closed.", kind="user_message", name=None),)
    fitted = fit_evidence(admitted, excluded, 10_000, [AT_END])
    assert FACT in fitted.admitted[0].text and fitted.admitted[0].clipped
    assert fitted.excluded[0].text == "" or fitted.excluded[0].clipped  # nothing left for excluded
    assert "ev-a" in fitted.clipped


def test_fused_mode_ranks_windows_by_the_answers_sentences(server: FakeOpenAI) -> None:
    big = make_evidence("ev-log", LOG, name="stock_report")
    answer: Answer = make_answer(AT_END, [AT_END], (big,))[0]

    async def go() -> FusedResult:
        async with LLMClient("gpt-4.1-mini", base_url=server.base_url, api_key="test", timeout=5.0) as client:
            return await FusedAuditor(client).audit(answer, (big,), ())

    result = asyncio.run(go())
    assert FACT in evidence_text(server, "ev-log")
    (verdict,) = result.verdicts
    assert verdict.label == Label.SUPPORTED and verdict.left_out[0].evidence_id == "ev-log"
    assert verdict.left_out[0].shares_words is False


def test_the_whole_audit_carries_the_record_to_the_result(tmp_path: Path) -> None:
    """A records file whose one context is the 300 KB log: the audit result's claim is supported
    and its judge note names what the judge did not see."""
    records = tmp_path / "records.jsonl"
    row = {"question": "How many blue kettles are in Leipzig?", "contexts": [LOG], "answer": AT_END}
    records.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with FakeOpenAI() as server:
        result = audit(
            [records],
            judge="openai:fake-judge",
            base_url=server.base_url,
            decomposer="rules",
            cascade=False,
            db_url=f"sqlite:///{tmp_path / 'runs.db'}",
        )
        assert FACT in server.bodies[-1]["messages"][1]["content"]
    (answer,) = result.answers
    (claim,) = answer.claims or []
    assert claim.verdict == "supported"
    notes = [e for e in claim.judge_errors if e.startswith("evidence not shown to the judge: ")]
    (note,) = [e for e in notes if f"of {len(LOG):,})" in e]  # the log; the question (excluded) had no room
    assert note.endswith("none of it shares a word with the claim")
