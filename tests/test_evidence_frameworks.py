"""Cross-framework evidence rules (issue 27, items 9, 10, 14 and timestamp skew), on hand-built traces.

- A final-answer or structured-output tool (pydantic-ai ``final_result``, smolagents / any-agent /
  BeeAI ``final_answer``, ``final_output``) delivers the answer: its argument is the answer text,
  and the call is not a tool result.
- The question and system prompt of one agent run reach its final chat span when that span lacks
  them (Microsoft Agent Framework / Semantic Kernel put them on ``invoke_agent``; OpenInference
  frameworks put the question on the AGENT or CHAIN root's ``input.value``).
- The tool call is context of its result: the item's text is the result then
  ``(called as name(arg="value"))``, so
  a claim naming what was asked is judged with the arguments in view; an error payload inside a
  successful result is an error result, which the policy's ``tool_errors`` rule excludes.
- A tool span whose end was written a little after the next model call's start (millisecond
  clocks) still counts when that call's input holds its result.
"""

from __future__ import annotations

import asyncio
import json

from auditor.claims import decompose_answer
from auditor.evidence import EvidenceKind, reconstruct
from auditor.judges import OfflineJudge
from auditor.pipeline import audit_answer
from auditor.policy import load_policy
from auditor.trace import Message, SpanKind, ToolCall
from tests.tracebuilder import TraceBuilder, assistant, system, tool_msg, user

Q = user("What is the weather in Paris?")
SYS = system("You are a weather assistant. Answer only from tool results.")


# -- 3a: answers delivered through a final-answer or structured-output tool ------------------------


def _final_tool_trace(name: str, arguments: dict[str, object] | str, with_tool_span: bool) -> TraceBuilder:
    b = TraceBuilder(f"t-{name}")
    b.chain("root", 0, 10)
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    b.llm("l1", 1, 2, [SYS, Q], calls=[weather], parent="root")
    b.tool("s1", "get_weather", 2, 3, {"city": "Paris"}, '{"conditions": "light rain"}', "c1", parent="root")
    final = ToolCall(id="c2", name=name, arguments=arguments)
    b.llm("l2", 4, 5, [SYS, Q, assistant(calls=[weather]), tool_msg('{"conditions": "light rain"}', "c1")],
          calls=[final], parent="root")  # fmt: skip
    if with_tool_span:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        b.tool("s2", name, 5, 6, arguments, text, "c2", parent="root")
    return b


def test_a_final_answer_tool_argument_is_the_answer_and_not_a_tool_result() -> None:
    for name, key in (("final_answer", "answer"), ("final_output", "response"), ("final_result", "response")):
        (answer,) = reconstruct([_final_tool_trace(name, {key: "It is raining in Paris."}, True).build()])
        assert (answer.span_id, answer.text, answer.question) == ("l2", "It is raining in Paris.", Q.content)
        tools = [e.name for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
        assert tools == ["get_weather"], (name, tools)


def test_a_structured_output_is_the_answer_as_json() -> None:
    structured = {"city": "Paris", "conditions": "light rain", "temp_c": 14}
    (answer,) = reconstruct([_final_tool_trace("final_result_Weather", structured, False).build()])
    assert json.loads(answer.text) == structured


def test_a_final_answer_given_as_bare_text_is_the_answer() -> None:
    (answer,) = reconstruct([_final_tool_trace("final_answer", "It is raining in Paris.", True).build()])
    assert answer.text == "It is raining in Paris."


def test_an_ordinary_tool_call_is_still_not_an_answer() -> None:
    b = TraceBuilder("t-plain")
    b.llm("l1", 1, 2, [Q], calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})])
    assert reconstruct([b.build()]) == []


def test_a_final_answer_tool_message_in_a_later_turn_is_not_a_tool_result() -> None:
    b = _final_tool_trace("final_result", {"response": "It is raining in Paris."}, False)
    final = ToolCall(id="c2", name="final_result", arguments={"response": "It is raining in Paris."})
    later = [Q, assistant(calls=[final]), tool_msg("Final result processed.", "c2"), user("And tomorrow?")]
    b.llm("l3", 7, 8, later, output="I cannot tell about tomorrow.", parent="root")
    second = reconstruct([b.build()])[-1]
    assert [e.text for e in second.evidence if e.kind is EvidenceKind.TOOL_RESULT] == [
        '{"conditions": "light rain"}\n(called as get_weather(city="Paris"))'
    ]


# -- 3b: the question and system prompt carried across one agent run -------------------------------


def test_question_and_system_prompt_come_from_the_invoke_agent_span() -> None:
    b = TraceBuilder("t-maf")
    b._add("agent", "invoke_agent weather", SpanKind.AGENT, 0, 10, None, input_messages=(SYS, Q))
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    b.llm("l1", 1, 2, [], calls=[weather], parent="agent")
    b.tool("s1", "get_weather", 2, 3, {"city": "Paris"}, "light rain, 14C", "c1", parent="agent")
    b.llm("l2", 4, 5, [tool_msg("light rain, 14C", "c1")], output="It is raining in Paris.", parent="agent")
    (answer,) = reconstruct([b.build()])
    assert answer.question == Q.content
    kinds = {(e.kind, e.text) for e in answer.evidence}
    assert (EvidenceKind.SYSTEM_PROMPT, SYS.content) in kinds
    assert any(e.kind is EvidenceKind.USER_MESSAGE and e.current_question for e in answer.evidence)


def test_the_question_comes_from_an_earlier_chat_span_of_the_same_run() -> None:
    b = TraceBuilder("t-carry")
    b.chain("run", 0, 10, name="agent run")
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    b.llm("l1", 1, 2, [SYS, Q], calls=[weather], parent="run")
    b.tool("s1", "get_weather", 2, 3, {"city": "Paris"}, "light rain", "c1", parent="run")
    b.llm("l2", 4, 5, [tool_msg("light rain", "c1")], output="It is raining in Paris.", parent="run")
    (answer,) = reconstruct([b.build()])
    assert answer.question == Q.content


def test_the_question_comes_from_the_root_input_value() -> None:
    b = TraceBuilder("t-oi")
    b._add("agent", "Agent.run", SpanKind.AGENT, 0, 10, None, input_text=json.dumps({"task": Q.content}))
    b.llm(
        "l1", 1, 2, [Message(role="assistant", content="")], output="It is raining in Paris.", parent="agent"
    )
    (answer,) = reconstruct([b.build()])
    assert answer.question == Q.content
    b = TraceBuilder("t-oi-text")
    b._add("agent", "Agent.run", SpanKind.CHAIN, 0, 10, None, input_text=Q.content)
    b.llm("l1", 1, 2, [], output="It is raining in Paris.", parent="agent")
    (answer,) = reconstruct([b.build()])
    assert answer.question == Q.content


# -- 3c: the tool call is context of its result; error payloads ------------------------------------


def _weather_answer(result: str) -> TraceBuilder:
    b = TraceBuilder("t-ctx")
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    b.llm("l1", 0, 1, [SYS, Q], calls=[weather])
    b.tool("s1", "get_weather", 1, 2, {"city": "Paris"}, result, "c1")
    b.llm(
        "l2",
        3,
        4,
        [SYS, Q, assistant(calls=[weather]), tool_msg(result, "c1")],
        output="It is raining in Paris.",
    )
    return b


def test_a_tool_result_carries_its_call_and_the_judge_sees_it() -> None:
    (answer,) = reconstruct([_weather_answer('{"conditions": "rain", "temp_c": 14}').build()])
    (tool,) = [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
    assert tool.text == '{"conditions": "rain", "temp_c": 14}\n(called as get_weather(city="Paris"))'
    assert tool.metadata["arguments"] == {"city": "Paris"}
    assert tool.metadata["call"] == 'get_weather(city="Paris")'
    audit = asyncio.run(
        audit_answer(answer, decompose_answer(answer), load_policy("default"), OfflineJudge())
    )
    assert [v.label.value for v in audit.verdicts] == ["supported"]


def test_an_error_payload_in_a_successful_result_is_an_error_the_policy_excludes() -> None:
    (answer,) = reconstruct([_weather_answer('{"error": "city not found"}').build()])
    (tool,) = [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
    assert tool.error is True
    audit = asyncio.run(
        audit_answer(answer, decompose_answer(answer), load_policy("default"), OfflineJudge())
    )
    decision = next(d for d in audit.decisions if d.evidence_id == tool.evidence_id)
    assert decision.admitted is False
    (answer,) = reconstruct([_weather_answer('{"error": null, "conditions": "rain"}').build()])
    assert not any(e.error for e in answer.evidence)


# -- 3d: a tool span that ends a little after the next model call starts ---------------------------


def test_a_tool_span_ending_just_after_the_next_call_starts_still_counts() -> None:
    b = TraceBuilder("t-skew")
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    b.llm("l1", 0, 1, [SYS, Q], calls=[weather])
    b.tool("s1", "get_weather", 1.0, 2.0009, {"city": "Paris"}, "light rain", "c1")  # ms clock: ends late
    b.llm("l2", 2.0, 3, [SYS, Q, assistant(calls=[weather]), tool_msg("light rain", "c1")],
          output="It is raining in Paris.")  # fmt: skip
    (answer,) = reconstruct([b.build()])
    tools = [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
    assert [(e.name, e.span_id) for e in tools] == [("get_weather", "s1")]
    assert tools[0].available_at is not None and tools[0].available_at <= answer.generated_at


def test_a_tool_span_the_answer_never_saw_stays_out() -> None:
    b = TraceBuilder("t-skew-unseen")
    b.llm("l1", 0, 1, [SYS, Q], calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})])
    b.tool("s1", "get_weather", 1.0, 2.0009, {"city": "Paris"}, "light rain", "c1")
    b.llm("l2", 2.0, 3, [SYS, Q], output="It is raining in Paris.")
    (answer,) = reconstruct([b.build()])
    assert not [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
