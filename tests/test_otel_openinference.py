"""The OpenInference conventions as the LangChain instrumentation writes them."""

from __future__ import annotations

import json

from otel_samples.otlp import line, named, one_trace, parse, span

from auditor.trace import SpanKind

OI = "openinference.instrumentation.langchain"
TOOL_OUTPUT = json.dumps(
    {
        "type": "tool",
        "data": {
            "content": '{"status": "delivered"}',
            "tool_call_id": "call_9",
            "name": "get_order",
            "status": "success",
        },
    }
)


def llm_attrs() -> dict[str, object]:
    return {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-x",
        "session.id": "sess-1",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Be kind.",
        "llm.input_messages.1.message.role": "human",
        "llm.input_messages.1.message.content": "Where is 10042?",
        "llm.input_messages.2.message.role": "ai",
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_9",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_order",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"order_id": "10042"}',
        "llm.input_messages.3.message.role": "tool",
        "llm.input_messages.3.message.content": '{"status": "delivered"}',
        "llm.input_messages.3.message.tool_call_id": "call_9",
        "llm.input_messages.3.message.name": "get_order",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Order 10042 was delivered.",
    }


def test_llm_span_messages_tool_calls_and_session() -> None:
    trace = one_trace(span(1, "ScriptedChatModel", attrs=llm_attrs()), scope=OI)
    llm = trace.spans[0]
    assert llm.kind == SpanKind.LLM and llm.model == "gpt-x"
    assert trace.convention == "openinference" and trace.conversation_id == "sess-1"
    assert [(m.role, m.content, m.tool_call_id, m.name) for m in llm.input_messages] == [
        ("system", "Be kind.", None, None),
        ("user", "Where is 10042?", None, None),
        ("assistant", "", None, None),
        ("tool", '{"status": "delivered"}', "call_9", "get_order"),
    ]
    [call] = llm.input_messages[2].tool_calls
    assert (call.id, call.name, call.arguments) == ("call_9", "get_order", {"order_id": "10042"})
    assert [(m.role, m.content) for m in llm.output_messages] == [("assistant", "Order 10042 was delivered.")]


def test_tool_span_result_and_call_id_come_from_the_tool_message() -> None:
    tool_attrs = {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_order",
        "input.value": "10042",
        "output.value": TOOL_OUTPUT,
        "output.mime_type": "application/json",
    }
    trace = one_trace(span(1, "get_order", attrs=tool_attrs), scope=OI)
    tool = trace.spans[0].tool
    assert trace.spans[0].kind == SpanKind.TOOL and tool is not None
    # No model call in this trace: the bare argument stays as it was recorded.
    assert (tool.name, tool.call_id, tool.arguments, tool.result) == (
        "get_order",
        "call_9",
        "10042",
        '{"status": "delivered"}',
    )


def test_bare_tool_argument_is_keyed_from_the_models_tool_call() -> None:
    model = span(
        1,
        "ScriptedChatModel",
        start=0,
        end=1,
        attrs={
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_9",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_order",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"order_id": "10042"}',
        },
    )
    tool = span(
        2,
        "get_order",
        start=2,
        end=3,
        attrs={
            "openinference.span.kind": "TOOL",
            "tool.name": "get_order",
            "input.value": "10042",
            "output.value": TOOL_OUTPUT,
        },
    )
    trace = one_trace(model, tool, scope=OI)
    invocation = named(trace, "get_order").tool
    assert invocation is not None and invocation.arguments == {"order_id": "10042"}


def test_agent_named_spans_keep_agent_but_tools_and_models_get_their_exact_kind() -> None:
    trace = one_trace(
        span(1, "support_agent", attrs={"openinference.span.kind": "AGENT", "input.value": "{}"}),
        span(
            2,
            "agent_lookup",
            parent=1,
            attrs={
                "openinference.span.kind": "AGENT",
                "tool.name": "agent_lookup",
                "input.value": '{"q": "x"}',
                "output.value": "plain result",
            },
        ),
        span(
            3, "AgentChatModel", parent=1, attrs={"openinference.span.kind": "AGENT", "llm.model_name": "m"}
        ),
        span(
            4,
            "agent_kb",
            parent=1,
            attrs={"openinference.span.kind": "AGENT", "retrieval.documents.0.document.content": "text"},
        ),
        scope=OI,
    )
    kinds = {s.name: s.kind for s in trace.spans}
    assert kinds == {
        "support_agent": SpanKind.AGENT,
        "agent_lookup": SpanKind.TOOL,
        "AgentChatModel": SpanKind.LLM,
        "agent_kb": SpanKind.RETRIEVER,
    }
    lookup = named(trace, "agent_lookup").tool
    assert lookup is not None and (lookup.arguments, lookup.result) == ({"q": "x"}, "plain result")


def test_retriever_documents_ids_from_metadata_or_output_value() -> None:
    output = {
        "documents": [
            {"id": "KB-1", "page_content": "Returns within 30 days."},
            {"id": "KB-2", "page_content": "Refunds in 5 days."},
        ]
    }
    attrs = {
        "openinference.span.kind": "RETRIEVER",
        "input.value": "returns policy",
        "output.value": json.dumps(output),
        "retrieval.documents.0.document.content": "Returns within 30 days.",
        "retrieval.documents.0.document.metadata": json.dumps(
            {"source": "https://kb/1", "status": "current"}
        ),
        "retrieval.documents.1.document.content": "Refunds in 5 days.",
        "retrieval.documents.1.document.metadata": json.dumps({"doc_id": "META-2", "status": "superseded"}),
        "retrieval.documents.1.document.score": 0.4,
        "retrieval.documents.2.document.metadata": "{}",
    }
    traces, problems = parse(line([span(1, "kb_retriever", attrs=attrs)], scope=OI))
    retriever = traces[0].spans[0]
    assert retriever.kind == SpanKind.RETRIEVER and retriever.query == "returns policy"
    assert [(d.id, d.text, d.metadata.get("status"), d.score) for d in retriever.documents] == [
        ("KB-1", "Returns within 30 days.", "current", None),
        ("META-2", "Refunds in 5 days.", "superseded", 0.4),
    ]
    assert len(problems) == 1 and "retrieval.documents.2" in problems[0].reason


def test_chain_span_keeps_plain_input_and_output_text() -> None:
    trace = one_trace(
        span(
            1,
            "RunnableSequence",
            attrs={"openinference.span.kind": "CHAIN", "input.value": "q", "output.value": "a"},
        ),
        scope=OI,
    )
    chain = trace.spans[0]
    assert (chain.kind, chain.input_text, chain.output_text, chain.tool) == (SpanKind.CHAIN, "q", "a", None)


def test_a_trace_with_two_conventions_is_mixed() -> None:
    trace = one_trace(
        span(1, "x", attrs={"openinference.span.kind": "CHAIN"}),
        span(2, "chat m", parent=1, attrs={"gen_ai.operation.name": "chat"}),
    )
    assert trace.convention == "mixed"
    assert [s.kind for s in trace.spans] == [SpanKind.CHAIN, SpanKind.LLM]


def test_reranker_documents_are_its_output_documents() -> None:
    trace = one_trace(
        span(
            1,
            "rerank",
            attrs={
                "openinference.span.kind": "RERANKER",
                "reranker.query": "returns",
                "reranker.input_documents.0.document.content": "dropped by the reranker",
                "reranker.output_documents.0.document.content": "kept",
                "reranker.output_documents.0.document.id": "D1",
                "reranker.output_documents.0.document.score": 0.7,
            },
        ),
        scope=OI,
    )
    rerank = trace.spans[0]
    assert rerank.kind == SpanKind.RETRIEVER and rerank.query == "returns"
    assert [(d.id, d.text, d.score) for d in rerank.documents] == [("D1", "kept", 0.7)]
