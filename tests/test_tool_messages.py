"""Tool calls written as text and tool results without call ids (issue 27 item 8: JetBrains Koog).

Koog's Langfuse exporter flattens each chat span into ``gen_ai.prompt.N.role`` / ``.content``:
an assistant's tool calls become the OpenAI-style list as JSON *text* (role ``tool``), and tool
results lose their ``tool_call_id``. The calls must read as calls (never an answer) and each
result must be paired with the call it answers, by order and, where the result names its tool,
by name; on the Koog fixture the pairs must be the ids Koog's own ``execute_tool`` spans carry.
"""

from __future__ import annotations

import json
from pathlib import Path

from auditor_otel.conventions.toolmessages import as_call_message, calls_in_text, pair_results

from auditor.evidence import EvidenceKind, reconstruct
from auditor.trace import Message, SpanKind, ToolCall, read_traces
from tests.conftest import FIXTURES

KOOG = FIXTURES / "frameworks" / "koog" / "langfuse.otlp.jsonl"
CALLS = '[{"function":{"name":"get_weather","arguments":"{\\"city\\": \\"Paris\\"}"},"id":"c1","type":"function"}]'


def test_tool_call_json_text_is_a_tool_call_message() -> None:
    message = as_call_message(Message(role="tool", content=CALLS))
    assert message.role == "assistant"
    assert message.content == ""
    assert message.tool_calls == (ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),)


def test_json_that_is_not_tool_calls_stays_text() -> None:
    for text in ('{"city": "Paris", "conditions": "light rain"}', '[{"name": "x"}]', "[1, 2]", "plain"):
        assert calls_in_text(text) == ()
    user = Message(role="user", content=CALLS)  # the user's own words are never rewritten
    assert as_call_message(user) is user


def test_results_without_ids_pair_by_order_then_by_name() -> None:
    calls = Message(
        role="assistant",
        tool_calls=(ToolCall(id="a", name="search_orders"), ToolCall(id="b", name="get_weather")),
    )
    by_order = pair_results([calls, Message(role="tool", content="r1"), Message(role="tool", content="r2")])
    assert [(m.tool_call_id, m.name) for m in by_order[1:]] == [("a", "search_orders"), ("b", "get_weather")]
    by_name = pair_results(
        [calls, Message(role="tool", name="get_weather", content="w"), Message(role="tool", content="o")]
    )
    assert [m.tool_call_id for m in by_name[1:]] == ["b", "a"]
    answered = pair_results(
        [calls, Message(role="tool", tool_call_id="a", content="r1"), Message(role="tool")]
    )
    assert answered[2].tool_call_id == "b"


def test_koog_prompt_pairs_each_result_with_the_call_koog_made() -> None:
    traces = read_traces([KOOG]).traces
    two_cities = next(t for t in traces if any("Oslo" in str(s.attributes) for s in t.spans))
    tool_ids = {
        s.tool.result: s.tool.call_id
        for s in two_cities.spans
        if s.kind is SpanKind.TOOL and s.tool is not None
    }
    final = max((s for s in two_cities.spans if s.kind is SpanKind.LLM), key=lambda s: s.start)
    roles = [m.role for m in final.input_messages]
    assert roles == ["system", "user", "assistant", "assistant", "tool", "tool"]
    assert [c.arguments for m in final.input_messages for c in m.tool_calls] == [
        {"city": "Paris"},
        {"city": "Oslo"},
    ]
    results = final.input_messages[4:]
    assert [m.tool_call_id for m in results] == [tool_ids[m.content] for m in results]
    assert all(m.name == "get_weather" for m in results)


def test_koog_chat_spans_alone_still_give_the_tool_results(tmp_path: Path) -> None:
    """Without the execute_tool spans (a backend that keeps only generations), the id-less results
    in the prompts are the evidence, each credited to the call it answers."""
    kept = tmp_path / "chat_only.otlp.jsonl"
    lines = []
    for line in KOOG.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        for rs in data["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                ss["spans"] = [s for s in ss["spans"] if not s["name"].startswith("tool.")]
        lines.append(json.dumps(data))
    kept.write_text("\n".join(lines) + "\n", encoding="utf-8")
    answers = reconstruct(read_traces([kept]).traces)
    compare = next(a for a in answers if "Oslo" in a.text)
    tools = [e for e in compare.evidence if e.kind is EvidenceKind.TOOL_RESULT]
    assert [(t.name, t.metadata["arguments"]) for t in tools] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert "light rain" in tools[0].text and "snow" in tools[1].text
    hops = next(a for a in answers if "ACME" in a.text)
    assert [e.hop_path for e in hops.evidence if e.kind is EvidenceKind.TOOL_RESULT][-1][0].startswith(
        "search_orders"
    )


def test_mcp_results_read_as_their_text() -> None:
    """A result that came over MCP (a text block, a block list, a CallToolResult) is its text; an
    isError result or a non-text block keeps the result as written."""
    from auditor_otel.conventions.mcp import result_text

    block = '{"type": "text", "text": "{\\"error\\": \\"down\\"}"}'
    assert result_text(block) == '{"error": "down"}'
    assert result_text('[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]') == "a\nb"
    assert result_text('{"content": [{"type": "text", "text": "ok"}], "isError": false}') == "ok"
    failed = '{"content": [{"type": "text", "text": "boom"}], "isError": true}'
    assert result_text(failed) == failed
    image = '[{"type": "image", "data": "AAAA", "mimeType": "image/png"}]'
    assert result_text(image) == image
    plain = '{"city": "Paris", "text": "x"}'
    assert result_text(plain) == plain
