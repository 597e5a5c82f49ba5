"""The Vercel AI SDK's ``ai.*`` telemetry: steps as model calls, the outer call as the agent loop
(one answer per generation), tool spans as tool results with their arguments; v5/v6 message parts
and the v4 field names (``args``, ``result``). The real SDK's files are in
tests/fixtures/frameworks/vercel_ai_v5 and _v6 (tests/test_frameworks.py)."""

from __future__ import annotations

import json

from otel_samples.otlp import one_trace, span

from auditor.evidence import EvidenceKind, reconstruct
from auditor.trace import SpanKind, ToolCall

SYSTEM = "Answer from tools."
QUESTION = "Weather in Paris?"


def step(n: int, start: float, end: float, messages: list[object], **response: object) -> dict[str, object]:
    attrs: dict[str, object] = {
        "ai.operationId": "ai.generateText.doGenerate",
        "ai.model.id": "gpt-x",
        "gen_ai.system": "openai.chat",  # set beside ai.*: must not make it a GenAI span
        "ai.prompt.messages": json.dumps(messages),
    }
    attrs.update({f"ai.response.{k}": v for k, v in response.items()})
    return span(n, "ai.generateText.doGenerate", parent=1, start=start, end=end, attrs=attrs)


def agent_loop(result_field: str, input_field: str, output: object) -> list[dict[str, object]]:
    call = {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "get_weather",
        input_field: {"city": "Paris"},
    }
    first = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
    ]
    second = [
        *first,
        {"role": "assistant", "content": [call]},
        {
            "role": "tool",
            "content": [
                {"type": "tool-result", "toolCallId": "c1", "toolName": "get_weather", result_field: output}
            ],
        },
    ]
    return [
        span(
            1,
            "ai.generateText",
            start=0,
            end=10,
            attrs={
                "ai.operationId": "ai.generateText",
                "ai.telemetry.functionId": "support",
                "ai.prompt": json.dumps({"system": SYSTEM, "prompt": QUESTION}),
                "ai.response.text": "Light rain in Paris.",
            },
        ),
        step(
            2,
            0.1,
            2,
            first,
            toolCalls=json.dumps(
                [{"toolCallId": "c1", "toolName": "get_weather", input_field: '{"city":"Paris"}'}]
            ),
        ),
        span(
            3,
            "ai.toolCall",
            parent=1,
            start=3,
            end=4,
            attrs={
                "ai.operationId": "ai.toolCall",
                "ai.toolCall.name": "get_weather",
                "ai.toolCall.id": "c1",
                "ai.toolCall.args": '{"city":"Paris"}',
                "ai.toolCall.result": '{"conditions":"light rain"}',
            },
        ),
        step(5, 5, 9, second, text="Light rain in Paris."),
    ]


def test_steps_are_model_calls_and_the_outer_call_is_the_agent_loop() -> None:
    trace = one_trace(*agent_loop("output", "input", {"type": "json", "value": {"conditions": "light rain"}}))
    assert trace.convention == "vercel_ai"
    outer, first, tool, last = sorted(trace.spans, key=lambda s: s.span_id)
    assert (outer.kind, first.kind, tool.kind, last.kind) == (
        SpanKind.AGENT,
        SpanKind.LLM,
        SpanKind.TOOL,
        SpanKind.LLM,
    )
    assert outer.entity_name == "support" and first.model == "gpt-x"
    assert [(m.role, m.content) for m in outer.input_messages] == [("system", SYSTEM), ("user", QUESTION)]
    assert first.output_messages[0].tool_calls == (
        ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
    )
    assert [(m.role, m.content, m.tool_call_id) for m in last.input_messages] == [
        ("system", SYSTEM, None),
        ("user", QUESTION, None),
        ("assistant", "", None),
        ("tool", '{"conditions": "light rain"}', "c1"),
    ]
    assert tool.tool is not None and tool.tool.arguments == {"city": "Paris"} and tool.tool.call_id == "c1"


def test_one_answer_per_generation_with_the_tool_span_as_its_evidence() -> None:
    answers = reconstruct(
        [one_trace(*agent_loop("output", "input", {"type": "text", "value": "light rain"}))]
    )
    assert [(a.question, a.text, a.span_id) for a in answers] == [
        (QUESTION, "Light rain in Paris.", f"{5:016x}")
    ]
    tools = [e for e in answers[0].evidence if e.kind is EvidenceKind.TOOL_RESULT]
    assert [(t.name, t.text, t.metadata["arguments"]) for t in tools] == [
        (
            "get_weather",
            '{"conditions":"light rain"}\n(called as get_weather(city="Paris"))',
            {"city": "Paris"},
        )
    ]
    prompts = [e.text for e in answers[0].evidence if e.kind is EvidenceKind.SYSTEM_PROMPT]
    assert prompts == [SYSTEM]


def test_v4_field_names_args_and_result() -> None:
    trace = one_trace(*agent_loop("result", "args", {"conditions": "light rain"}))
    last = max(trace.spans, key=lambda s: s.start)
    assert last.input_messages[2].tool_calls == (
        ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
    )
    assert last.input_messages[3].content == '{"conditions": "light rain"}'


def test_a_message_list_prompt_and_a_malformed_one() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
    ]
    good = span(
        1,
        "ai.streamText",
        attrs={"ai.operationId": "ai.streamText", "ai.prompt": json.dumps({"messages": messages})},
    )
    trace = one_trace(good)
    assert [(m.role, m.content) for m in trace.spans[0].input_messages] == [
        ("user", "Hi"),
        ("assistant", "Hello"),
    ]
    bad = span(
        2,
        "ai.streamText.doStream",
        attrs={"ai.operationId": "ai.streamText.doStream", "ai.prompt.messages": '{"x": 1}'},
    )
    assert one_trace(bad).spans[0].input_messages == ()
