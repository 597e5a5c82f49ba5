"""OpenLLMetry (opentelemetry-instrumentation-langchain): 0.62.4 and the <=0.54 indexed form."""

from __future__ import annotations

import json

from otel_samples.otlp import named, one_trace, span

from auditor.trace import SpanKind

OL = "opentelemetry.instrumentation.langchain"
TOOL_MESSAGE = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain", "schema", "messages", "ToolMessage"],
    "kwargs": {
        "content": '{"refund_id": "RF-311"}',
        "type": "tool",
        "name": "get_refund",
        "tool_call_id": "call_mh_2",
        "status": "success",
    },
}


def tool_attrs(input_str: str) -> dict[str, object]:
    envelope = json.dumps(
        {
            "input_str": input_str,
            "tags": ["seq:step:1"],
            "metadata": {},
            "kwargs": {"color": "green"},
            "inputs": {"order_id": "10042"},
        }
    )
    result = json.dumps({"output": TOOL_MESSAGE, "kwargs": {"name": "get_refund"}})
    return {
        "traceloop.span.kind": "tool",
        "traceloop.entity.name": "get_refund",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_refund",
        "traceloop.entity.input": envelope,
        "gen_ai.tool.call.arguments": envelope,
        "traceloop.entity.output": result,
        "gen_ai.tool.call.result": result,
        "traceloop.association.properties.session_id": "sess-7",
    }


def test_tool_span_unwraps_the_envelope_and_the_lc_tool_message() -> None:
    trace = one_trace(span(1, "execute_tool get_refund", attrs=tool_attrs("{'order_id': '10042'}")), scope=OL)
    tool = trace.spans[0]
    assert tool.kind == SpanKind.TOOL and tool.tool is not None
    assert tool.tool.model_dump() == {
        "name": "get_refund",
        "call_id": "call_mh_2",
        "arguments": {"order_id": "10042"},
        "result": '{"refund_id": "RF-311"}',
    }
    assert trace.convention == "openllmetry" and trace.conversation_id == "sess-7"


def test_input_str_is_read_as_a_literal_never_evaluated() -> None:
    trace = one_trace(
        span(1, "execute_tool get_refund", attrs=tool_attrs("__import__('os').getcwd()")), scope=OL
    )
    tool = trace.spans[0].tool
    # Not a literal: the envelope's own inputs dict is used instead.
    assert tool is not None and tool.arguments == {"order_id": "10042"}


def test_vector_db_retrieve_documents_come_from_the_entity_output() -> None:
    output = {
        "documents": [
            {"page_content": "Returns within 30 days.", "metadata": {"status": "current"}},
            {"page_content": "Old policy.", "metadata": {"id": "KB-0", "status": "superseded"}},
        ]
    }
    trace = one_trace(
        span(
            1,
            "vector_db_retrieve kb_retriever",
            attrs={
                "traceloop.span.kind": "task",
                "gen_ai.operation.name": "vector_db_retrieve",
                "traceloop.entity.input": json.dumps({"inputs": {"query": "returns"}, "tags": []}),
                "traceloop.entity.output": json.dumps(output),
            },
        ),
        scope=OL,
    )
    retriever = trace.spans[0]
    assert retriever.kind == SpanKind.RETRIEVER and retriever.query == "returns"
    assert retriever.entity_name == "kb_retriever"
    assert [(d.id, d.text, d.metadata["status"]) for d in retriever.documents] == [
        (None, "Returns within 30 days.", "current"),
        ("KB-0", "Old policy.", "superseded"),
    ]


def test_new_semconv_chat_span_and_workflow_kinds() -> None:
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": "Refund?"}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_mh_2", "response": "RF-311"}]},
    ]
    trace = one_trace(
        span(
            1,
            "handle.workflow",
            attrs={"traceloop.span.kind": "workflow", "gen_ai.operation.name": "invoke_agent"},
        ),
        span(2, "invoke_agent support_agent", parent=1, attrs={"gen_ai.operation.name": "invoke_agent"}),
        span(
            3,
            "ScriptedChatModel.chat",
            parent=2,
            attrs={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "unknown",
                "gen_ai.response.model": "m-1",
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "finish_reason": "",
                            "parts": [{"type": "text", "content": "Yes, RF-311."}],
                        }
                    ]
                ),
            },
        ),
        scope=OL,
    )
    assert [s.kind for s in trace.spans] == [SpanKind.CHAIN, SpanKind.AGENT, SpanKind.LLM]
    assert [s.entity_name for s in trace.spans] == ["handle", "support_agent", "ScriptedChatModel"]
    chat = named(trace, "ScriptedChatModel.chat")
    assert [(m.role, m.content, m.tool_call_id) for m in chat.input_messages] == [
        ("user", "Refund?", None),
        ("tool", "RF-311", "call_mh_2"),
    ]
    assert chat.output_messages[0].content == "Yes, RF-311." and chat.model == "m-1"
    assert trace.convention == "openllmetry"


def test_legacy_indexed_prompt_and_completion() -> None:
    trace = one_trace(
        span(
            1,
            "ChatOpenAI.chat",
            attrs={
                "llm.request.type": "chat",
                "gen_ai.system": "Langchain",
                "gen_ai.request.model": "gpt-4o",
                "traceloop.association.properties.thread_id": "thread-3",
                "gen_ai.prompt.0.role": "system",
                "gen_ai.prompt.0.content": "You are Ada.",
                "gen_ai.prompt.1.role": "user",
                "gen_ai.prompt.1.content": "Order 10042?",
                "gen_ai.prompt.2.role": "assistant",
                "gen_ai.prompt.2.content": "",
                "gen_ai.prompt.2.tool_calls.0.id": "call_1",
                "gen_ai.prompt.2.tool_calls.0.name": "get_order",
                "gen_ai.prompt.2.tool_calls.0.arguments": '{"order_id": "10042"}',
                "gen_ai.prompt.3.role": "tool",
                "gen_ai.prompt.3.content": "delivered",
                "gen_ai.prompt.3.tool_call_id": "call_1",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "It was delivered.",
            },
        )
    )
    chat = trace.spans[0]
    assert chat.kind == SpanKind.LLM and trace.convention == "openllmetry"
    assert [(m.role, m.content, m.tool_call_id) for m in chat.input_messages] == [
        ("system", "You are Ada.", None),
        ("user", "Order 10042?", None),
        ("assistant", "", None),
        ("tool", "delivered", "call_1"),
    ]
    assert chat.input_messages[2].tool_calls[0].arguments == {"order_id": "10042"}
    assert [(m.role, m.content) for m in chat.output_messages] == [("assistant", "It was delivered.")]
    assert trace.conversation_id == "thread-3" and chat.model == "gpt-4o"


def test_tool_call_id_is_recovered_from_the_next_model_input() -> None:
    attrs = tool_attrs("{'order_id': '10042'}")
    no_id = {
        **TOOL_MESSAGE,
        "kwargs": {k: v for k, v in TOOL_MESSAGE["kwargs"].items() if k != "tool_call_id"},
    }
    attrs["gen_ai.tool.call.result"] = json.dumps({"output": no_id})
    chat = {
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "assistant",
        "gen_ai.prompt.0.tool_calls.0.id": "call_mh_2",
        "gen_ai.prompt.0.tool_calls.0.name": "get_refund",
        "gen_ai.prompt.1.role": "tool",
        "gen_ai.prompt.1.content": '{"refund_id": "RF-311"}',
        "gen_ai.prompt.1.tool_call_id": "call_mh_2",
    }
    trace = one_trace(
        span(1, "execute_tool get_refund", start=0, end=1, attrs=attrs),
        span(2, "Model.chat", start=2, end=3, attrs=chat),
        scope=OL,
    )
    tool = named(trace, "execute_tool get_refund").tool
    assert tool is not None and tool.call_id == "call_mh_2"


def test_sdk_tool_decorator_envelope_and_json_string_output() -> None:
    # traceloop-sdk's @tool around a plain function (as tests/fixtures/frameworks/openllmetry holds).
    attrs = {
        "traceloop.span.kind": "tool",
        "traceloop.entity.name": "get_weather",
        "gen_ai.tool.name": "get_weather",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"city": "Paris"}}),
        "traceloop.entity.output": json.dumps(json.dumps({"city": "Paris", "conditions": "light rain"})),
    }
    tool = one_trace(span(1, "get_weather.tool", attrs=attrs), scope="traceloop.tracer").spans[0]
    assert tool.kind == SpanKind.TOOL and tool.tool is not None
    assert tool.tool.arguments == {"city": "Paris"}
    assert tool.tool.result == '{"city": "Paris", "conditions": "light rain"}'


def test_sdk_decorator_positional_arguments_stay_with_the_keywords() -> None:
    attrs = {
        "traceloop.span.kind": "tool",
        "traceloop.entity.name": "lookup",
        "traceloop.entity.input": json.dumps({"args": ["ACME"], "kwargs": {"limit": 2}}),
        "traceloop.entity.output": json.dumps("3 orders"),
    }
    tool = one_trace(span(1, "lookup.tool", attrs=attrs), scope="traceloop.tracer").spans[0]
    assert tool.tool is not None
    assert tool.tool.arguments == {"args": ["ACME"], "limit": 2}
    assert tool.tool.result == "3 orders"


def test_sdk_workflow_output_text_is_the_returned_string() -> None:
    attrs = {
        "traceloop.span.kind": "workflow",
        "traceloop.entity.name": "support_agent",
        "traceloop.entity.input": json.dumps({"args": ["What is the weather?"], "kwargs": {}}),
        "traceloop.entity.output": json.dumps("It is 14 °C."),
    }
    workflow = one_trace(span(1, "support_agent.workflow", attrs=attrs), scope="traceloop.tracer").spans[0]
    assert workflow.kind == SpanKind.CHAIN
    assert workflow.output_text == "It is 14 °C."


def test_sdk_task_called_with_chat_messages_has_them_as_input() -> None:
    messages = [{"role": "system", "content": "Be Ada."}, {"role": "user", "content": "Weather?"}]
    python = {
        "traceloop.span.kind": "task",
        "traceloop.entity.input": json.dumps({"args": [messages], "kwargs": {}}),
    }
    node = {
        "traceloop.span.kind": "task",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": messages}),
    }
    for attrs in (python, node):
        task = one_trace(span(1, "call_model.task", attrs=attrs), scope="traceloop.tracer").spans[0]
        assert task.kind == SpanKind.CHAIN
        assert [(m.role, m.content) for m in task.input_messages] == [
            ("system", "Be Ada."),
            ("user", "Weather?"),
        ]
