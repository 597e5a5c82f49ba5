"""MLflow Tracing's span attributes, each shape its autologgers write (mlflow-tracing 3.17's
``mlflow/openai``, ``mlflow/anthropic`` and ``mlflow/langchain`` autolog): ``mlflow.spanType``,
``mlflow.spanInputs`` and ``mlflow.spanOutputs``, every value JSON-encoded once more. The real
package's spans, from a real agent and a real MLflow server, are read in tests/test_source_mlflow.py.
"""

from __future__ import annotations

import json
from typing import Any

from otel_samples.otlp import line, one_trace, parse, span

from auditor.evidence import EvidenceKind, reconstruct
from auditor.trace import SpanKind, ToolCall

SYSTEM = "Answer from tools."
QUESTION = "Weather in Paris?"
WEATHER = '{"city": "Paris", "conditions": "light rain"}'
ANSWER = "Light rain in Paris."


def mlflow_attrs(span_type: str, inputs: Any, outputs: Any, **extra: Any) -> dict[str, Any]:
    """The attributes MLflow sets, each value as JSON text (``mlflow.spanType`` is ``"\\"TOOL\\""``)."""
    return {
        "mlflow.traceRequestId": json.dumps("tr-0af7651916cd43dd8448eb211c80319c"),
        "mlflow.spanType": json.dumps(span_type),
        "mlflow.spanInputs": json.dumps(inputs),
        "mlflow.spanOutputs": json.dumps(outputs),
        **{k: json.dumps(v) for k, v in extra.items()},
    }


def tool_span(n: int, start: float) -> dict[str, Any]:
    # ``@mlflow.trace`` on ``get_weather(city)``: the parameters by name; the returned text, as JSON.
    return span(
        n,
        "get_weather",
        parent=1,
        start=start,
        end=start + 1,
        attrs=mlflow_attrs("TOOL", {"city": "Paris"}, WEATHER),
    )


def agent_span(end: float) -> dict[str, Any]:
    return span(1, "agent", end=end, attrs=mlflow_attrs("AGENT", {"question": QUESTION}, ANSWER))


def _evidence(trace: Any) -> tuple[str | None, str, list[tuple[EvidenceKind, str]]]:
    [answer] = reconstruct([trace])
    kinds = [(e.kind, e.text.split("\n(called as ")[0]) for e in answer.evidence]  # the call follows
    return answer.question, answer.text, kinds


def test_openai_chat_completions_with_a_tool() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    asked = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    first = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]
    }
    then = [
        *asked,
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": WEATHER},
    ]
    last = {"choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}}]}
    trace = one_trace(
        agent_span(10),
        span(
            2,
            "Completions",
            parent=1,
            end=1,
            attrs=mlflow_attrs(
                "CHAT_MODEL", {"model": "gpt-x", "messages": asked}, first, **{"mlflow.llm.model": "gpt-x"}
            ),
        ),
        tool_span(3, 2),
        span(
            4,
            "Completions",
            parent=1,
            start=4,
            end=5,
            attrs=mlflow_attrs("CHAT_MODEL", {"model": "gpt-x", "messages": then}, last),
        ),
        scope="mlflow.tracing.provider",
    )
    assert trace.convention == "mlflow"
    spans = sorted(trace.spans, key=lambda s: s.span_id)
    assert [s.kind for s in spans] == [SpanKind.AGENT, SpanKind.LLM, SpanKind.TOOL, SpanKind.LLM]
    assert spans[1].model == spans[3].model == "gpt-x"
    assert spans[1].output_messages[0].tool_calls == (
        ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"}),
    )
    tool = spans[2].tool
    assert tool is not None and (tool.name, tool.call_id, tool.arguments, tool.result) == (
        "get_weather",
        "call_1",  # MLflow's tool span has none: matched to the model's call by name and arguments
        {"city": "Paris"},
        WEATHER,  # the returned text, not its JSON encoding
    )
    question, text, kinds = _evidence(trace)
    assert (question, text) == (QUESTION, ANSWER)
    assert (EvidenceKind.TOOL_RESULT, WEATHER) in kinds and (EvidenceKind.SYSTEM_PROMPT, SYSTEM) in kinds


def test_openai_responses_api() -> None:
    call = {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    first = {"output": [call]}
    then = [
        {"role": "user", "content": QUESTION},
        call,
        {"type": "function_call_output", "call_id": "call_1", "output": WEATHER},
    ]
    last = {
        "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ANSWER}]}
        ]
    }
    trace = one_trace(
        agent_span(10),
        span(
            2,
            "Responses",
            parent=1,
            end=1,
            attrs=mlflow_attrs("CHAT_MODEL", {"instructions": SYSTEM, "input": QUESTION}, first),
        ),
        tool_span(3, 2),
        span(
            4,
            "Responses",
            parent=1,
            start=4,
            end=5,
            attrs=mlflow_attrs("CHAT_MODEL", {"instructions": SYSTEM, "input": then}, last),
        ),
    )
    spans = sorted(trace.spans, key=lambda s: s.span_id)
    assert spans[1].output_messages[0].tool_calls == (
        ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"}),
    )
    assert [(m.role, m.content, m.tool_call_id) for m in spans[3].input_messages] == [
        ("system", SYSTEM, None),
        ("user", QUESTION, None),
        ("assistant", "", None),
        ("tool", WEATHER, "call_1"),
    ]
    question, text, kinds = _evidence(trace)
    assert (question, text) == (QUESTION, ANSWER)
    assert (EvidenceKind.TOOL_RESULT, WEATHER) in kinds and (EvidenceKind.SYSTEM_PROMPT, SYSTEM) in kinds


def test_anthropic_messages_with_content_blocks() -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    asked = [{"role": "user", "content": QUESTION}]
    first = {"type": "message", "role": "assistant", "content": [use]}
    then = [
        *asked,
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": WEATHER}]},
    ]
    last = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": ANSWER}]}
    trace = one_trace(
        agent_span(10),
        span(
            2,
            "Messages.create",
            parent=1,
            end=1,
            attrs=mlflow_attrs("CHAT_MODEL", {"system": SYSTEM, "messages": asked}, first),
        ),
        tool_span(3, 2),
        span(
            4,
            "Messages.create",
            parent=1,
            start=4,
            end=5,
            attrs=mlflow_attrs("CHAT_MODEL", {"system": SYSTEM, "messages": then}, last),
        ),
    )
    spans = sorted(trace.spans, key=lambda s: s.span_id)
    assert spans[1].output_messages[0].tool_calls == (
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
    )
    question, text, kinds = _evidence(trace)
    assert (question, text) == (QUESTION, ANSWER)
    assert (EvidenceKind.TOOL_RESULT, WEATHER) in kinds and (EvidenceKind.SYSTEM_PROMPT, SYSTEM) in kinds


def test_a_retriever_and_mlflow_2_chat_messages() -> None:
    docs = [
        {
            "page_content": "Returns are accepted within 30 days.",
            "metadata": {"doc_uri": "kb/returns"},
            "id": "KB-7",
        },
        {"metadata": {}},  # no text: dropped, with a note
    ]
    reply = "You can return it within 30 days."
    conversation = [
        {"role": "user", "content": "How long for returns?"},
        {"role": "assistant", "content": reply},
    ]
    spans = [
        span(1, "chain", end=10, attrs=mlflow_attrs("CHAIN", {"question": "How long for returns?"}, reply)),
        span(2, "retrieve", parent=1, end=1, attrs=mlflow_attrs("RETRIEVER", "returns", docs)),
        # MLflow 2.x: the request as the function's inputs, the whole conversation in mlflow.chat.messages.
        span(
            3,
            "ChatModel",
            parent=1,
            start=2,
            end=3,
            attrs=mlflow_attrs("LLM", {"prompt": "..."}, reply, **{"mlflow.chat.messages": conversation}),
        ),
    ]
    [trace], problems = parse(line(spans) + "\n")
    retriever = next(s for s in trace.spans if s.kind == SpanKind.RETRIEVER)
    assert retriever.query == "returns"
    assert [(d.id, d.text) for d in retriever.documents] == [("KB-7", "Returns are accepted within 30 days.")]
    assert any("no page_content" in p.reason for p in problems)
    [answer] = reconstruct([trace])
    assert (answer.question, answer.text) == ("How long for returns?", reply)
    assert (EvidenceKind.RETRIEVED_DOCUMENT, "Returns are accepted within 30 days.") in [
        (e.kind, e.text) for e in answer.evidence
    ]


def test_values_already_decoded_read_the_same() -> None:
    """Read back through MLflow's client the values are decoded (``Span.attributes``); a structured
    OTLP value (a kvlist) and a bare span type are read as the JSON text would be."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    asked = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": WEATHER},
    ]
    out = {"choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}}]}
    decoded = {
        "mlflow.spanType": "CHAT_MODEL",
        "mlflow.spanInputs": {"messages": asked},
        "mlflow.spanOutputs": out,
    }
    trace = one_trace(
        span(
            1,
            "get_weather",
            end=1,
            attrs={
                "mlflow.spanType": "TOOL",
                "mlflow.spanInputs": {"city": "Paris"},
                "mlflow.spanOutputs": WEATHER,
            },
        ),
        span(2, "Completions", start=2, end=3, attrs=decoded),
    )
    question, text, kinds = _evidence(trace)
    assert (question, text) == (QUESTION, ANSWER)
    assert (EvidenceKind.TOOL_RESULT, WEATHER) in kinds


def test_a_model_call_mlflow_received_over_otlp_keeps_its_genai_messages() -> None:
    """MLflow typed the span; its content is in the GenAI attributes it came with."""
    parts_in = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    parts_out = [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]
    attrs = {
        "mlflow.spanType": json.dumps("LLM"),
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(parts_in),
        "gen_ai.output.messages": json.dumps(parts_out),
    }
    trace = one_trace(span(1, "chat gpt-x", end=1, attrs=attrs))
    assert trace.convention == "mlflow"
    [answer] = reconstruct([trace])
    assert (answer.question, answer.text) == (QUESTION, ANSWER)
