"""The OpenTelemetry GenAI conventions: current content attributes (JSON and structured), tool
and retrieval spans, and the older span events."""

from __future__ import annotations

import json

from otel_samples.otlp import line, named, one_trace, parse, span

from auditor.trace import Severity, SpanKind, ToolCall

INPUT = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"location": "Paris"}}
        ],
    },
    {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": " call_1", "result": "rainy, 57F"},
            {"type": "tool_call_response", "id": "call_2", "response": {"uv": 2}},
        ],
    },
]
OUTPUT = [
    {
        "role": "assistant",
        "parts": [{"type": "text", "content": "It is rainy, 57F."}],
        "finish_reason": "stop",
    }
]


def chat_attrs(structured: bool) -> dict[str, object]:
    encode = (lambda v: v) if structured else json.dumps
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-x",
        "gen_ai.conversation.id": "conv-9",
        "gen_ai.system_instructions": encode([{"type": "text", "content": "Be brief."}]),
        "gen_ai.input.messages": encode(INPUT),
        "gen_ai.output.messages": encode(OUTPUT),
    }


def check_chat(structured: bool) -> None:
    trace = one_trace(span(1, "chat gpt-x", attrs=chat_attrs(structured)))
    chat = trace.spans[0]
    assert chat.kind == SpanKind.LLM and chat.model == "gpt-x"
    assert trace.convention == "genai" and trace.conversation_id == "conv-9"
    assert [(m.role, m.content, m.tool_call_id) for m in chat.input_messages] == [
        ("system", "Be brief.", None),
        ("user", "Weather in Paris?", None),
        ("assistant", "", None),
        ("tool", "rainy, 57F", "call_1"),
        ("tool", '{"uv": 2}', "call_2"),
    ]
    assert chat.input_messages[2].tool_calls == (
        ToolCall(id="call_1", name="get_weather", arguments={"location": "Paris"}),
    )
    assert [(m.role, m.content) for m in chat.output_messages] == [("assistant", "It is rainy, 57F.")]


def test_chat_messages_as_json_strings() -> None:
    check_chat(structured=False)


def test_chat_messages_as_structured_values() -> None:
    check_chat(structured=True)


def test_execute_tool_span() -> None:
    trace = one_trace(
        span(
            1,
            "execute_tool get_weather",
            attrs={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": '{"location": "Paris"}',
                "gen_ai.tool.call.result": "rainy, 57F",
            },
        )
    )
    tool = trace.spans[0]
    assert tool.kind == SpanKind.TOOL
    assert tool.tool is not None
    assert tool.tool.model_dump() == {
        "name": "get_weather",
        "call_id": "call_1",
        "arguments": {"location": "Paris"},
        "result": "rainy, 57F",
    }


def test_structured_tool_result_is_kept_as_json_text() -> None:
    trace = one_trace(
        span(
            1,
            "execute_tool t",
            attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": {"temp": 57}},
        )
    )
    assert trace.spans[0].tool is not None
    assert trace.spans[0].tool.name == "t" and trace.spans[0].tool.result == '{"temp": 57}'


def test_retrieval_span_keeps_documents_with_text_and_reports_the_rest() -> None:
    docs = [
        {
            "id": "doc_1",
            "score": 0.9,
            "content": "Returns within 30 days.",
            "metadata": {"status": "current"},
            "title": "Returns",
        },
        {"id": "doc_2", "score": 0.5},
    ]
    text = line(
        [
            span(
                1,
                "retrieval kb",
                attrs={
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.query.text": "returns",
                    "gen_ai.retrieval.documents": json.dumps(docs),
                },
            )
        ]
    )
    traces, problems = parse(text)
    retrieval = traces[0].spans[0]
    assert retrieval.kind == SpanKind.RETRIEVER and retrieval.query == "returns"
    assert retrieval.entity_name == "kb"
    assert [(d.id, d.text, d.score, d.metadata) for d in retrieval.documents] == [
        ("doc_1", "Returns within 30 days.", 0.9, {"title": "Returns", "status": "current"})
    ]
    assert [(p.line, p.severity) for p in problems] == [(1, Severity.WARNING)]
    assert "doc_2" in problems[0].reason


def test_agent_and_workflow_kinds() -> None:
    trace = one_trace(
        span(1, "invoke_agent support", attrs={"gen_ai.operation.name": "invoke_agent"}),
        span(2, "invoke_workflow w", parent=1, attrs={"gen_ai.operation.name": "invoke_workflow"}),
        span(3, "embeddings m", parent=1, attrs={"gen_ai.operation.name": "embeddings"}),
    )
    assert [s.kind for s in trace.spans] == [SpanKind.AGENT, SpanKind.CHAIN, SpanKind.EMBEDDING]


def test_older_span_events_carry_openai_format_messages() -> None:
    prompt = [
        {"role": "user", "content": "Order 10042?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id": "10042"}'},
                }
            ],
        },
        {"role": "tool", "content": "delivered", "tool_call_id": "call_7"},
    ]
    completion = [{"index": 0, "finish_reason": "stop", "message": {"content": "It was delivered."}}]
    events = [
        {
            "timeUnixNano": "1772000000000000001",
            "name": "gen_ai.content.prompt",
            "attributes": [{"key": "gen_ai.prompt", "value": {"stringValue": json.dumps(prompt)}}],
        },
        {
            "name": "gen_ai.content.completion",
            "attributes": [{"key": "gen_ai.completion", "value": {"stringValue": json.dumps(completion)}}],
        },
    ]
    trace = one_trace(
        span(
            1, "chat gpt-x", attrs={"gen_ai.system": "openai", "gen_ai.operation.name": "chat"}, events=events
        )
    )
    chat = named(trace, "chat gpt-x")
    assert [(m.role, m.content, m.tool_call_id) for m in chat.input_messages] == [
        ("user", "Order 10042?", None),
        ("assistant", "", None),
        ("tool", "delivered", "call_7"),
    ]
    assert chat.input_messages[1].tool_calls[0].arguments == {"order_id": "10042"}
    assert [(m.role, m.content) for m in chat.output_messages] == [("assistant", "It was delivered.")]
    assert [e.name for e in chat.events] == ["gen_ai.content.prompt", "gen_ai.content.completion"]


def test_malformed_message_json_is_reported_not_raised() -> None:
    text = line(
        [
            span(
                1,
                "chat m",
                attrs={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": "[{broken",
                    "gen_ai.output.messages": json.dumps([{"role": "ai", "parts": "x"}]),
                },
            )
        ]
    )
    traces, problems = parse(text)
    chat = traces[0].spans[0]
    assert chat.input_messages == ()
    assert [(m.role, m.content) for m in chat.output_messages] == [("assistant", "")]
    assert len(problems) == 2 and {p.line for p in problems} == {1}


def test_anthropic_content_blocks_in_openai_format_messages() -> None:
    """Anthropic blocks inside GenAI messages: system text blocks are the system prompt, ``tool_use``
    blocks tool calls, each ``tool_result`` block a tool message keyed by its ``tool_use_id``."""
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "You are Ada."}]},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "light rain"}],
                }
            ],
        },
    ]
    chat = one_trace(
        span(
            1, "chat", attrs={"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(messages)}
        )
    ).spans[0]
    assert [(m.role, m.content, m.tool_call_id) for m in chat.input_messages] == [
        ("system", "You are Ada.", None),
        ("user", "Weather in Paris?", None),
        ("assistant", "Checking.", None),
        ("tool", "light rain", "toolu_1"),
    ]
    assert chat.input_messages[2].tool_calls == (
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
    )


def test_pydantic_ai_v1_tool_span_reads_tool_arguments_and_tool_response() -> None:
    tool = (
        one_trace(
            span(
                1,
                "running tool",
                attrs={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.id": "call_1",
                    "tool_arguments": '{"city": "Paris"}',
                    "tool_response": "light rain",
                    "logfire.msg": "running tool: get_weather",
                },
            )
        )
        .spans[0]
        .tool
    )
    assert tool is not None
    assert (tool.name, tool.call_id, tool.arguments, tool.result) == (
        "get_weather",
        "call_1",
        {"city": "Paris"},
        "light rain",
    )


def test_any_agent_call_llm_output_and_tool_args() -> None:
    """any-agent: ``call_llm`` is a model call whose ``gen_ai.output`` holds its tool calls (or its
    text); a tool span's arguments are in ``gen_ai.tool.args`` and its result in ``gen_ai.output``."""
    trace = one_trace(
        span(
            1,
            "call_llm m",
            attrs={
                "gen_ai.operation.name": "call_llm",
                "gen_ai.output": '[{"tool.name": "get_weather", "tool.args": "{\\"city\\": \\"Paris\\"}"}]',
            },
        ),
        span(
            2,
            "execute_tool get_weather",
            attrs={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.args": '{"city": "Paris"}',
                "gen_ai.output": "light rain",
            },
        ),
        span(3, "call_llm m", attrs={"gen_ai.operation.name": "call_llm", "gen_ai.output": "It rains."}),
    )
    first, tool, last = trace.spans
    assert first.kind is SpanKind.LLM
    assert first.output_messages[0].tool_calls == (
        ToolCall(id=None, name="get_weather", arguments={"city": "Paris"}),
    )
    assert tool.tool is not None
    assert (tool.tool.arguments, tool.tool.result) == ({"city": "Paris"}, "light rain")
    assert [(m.role, m.content) for m in last.output_messages] == [("assistant", "It rains.")]


def test_deprecated_prompt_and_completion_as_span_attributes() -> None:
    """``gen_ai.prompt`` / ``gen_ai.completion`` written as attributes, not inside the old events."""
    chat = one_trace(
        span(
            1,
            "chat m",
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.prompt": json.dumps(
                    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}]
                ),
                "gen_ai.completion": json.dumps([{"role": "assistant", "content": "Rain."}]),
            },
        )
    ).spans[0]
    assert [(m.role, m.content) for m in chat.input_messages] == [
        ("system", "Be brief."),
        ("user", "Weather?"),
    ]
    assert [(m.role, m.content) for m in chat.output_messages] == [("assistant", "Rain.")]
