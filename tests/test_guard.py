"""The LangChain guard on a real LangGraph agent loop (scripted chat model, real tools and retriever).

The reference for every live audit is the same run exported by a LangSmith-style run collector
(``tests/support/gen_traces.py``) and audited from the file with ``auditor.audit``: the two must
agree on everything but the timestamps each tracer takes for itself. Against the guard's own
export of the run they agree exactly.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from auditor_langchain import GroundednessGuard, UngroundedAnswerError, guarded
from langchain_core.messages import HumanMessage

from auditor.policy import load_policy
from auditor.results import AnswerOut
from auditor.run import audit
from tests.support import gen_traces, live_agent
from tests.support.gen_traces import Call

TIMES = {"generated_at": True, "evidence": {"__all__": {"available_at"}}}


def exported(collector: Any, tmp_path: Path, name: str = "runs.json") -> list[AnswerOut]:
    path = tmp_path / name
    path.write_text(json.dumps(collector.dump()), encoding="utf-8")
    return audit([path]).answers


def without_times(answers: list[AnswerOut]) -> list[dict[str, Any]]:
    return [a.model_dump(mode="json", exclude=TIMES) for a in answers]  # type: ignore[arg-type]


def capture_runs(guard: GroundednessGuard) -> list[list[dict[str, Any]]]:
    """The runs the guard audited, as it exported them."""
    seen: list[list[dict[str, Any]]] = []
    inner = guard._on_trace

    def keep(root: Any, runs: list[dict[str, Any]]) -> None:
        seen.append(runs)
        inner(root, runs)

    guard._on_trace = keep  # type: ignore[method-assign]
    return seen


SCENARIOS = [
    "single_retrieval",
    "multi_hop",
    "parallel_tools",
    "changed_figure",
    "fabricated_figure",
    "refusal",
    "document_metadata",
]


@pytest.mark.parametrize("name", SCENARIOS)
def test_live_audit_equals_exported_audit(name: str, tmp_path: Path) -> None:
    agent, sc = live_agent.scenario_agent(name)
    guard = GroundednessGuard(policy="strict")
    collector = gen_traces._make_run_collector()
    own = capture_runs(guard)
    out = agent.invoke(live_agent.question(sc), live_agent.config(sc, guard, collector))
    assert out["messages"][-1].content == sc.turns[0].answer
    assert guard.last_audit is not None and guard.audits == [guard.last_audit]
    assert guard.last_audit.claims is not None
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(collector.dump()), encoding="utf-8")
    assert without_times(audit([path], policy=load_policy("strict")).answers) == without_times(guard.audits)
    # Exactly equal, timestamps included, to the audit of the guard's own export of the run.
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(own[0]), encoding="utf-8")
    assert audit([mine], policy=load_policy("strict")).answers == guard.audits


def test_expected_verdicts_reach_the_caller() -> None:
    agent, sc = live_agent.scenario_agent("changed_figure")
    guard = GroundednessGuard()
    agent.invoke(live_agent.question(sc), live_agent.config(sc, guard))
    audit_ = guard.last_audit
    assert audit_ is not None and audit_.grounded is False
    claim = next(c for c in audit_.claims or [] if c.verdict == "contradicted")
    assert "$95.00" in claim.text
    assert claim.citations and "$80.00" in claim.citations[0].quote  # the evidence that contradicts it
    assert any(e.name == "get_refund" and e.admitted for e in audit_.evidence)


def test_second_turn_sees_the_first_turns_evidence(tmp_path: Path) -> None:
    agent, sc = live_agent.scenario_agent("multi_turn")
    guard = GroundednessGuard()
    collector = gen_traces._make_run_collector()
    cfg = live_agent.config(sc, guard, collector)
    first = agent.invoke(live_agent.question(sc, 0), cfg)
    agent.invoke({"messages": [*first["messages"], HumanMessage(sc.turns[1].question)]}, cfg)
    assert len(guard.audits) == 2
    assert guard.audits[1].grounded is True  # "order 10042" rests on turn 1's search_orders result
    assert without_times(exported(collector, tmp_path)) == without_times(guard.audits)


def test_flag_logs_and_serves(caplog: pytest.LogCaptureFixture) -> None:
    agent, sc = live_agent.scenario_agent("fabricated_figure")
    guard = GroundednessGuard(on_ungrounded="flag")
    with caplog.at_level(logging.WARNING, logger="auditor_langchain.guard"):
        out = agent.invoke(live_agent.question(sc), live_agent.config(sc, guard))
    assert out["messages"][-1].content == sc.turns[0].answer  # served unchanged
    assert guard.last_audit is not None and guard.last_audit.grounded is False
    assert "ungrounded answer" in caplog.text and "$15.00 shipping fee" in caplog.text


def test_raise_carries_the_audit() -> None:
    agent, sc = live_agent.scenario_agent("changed_figure")
    guard = GroundednessGuard(on_ungrounded="raise")
    with pytest.raises(UngroundedAnswerError) as caught:
        agent.invoke(live_agent.question(sc), live_agent.config(sc, guard))
    assert caught.value.audit is not None and caught.value.audit.contradicted == 1
    assert caught.value.audit == guard.last_audit
    # A grounded answer does not raise.
    agent, sc = live_agent.scenario_agent("multi_hop")
    out = agent.invoke(live_agent.question(sc), live_agent.config(sc, guard))
    assert guard.last_audit is not None and guard.last_audit.grounded is True
    assert out["messages"][-1].content == sc.turns[0].answer


MIXED = [
    [Call("get_refund", {"order_id": "10042"}, "call_mx_1")],
    "Order 10042 was refunded $95.00. The refund was approved on 2026-03-12. It was issued for a damaged lid.",
]
MIXED_Q = {"messages": [HumanMessage("Tell me about the refund on order 10042.")]}


def test_strip_removes_unsupported_sentences_and_says_so() -> None:
    guard = GroundednessGuard()
    safe = guarded(live_agent.build_agent(MIXED), guard, on_ungrounded="strip")
    out = safe.invoke(MIXED_Q)
    text = out["messages"][-1].content
    assert "$95.00" not in text  # the contradicted claim is never served
    assert "The refund was approved on 2026-03-12." in text
    assert "It was issued for a damaged lid." in text
    assert "I removed 1 statement(s)" in text
    assert guard.last_audit is not None and guard.last_audit.contradicted == 1


def test_strip_refuses_when_nothing_supported_remains() -> None:
    agent, sc = live_agent.scenario_agent("changed_figure")
    safe = guarded(agent, GroundednessGuard(), on_ungrounded="strip", refusal="No reliable answer.")
    assert safe.invoke(live_agent.question(sc))["messages"][-1].content == "No reliable answer."


def test_refuse_and_fallback() -> None:
    agent, sc = live_agent.scenario_agent("fabricated_figure")
    safe = guarded(agent, GroundednessGuard(), on_ungrounded="refuse", refusal="Let me get a human.")
    assert safe.invoke(live_agent.question(sc))["messages"][-1].content == "Let me get a human."

    calls: list[tuple[Any, AnswerOut | None]] = []

    def fallback(question: Any, audit_: AnswerOut | None) -> str:
        calls.append((question, audit_))
        return "escalated"

    agent, sc = live_agent.scenario_agent("fabricated_figure")
    safe = guarded(agent, GroundednessGuard(), on_ungrounded="fallback", fallback=fallback)
    served = safe.invoke(live_agent.question(sc))
    # the chain's own shape: a state dict whose last message now says what the fallback returned
    assert served["messages"][-1].content == "escalated"
    assert served["messages"][0].content == sc.turns[0].question
    assert calls[0][0]["messages"][0].content == sc.turns[0].question
    assert calls[0][1] is not None and calls[0][1].grounded is False

    # a fallback that returns something other than text is served as it is
    agent, sc = live_agent.scenario_agent("fabricated_figure")
    safe = guarded(
        agent, GroundednessGuard(), on_ungrounded="fallback", fallback=lambda q, a: {"handoff": True}
    )
    assert safe.invoke(live_agent.question(sc)) == {"handoff": True}


def test_grounded_answers_and_refusals_pass_through_the_wrapper() -> None:
    for name in ("multi_hop", "refusal"):
        agent, sc = live_agent.scenario_agent(name)
        safe = guarded(agent, GroundednessGuard(), on_ungrounded="refuse")
        assert safe.invoke(live_agent.question(sc))["messages"][-1].content == sc.turns[0].answer


def test_guarded_wrapper_with_a_raising_guard_refuses() -> None:
    agent, sc = live_agent.scenario_agent("changed_figure")
    safe = guarded(agent, GroundednessGuard(on_ungrounded="raise"), on_ungrounded="refuse", refusal="no")
    assert safe.invoke(live_agent.question(sc)) == "no"


def test_async_parallel_tools_equal_export(tmp_path: Path) -> None:
    agent, sc = live_agent.scenario_agent("parallel_tools")
    guard = GroundednessGuard()
    collector = gen_traces._make_run_collector()
    out = asyncio.run(agent.ainvoke(live_agent.question(sc), live_agent.config(sc, guard, collector)))
    assert out["messages"][-1].content == sc.turns[0].answer
    tools = [e for e in guard.last_audit.evidence if e.kind == "tool_result"] if guard.last_audit else []
    assert {e.name for e in tools} == {"get_order", "get_product"}
    assert without_times(exported(collector, tmp_path)) == without_times(guard.audits)


def test_async_guarded_and_concurrent_runs_share_one_guard() -> None:
    guard = GroundednessGuard()

    async def main() -> list[Any]:
        runs = []
        for name in ("multi_hop", "changed_figure", "parallel_tools"):
            agent, sc = live_agent.scenario_agent(name)
            runs.append(
                guarded(agent, guard, on_ungrounded="refuse", refusal="R").ainvoke(live_agent.question(sc))
            )
        return list(await asyncio.gather(*runs))

    outs = asyncio.run(main())
    texts = [o["messages"][-1].content for o in outs]
    assert texts[1] == "R"
    assert texts[0] == live_agent.scenario("multi_hop").turns[0].answer
    assert texts[2] == live_agent.scenario("parallel_tools").turns[0].answer
    assert len(guard.audits) == 3


def test_a_failing_audit_is_recorded_and_fails_closed(caplog: pytest.LogCaptureFixture) -> None:
    def broken(runs: Any) -> Any:
        raise RuntimeError("judge exploded")

    agent, sc = live_agent.scenario_agent("multi_hop")
    guard = GroundednessGuard()
    guard._audit = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="auditor_langchain.guard"):
        out = agent.invoke(live_agent.question(sc), live_agent.config(sc, guard))
    assert out["messages"][-1].content == sc.turns[0].answer  # flag: the application is unaffected
    assert len(guard.failures) == 1 and "judge exploded" in guard.failures[0].error
    assert "could not audit" in caplog.text
    agent, sc = live_agent.scenario_agent("multi_hop")
    out = guarded(agent, guard, on_ungrounded="refuse", refusal="R").invoke(live_agent.question(sc))
    assert out["messages"][-1].content == "R"  # no audit: not served
    raising = GroundednessGuard(on_ungrounded="raise")
    raising._audit = broken  # type: ignore[method-assign]
    agent, sc = live_agent.scenario_agent("multi_hop")
    with pytest.raises(UngroundedAnswerError) as caught:
        agent.invoke(live_agent.question(sc), live_agent.config(sc, raising))
    assert caught.value.audit is None and "could not be audited" in str(caught.value)


def test_audits_are_stored(tmp_path: Path) -> None:
    from auditor.store import Store

    url = f"sqlite:///{tmp_path / 'guard.db'}"
    guard = GroundednessGuard(db_url=url)
    for name in ("multi_hop", "changed_figure"):
        agent, sc = live_agent.scenario_agent(name)
        agent.invoke(live_agent.question(sc), live_agent.config(sc, guard))
    guard.close()
    with Store(url) as store:
        runs = store.list_runs()
        assert len(runs) == 1
        result = store.load_run(runs[0].id)
    assert [a.answer_id for a in result.answers] == [a.answer_id for a in guard.audits]
    assert result.summary["answers"] == 2 and result.summary["contradicted"] == 1


def test_bad_arguments_fail_at_construction() -> None:
    from auditor.errors import AuditorError

    with pytest.raises(AuditorError):
        GroundednessGuard(on_ungrounded="strip")  # type: ignore[arg-type]
    with pytest.raises(AuditorError):
        GroundednessGuard(judge="nonsense")
    with pytest.raises(AuditorError):
        guarded(live_agent.build_agent(MIXED), GroundednessGuard(), on_ungrounded="fallback")


def test_the_package_imports_without_langchain() -> None:
    code = "import sys, auditor_langchain; import auditor_langchain.runtree; print('langchain_core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
