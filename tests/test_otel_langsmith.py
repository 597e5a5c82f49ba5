"""LangSmith's own OpenTelemetry exporter (``langsmith`` ``tracing_mode="otel"``): the run's inputs
and outputs as JSON in ``gen_ai.prompt`` / ``gen_ai.completion`` span attributes (issue 27 item 3,
LangSmith's side). The real SDK's spans are ``tests/fixtures/frameworks/langsmith_sdk/otel.otlp.jsonl``."""

from __future__ import annotations

import json
from typing import Any

from otel_samples.otlp import named, one_trace, span

from auditor.evidence import inspect_traces
from auditor.trace import SpanKind

SYSTEM = {"role": "system", "content": "Answer from tools."}
USER = {"role": "user", "content": "Weather in Paris?"}


def ls(kind: str, name: str, prompt: Any, completion: Any, **more: Any) -> dict[str, Any]:
    return {
        "langsmith.span.kind": kind,
        "langsmith.trace.name": name,
        "gen_ai.prompt": json.dumps(prompt),
        "gen_ai.completion": json.dumps(completion),
        **more,
    }


def test_wrap_openai_llm_span_request_and_chat_completion() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    attrs = ls(
        "llm",
        "ChatOpenAI",
        {"messages": [SYSTEM, USER], "model": "m", "tools": []},
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]},
        **{"gen_ai.operation.name": "chat", "langsmith.metadata.thread_id": "th-1"},
    )
    trace = one_trace(span(1, "ChatOpenAI", attrs=attrs), scope="langsmith")
    llm = trace.spans[0]
    assert llm.kind is SpanKind.LLM and trace.conversation_id == "th-1"
    assert [(m.role, m.content) for m in llm.input_messages] == [
        ("system", "Answer from tools."),
        ("user", "Weather in Paris?"),
    ]
    (out,) = llm.output_messages
    assert out.role == "assistant" and out.tool_calls[0].name == "get_weather"
    assert out.tool_calls[0].arguments == {"city": "Paris"} and out.tool_calls[0].id == "call_1"


def test_langchain_llm_span_lc_messages_and_generations() -> None:
    lc = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
          "kwargs": {"content": "Weather in Paris?", "type": "human"}}  # fmt: skip
    ai = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
          "kwargs": {"content": "Light rain.", "type": "ai"}}  # fmt: skip
    attrs = ls(
        "llm", "ChatOpenAI", {"messages": [[lc]]}, {"generations": [[{"text": "Light rain.", "message": ai}]]}
    )
    llm = one_trace(span(1, "ChatOpenAI", attrs=attrs), scope="langsmith").spans[0]
    assert [(m.role, m.content) for m in llm.input_messages] == [("user", "Weather in Paris?")]
    assert [(m.role, m.content) for m in llm.output_messages] == [("assistant", "Light rain.")]


def test_tool_span_arguments_and_output() -> None:
    attrs = ls("tool", "get_weather", {"city": "Paris"}, {"output": '{"conditions": "light rain"}'},
               **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"})  # fmt: skip
    tool = one_trace(span(1, "get_weather", attrs=attrs), scope="langsmith").spans[0]
    assert tool.kind is SpanKind.TOOL and tool.tool is not None
    assert tool.tool.model_dump() == {
        "name": "get_weather",
        "call_id": None,
        "arguments": {"city": "Paris"},
        "result": '{"conditions": "light rain"}',
    }


def test_tool_span_with_a_langchain_tool_message_gives_its_call_id() -> None:
    message = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
               "kwargs": {"content": "14 C", "type": "tool", "tool_call_id": "call_9"}}  # fmt: skip
    tool = one_trace(span(1, "t", attrs=ls("tool", "t", {"input": "Paris"}, {"output": message}))).spans[0]
    assert tool.tool is not None
    assert (tool.tool.arguments, tool.tool.result, tool.tool.call_id) == ("Paris", "14 C", "call_9")


def test_retriever_written_as_embeddings_is_a_retriever_with_documents() -> None:
    docs = {
        "documents": [
            {"page_content": "Returns within 30 days.", "metadata": {"id": "KB-7"}, "type": "Document"}
        ]
    }
    attrs = ls("retriever", "kb", {"query": "returns"}, docs, **{"gen_ai.operation.name": "embeddings"})
    retriever = one_trace(span(1, "kb", attrs=attrs), scope="langsmith").spans[0]
    assert retriever.kind is SpanKind.RETRIEVER and retriever.query == "returns"
    assert [(d.id, d.text) for d in retriever.documents] == [("KB-7", "Returns within 30 days.")]


def test_chain_span_keeps_its_input_and_output_text() -> None:
    trace = one_trace(
        span(1, "support_agent", attrs=ls("chain", "support_agent", {"question": "Q?"}, {"output": "A."})),
        span(
            2, "ChatOpenAI", parent=1, attrs=ls("llm", "ChatOpenAI", {"messages": [USER]}, {"output": "A."})
        ),
        scope="langsmith",
    )
    chain = named(trace, "support_agent")
    assert chain.kind is SpanKind.CHAIN and (chain.input_text, chain.output_text) == ("Q?", "A.")
    assert trace.convention == "langsmith"


def test_inspect_names_the_langsmith_exporter() -> None:
    trace = one_trace(span(1, "ChatOpenAI", attrs=ls("llm", "ChatOpenAI", {"messages": [USER]}, {"output": "A."},
                                                     **{"gen_ai.operation.name": "chat"})), scope="langsmith")  # fmt: skip
    (reading,) = inspect_traces([trace], [], []).traces
    assert [s.attributes_of for s in reading.spans] == ["LangSmith"]
