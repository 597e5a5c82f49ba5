"""What OpenInference-instrumented frameworks put inside the generic attributes, read by
``auditor_otel.conventions.openinference_shapes``: the edges the framework fixtures do not reach."""

from __future__ import annotations

import json

from auditor_otel.conventions.openinference_shapes import (
    adapter_reply,
    is_event_span,
    joined_stream,
    parameters_as_arguments,
    reply_from_output,
    repr_messages,
    unwrap_arguments,
)

from auditor.trace import Message


def test_a_call_envelope_is_unwrapped_only_when_it_is_one() -> None:
    assert unwrap_arguments({"args": [], "sanitize_inputs_outputs": True, "kwargs": {"city": "Paris"}}) == {
        "city": "Paris"
    }
    assert unwrap_arguments({"input": {"sku": "K10"}, "options": None}) == {"sku": "K10"}
    # Positional arguments too, or a tool whose own parameter is named input: kept as written.
    assert unwrap_arguments({"args": ["x"], "kwargs": {"a": 1}}) == {"args": ["x"], "kwargs": {"a": 1}}
    assert unwrap_arguments({"input": {"q": 1}, "limit": 3}) == {"input": {"q": 1}, "limit": 3}


def test_a_streamed_reply_is_joined_but_alternatives_with_tool_calls_are_not() -> None:
    chunks = [Message(role="assistant", content=c) for c in ("", "You ", "can ", "return.")]
    assert [m.content for m in joined_stream(chunks)] == ["You can return."]
    one = [Message(role="assistant", content="Hello.")]
    assert joined_stream(one) == one


def test_a_chat_completion_in_output_value_is_the_reply() -> None:
    completion = {
        "object": "chat.completion",
        "choices": [{"message": {"role": "assistant", "content": "It is 14 °C.", "tool_calls": None}}],
    }
    assert [m.content for m in reply_from_output(json.dumps(completion))] == ["It is 14 °C."]
    # JSON that is no reply (a framework's own object) gives nothing, not its text.
    assert reply_from_output(json.dumps({"messages": ["ChatMessage(...)"]})) == []


def test_streamed_chunks_assemble_the_tool_call_from_fragments() -> None:
    def chunk(delta: dict[str, object]) -> str:
        return json.dumps({"object": "chat.completion.chunk", "choices": [{"delta": delta}]})

    value = json.dumps(
        [
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "call_1", "function": {"name": "get_weather", "arguments": '{"ci'}}
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]}),
        ]
    )
    (message,) = reply_from_output(value)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_1", "get_weather", {"city": "Oslo"})
    ]


def test_haystack_reprs_are_parsed_never_evaluated() -> None:
    tool = (
        "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='{\"city\": \"Oslo\"}', "
        "origin=ToolCall(tool_name='get_weather', arguments={'city': 'Oslo'}, id='call_9', extra=None), "
        "error=False)], _name=None, _meta={})"
    )
    (message,) = repr_messages(json.dumps({"messages": [tool]}))
    assert (message.role, message.content, message.tool_call_id) == ("tool", '{"city": "Oslo"}', "call_9")
    hostile = (
        "ChatMessage(_role=__import__('os').system('false'), _content=[TextContent(text=open('x').read())])"
    )
    (parsed,) = repr_messages(json.dumps({"messages": [hostile]}))
    assert (parsed.role, parsed.content) == ("unknown", "")


def test_dspy_fields_give_the_tool_call_or_the_answer() -> None:
    step = '[[ ## next_thought ## ]]\nCall it.\n\n[[ ## next_tool_name ## ]]\nget_stock\n\n[[ ## next_tool_args ## ]]\n{"sku": "K10"}\n\n[[ ## completed ## ]]'
    call = adapter_reply(Message(role="assistant", content=step)).tool_calls[0]
    assert (call.name, call.arguments) == ("get_stock", {"sku": "K10"})
    final = "[[ ## reasoning ## ]]\nBecause.\n\n[[ ## summary ## ]]\nIn stock.\n\n[[ ## completed ## ]]"
    assert adapter_reply(Message(role="assistant", content=final)).content == "In stock."
    plain = Message(role="assistant", content="[[ ## answer ## ]] without the closing marker")
    assert adapter_reply(plain) == plain


def test_beeai_event_spans_and_parameters() -> None:
    assert is_event_span({"target": "tool.custom.get_weather.success", "name": "success"})
    assert not is_event_span({"target": "tool.custom.get_weather.success", "name": "get_weather"})
    assert parameters_as_arguments({"tool.parameters": '{"city": "Paris"}'}) == {"city": "Paris"}
    # A JSON schema (the spec's meaning), or a span that has input.value, is not the call's input.
    assert parameters_as_arguments({"tool.parameters": '{"type": "object", "properties": {}}'}) is None
    assert parameters_as_arguments({"tool.parameters": '{"a": 1}', "input.value": "{}"}) is None
