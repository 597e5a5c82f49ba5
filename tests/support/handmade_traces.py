"""Hand-written OTLP JSON fixtures for conventions no installed instrumentation emits.

Instrumentations lag the spec, so these three traces are typed by hand (here, as Python data, so the
ids, timestamps and parent links stay consistent) and written to ``tests/fixtures/handmade/``:

- ``genai_current.otlp.jsonl``       current OTel GenAI semconv (invoke_agent / chat / execute_tool /
                                      retrieval spans, JSON-string AND structured AnyValue content)
- ``genai_events.otlp.jsonl``        v1.26-style span events gen_ai.content.prompt / .completion
- ``openllmetry_indexed.otlp.jsonl`` OpenLLMetry <= 0.54 indexed gen_ai.prompt.N.* attributes

Each comes with ``<name>.expected.json`` (same schema as the generated scenarios). Output is fully
deterministic.

Usage::

    .venv/bin/python tests/support/handmade_traces.py --out tests/fixtures/handmade
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

T0 = 1_795_000_000_000_000_000  # 2026-11-18T... fixed base time in ns
MS = 1_000_000

# ---------------------------------------------------------------- AnyValue helpers


def av(value: Any, structured: bool = True) -> dict[str, Any]:
    """Python value -> OTLP JSON AnyValue (structured kvlist/array for dicts and lists)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, dict):
        if not structured:
            return {"stringValue": json.dumps(value, ensure_ascii=False)}
        return {"kvlistValue": {"values": [{"key": k, "value": av(v)} for k, v in value.items()]}}
    if isinstance(value, list | tuple):
        if not structured:
            return {"stringValue": json.dumps(value, ensure_ascii=False)}
        return {"arrayValue": {"values": [av(v) for v in value]}}
    raise TypeError(type(value))


def js(value: Any) -> dict[str, Any]:
    """A JSON-string AnyValue (what Python emitters write)."""
    return {"stringValue": json.dumps(value, ensure_ascii=False)}


def flat(d: dict[str, Any]) -> list[dict[str, Any]]:
    """Attributes from a dict with dotted keys."""
    out = []
    for k, value in d.items():
        v = (
            value
            if isinstance(value, dict) and len(value) == 1 and next(iter(value)).endswith("Value")
            else av(value)
        )
        out.append({"key": k, "value": v})
    return out


def span(
    trace_id: str,
    span_id: str,
    parent: str | None,
    name: str,
    kind: int,
    start_ms: int,
    end_ms: int,
    attributes: list[dict[str, Any]],
    events: list[dict[str, Any]] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    s: dict[str, Any] = {"traceId": trace_id, "spanId": span_id}
    if parent:
        s["parentSpanId"] = parent
    s.update(
        {
            "flags": 256,
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(T0 + start_ms * MS),
            "endTimeUnixNano": str(T0 + end_ms * MS),
            "attributes": attributes,
        }
    )
    if events:
        s["events"] = events
    s["status"] = status or {}
    return s


def event(name: str, at_ms: int, attributes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"timeUnixNano": str(T0 + at_ms * MS), "name": name, "attributes": attributes}


def to_lines(
    spans: list[dict[str, Any]], resource: dict[str, Any], scope: dict[str, Any], batch: int = 2
) -> str:
    """Spans -> OTLP JSON lines, batched in end-time order (children before parents)."""
    ordered = sorted(spans, key=lambda s: int(s["endTimeUnixNano"]))
    lines = []
    for i in range(0, len(ordered), batch):
        req = {
            "resourceSpans": [
                {
                    "resource": {"attributes": flat(resource)},
                    "scopeSpans": [{"scope": scope, "spans": ordered[i : i + batch]}],
                }
            ]
        }
        lines.append(json.dumps(req, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- shared data (same as gen_traces)

ORDER_10042 = {
    "order_id": "10042",
    "customer": "ACME",
    "item": "X200 Blender",
    "total": "$240.00",
    "status": "delivered",
    "delivered_at": "2026-03-04",
}
REFUND_10042 = {
    "refund_id": "RF-311",
    "order_id": "10042",
    "amount": "$80.00",
    "status": "approved",
    "approved_at": "2026-03-12",
}
ORDER_10057 = {
    "order_id": "10057",
    "customer": "Globex",
    "item": "K10 Kettle",
    "total": "$35.50",
    "status": "shipped",
    "carrier": "DHL",
    "tracking": "JD014600006281",
}
KB_1_TEXT = (
    "Returns policy: items can be returned within 30 days of delivery for a full refund. "
    "Refunds are issued to the original payment method."
)
KB_1_META = {
    "title": "Returns policy",
    "source": "https://support.example.com/kb/returns-policy",
    "status": "current",
    "updated_at": "2026-01-15",
    "collection": "support-articles",
}
SYSTEM = "You are Ada, Example Appliances' support agent. Answer only from tool results."

# ---------------------------------------------------------------- 1. current GenAI semconv


def genai_current() -> tuple[str, dict[str, Any]]:
    tid = "4bf92f3577b34da6a3ce929d0e0e4736"
    agent, chat1, tool1, tool2, retr, chat2 = (
        "a1b2c3d4e5f60001",
        "a1b2c3d4e5f60002",
        "a1b2c3d4e5f60003",
        "a1b2c3d4e5f60004",
        "a1b2c3d4e5f60005",
        "a1b2c3d4e5f60006",
    )
    conv = "conv-7f3a9c"
    question = "Has order 10042 been delivered, and can I still return it?"
    answer = (
        "Order 10042 was delivered on 2026-03-04. You can return items within 30 days of "
        "delivery for a full refund."
    )
    kb_result = f"[KB-1] {KB_1_TEXT}"
    json.dumps(ORDER_10042)
    tool_calls = [
        {"type": "tool_call", "id": "call_go_1", "name": "get_order", "arguments": {"order_id": "10042"}},
        {
            "type": "tool_call",
            "id": "call_kb_1",
            "name": "search_kb",
            "arguments": {"query": "returns policy"},
        },
    ]
    in1 = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
    out1 = [{"role": "assistant", "parts": tool_calls, "finish_reason": "tool_call"}]
    in2 = [
        *in1,
        {"role": "assistant", "parts": tool_calls},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_go_1", "response": ORDER_10042}],
        },
        # registry-example variant: "result" instead of "response", id with a leading space
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": " call_kb_1", "result": kb_result}]},
    ]
    out2 = [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]
    sysinstr = [{"type": "text", "content": SYSTEM}]
    tool_defs = [
        {
            "type": "function",
            "name": "get_order",
            "description": "Get one order by its order id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
        {
            "type": "function",
            "name": "search_kb",
            "description": "Search the support knowledge base.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    ]
    common = {"gen_ai.provider.name": "openai", "gen_ai.conversation.id": conv}
    spans = [
        span(
            tid,
            agent,
            None,
            "invoke_agent support_agent",
            1,
            0,
            2400,
            flat(
                {
                    "gen_ai.operation.name": "invoke_agent",
                    **common,
                    "gen_ai.agent.name": "support_agent",
                    "gen_ai.agent.id": "asst_support_01",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.system_instructions": js(sysinstr),
                    "gen_ai.input.messages": js(in1),
                    "gen_ai.output.messages": js(out2),
                }
            ),
        ),
        span(
            tid,
            chat1,
            agent,
            "chat gpt-4o-mini",
            3,
            10,
            900,
            flat(
                {
                    "gen_ai.operation.name": "chat",
                    **common,
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                    "gen_ai.response.id": "chatcmpl-hm-001",
                    "gen_ai.response.finish_reasons": ["tool_calls"],
                    "gen_ai.usage.input_tokens": 96,
                    "gen_ai.usage.output_tokens": 41,
                    "gen_ai.system_instructions": js(sysinstr),
                    "gen_ai.tool.definitions": js(tool_defs),
                    "gen_ai.input.messages": js(in1),
                    "gen_ai.output.messages": js(out1),
                }
            ),
        ),
        span(
            tid,
            tool1,
            agent,
            "execute_tool get_order",
            1,
            910,
            1010,
            flat(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.tool.name": "get_order",
                    "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.id": "call_go_1",
                    "gen_ai.tool.description": "Get one order by its order id.",
                    # structured kvlistValue, as Go/Java emitters write it
                    "gen_ai.tool.call.arguments": av({"order_id": "10042"}),
                    "gen_ai.tool.call.result": js(ORDER_10042),
                }
            ),
            status={"code": 1},
        ),
        span(
            tid,
            tool2,
            agent,
            "execute_tool search_kb",
            1,
            912,
            1200,
            flat(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.tool.name": "search_kb",
                    "gen_ai.tool.type": "datastore",
                    "gen_ai.tool.call.id": "call_kb_1",
                    "gen_ai.tool.call.arguments": js({"query": "returns policy"}),
                    "gen_ai.tool.call.result": {"stringValue": kb_result},
                }
            ),
        ),
        span(
            tid,
            retr,
            tool2,
            "retrieval kb-support-articles",
            3,
            920,
            1180,
            flat(
                {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.provider.name": "pgvector",
                    "gen_ai.data_source.id": "kb-support-articles",
                    "gen_ai.request.top_k": 2,
                    "gen_ai.retrieval.query.text": "returns policy",
                    # structured arrayValue of kvlistValue documents
                    "gen_ai.retrieval.documents": av(
                        [{"id": "KB-1", "score": 0.91, "content": KB_1_TEXT, "metadata": KB_1_META}]
                    ),
                }
            ),
        ),
        span(
            tid,
            chat2,
            agent,
            "chat gpt-4o-mini",
            3,
            1210,
            2390,
            flat(
                {
                    "gen_ai.operation.name": "chat",
                    **common,
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                    "gen_ai.response.id": "chatcmpl-hm-002",
                    "gen_ai.response.finish_reasons": ["stop"],
                    "gen_ai.usage.input_tokens": 188,
                    "gen_ai.usage.output_tokens": 29,
                    "gen_ai.system_instructions": js(sysinstr),
                    "gen_ai.tool.definitions": js(tool_defs),
                    "gen_ai.input.messages": js(in2),
                    "gen_ai.output.messages": js(out2),
                }
            ),
        ),
    ]
    resource = {
        "service.name": "support-agent-go",
        "service.version": "1.4.0",
        "telemetry.sdk.language": "go",
        "telemetry.sdk.name": "opentelemetry",
        "telemetry.sdk.version": "1.38.0",
    }
    scope = {"name": "example.com/support/agent", "version": "1.4.0"}
    expected = {
        "scenario": "genai_current",
        "kind": "handmade",
        "session_id": conv,
        "model_name": "gpt-4o-mini",
        "description": "Current OTel GenAI semconv: invoke_agent, chat, parallel execute_tool and a "
        "retrieval span under search_kb; some content attributes are structured AnyValues.",
        "answers": [
            {
                "question": question,
                "text": answer,
                "refusal": False,
                "tool_results": [
                    {
                        "name": "get_order",
                        "tool_call_id": "call_go_1",
                        "args": {"order_id": "10042"},
                        "contains": "2026-03-04",
                    },
                    {
                        "name": "search_kb",
                        "tool_call_id": "call_kb_1",
                        "args": {"query": "returns policy"},
                        "contains": "KB-1",
                    },
                ],
                "documents": [
                    {
                        "retriever": "kb-support-articles",
                        "id": "KB-1",
                        "contains": KB_1_TEXT,
                        "metadata": KB_1_META,
                    }
                ],
                "not_visible": [],
                "hops": [],
                "notes": "Structured values: execute_tool get_order gen_ai.tool.call.arguments is a "
                "kvlistValue and gen_ai.retrieval.documents is an arrayValue of kvlistValues "
                "(score is a doubleValue). In the second chat span the search_kb "
                "tool_call_response uses 'result' instead of 'response' and the id ' call_kb_1' "
                "has a leading space (registry-example variant); the get_order response is a "
                "JSON object, not a string. The retriever name is the data source id.",
            }
        ],
    }
    return to_lines(spans, resource, scope), expected


# ---------------------------------------------------------------- 2. v1.26 span events


def genai_events() -> tuple[str, dict[str, Any]]:
    tid = "0af7651916cd43dd8448eb211c80319c"
    root, chat1, tool, chat2 = "b7ad6b7169203331", "b7ad6b7169203332", "b7ad6b7169203333", "b7ad6b7169203334"
    question = "How much was refunded on order 10042?"
    answer = "Order 10042 was refunded $80.00 (refund RF-311, approved on 2026-03-12)."
    call = {
        "id": "call_rf_1",
        "type": "function",
        "function": {"name": "get_refund", "arguments": json.dumps({"order_id": "10042"})},
    }
    prompt1 = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    completion1 = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    prompt2 = [
        *prompt1,
        *completion1,
        {"role": "tool", "tool_call_id": "call_rf_1", "content": json.dumps(REFUND_10042)},
    ]
    completion2 = [{"role": "assistant", "content": answer}]

    def chat_attrs(resp_id: str, finish: str, pt: int, ct: int) -> list[dict[str, Any]]:
        return flat(
            {
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.request.temperature": 0.0,
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "gen_ai.response.id": resp_id,
                "gen_ai.response.finish_reasons": [finish],
                "gen_ai.usage.prompt_tokens": pt,
                "gen_ai.usage.completion_tokens": ct,
                "session.id": "sess-events-1",
            }
        )

    spans = [
        span(
            tid,
            root,
            None,
            "POST /chat",
            2,
            0,
            1500,
            flat(
                {
                    "http.request.method": "POST",
                    "http.route": "/chat",
                    "http.response.status_code": 200,
                    "session.id": "sess-events-1",
                }
            ),
        ),
        span(
            tid,
            chat1,
            root,
            "chat gpt-4o-mini",
            3,
            5,
            600,
            chat_attrs("chatcmpl-ev-001", "tool_calls", 70, 18),
            events=[
                event("gen_ai.content.prompt", 5, flat({"gen_ai.prompt": js(prompt1)})),
                event("gen_ai.content.completion", 600, flat({"gen_ai.completion": js(completion1)})),
            ],
        ),
        span(
            tid,
            tool,
            root,
            "get_refund",
            1,
            610,
            700,
            flat({"code.function": "get_refund", "app.order_id": "10042"}),
        ),
        span(
            tid,
            chat2,
            root,
            "chat gpt-4o-mini",
            3,
            710,
            1490,
            chat_attrs("chatcmpl-ev-002", "stop", 131, 24),
            events=[
                event("gen_ai.content.prompt", 710, flat({"gen_ai.prompt": js(prompt2)})),
                event("gen_ai.content.completion", 1490, flat({"gen_ai.completion": js(completion2)})),
            ],
        ),
    ]
    resource = {"service.name": "support-agent-legacy", "telemetry.sdk.language": "python"}
    scope = {"name": "opentelemetry.instrumentation.openai", "version": "0.48b0"}
    expected = {
        "scenario": "genai_events",
        "kind": "handmade",
        "session_id": "sess-events-1",
        "model_name": "gpt-4o-mini",
        "description": "v1.26-style GenAI span events gen_ai.content.prompt/completion carrying "
        "OpenAI-format JSON in gen_ai.prompt/gen_ai.completion.",
        "answers": [
            {
                "question": question,
                "text": answer,
                "refusal": False,
                "tool_results": [
                    {
                        "name": "get_refund",
                        "tool_call_id": "call_rf_1",
                        "args": {"order_id": "10042"},
                        "contains": "RF-311",
                    }
                ],
                "documents": [],
                "not_visible": [],
                "hops": [],
                "notes": "The tool span 'get_refund' has no gen_ai attributes and no result: the tool "
                "result exists only as the role=tool message (tool_call_id call_rf_1) in the "
                "second chat span's gen_ai.content.prompt event. Session id is 'session.id'.",
            }
        ],
    }
    return to_lines(spans, resource, scope), expected


# ---------------------------------------------------------------- 3. OpenLLMetry <= 0.54 indexed


def openllmetry_indexed() -> tuple[str, dict[str, Any]]:
    tid = "5b8efff798038103d269b633813fc60c"
    wf, task1, chat1, tool, task2, chat2 = (
        "eee19b7ec3c1b170",
        "eee19b7ec3c1b171",
        "eee19b7ec3c1b172",
        "eee19b7ec3c1b173",
        "eee19b7ec3c1b174",
        "eee19b7ec3c1b175",
    )
    sess = "sess-indexed-1"
    question = "Where is order 10057?"
    answer = "Order 10057 has shipped with DHL; the tracking number is JD014600006281."
    order_json = json.dumps(ORDER_10057)
    assoc = {
        "traceloop.association.properties.session_id": sess,
        "traceloop.association.properties.user_id": "user-0042",
        "traceloop.workflow.name": "support_agent",
    }
    fn = {
        "llm.request.functions.0.name": "get_order",
        "llm.request.functions.0.description": "Get one order by its order id.",
        "llm.request.functions.0.parameters": json.dumps(
            {"properties": {"order_id": {"type": "string"}}, "required": ["order_id"], "type": "object"}
        ),
    }
    base_chat = {
        "traceloop.span.kind": "llm",
        "gen_ai.system": "Langchain",
        "llm.request.type": "chat",
        "gen_ai.operation.name": "llm_request",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.request.temperature": 0.0,
        **assoc,
        **fn,
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": question,
    }
    c1 = {
        **base_chat,
        "traceloop.entity.path": "agent",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "",
        "gen_ai.completion.0.finish_reason": "tool_calls",
        "gen_ai.completion.0.tool_calls.0.id": "call_go_7",
        "gen_ai.completion.0.tool_calls.0.name": "get_order",
        "gen_ai.completion.0.tool_calls.0.arguments": json.dumps({"order_id": "10057"}),
        "gen_ai.usage.prompt_tokens": 64,
        "gen_ai.usage.completion_tokens": 17,
        "llm.usage.total_tokens": 81,
    }
    c2 = {
        **base_chat,
        "traceloop.entity.path": "agent",
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.content": "",
        "gen_ai.prompt.2.tool_calls.0.id": "call_go_7",
        "gen_ai.prompt.2.tool_calls.0.name": "get_order",
        "gen_ai.prompt.2.tool_calls.0.arguments": json.dumps({"order_id": "10057"}),
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.content": order_json,
        "gen_ai.prompt.3.tool_call_id": "call_go_7",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": answer,
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.usage.prompt_tokens": 120,
        "gen_ai.usage.completion_tokens": 19,
        "llm.usage.total_tokens": 139,
    }
    tool_msg = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "ToolMessage"],
        "kwargs": {
            "content": order_json,
            "type": "tool",
            "name": "get_order",
            "tool_call_id": "call_go_7",
            "status": "success",
        },
    }
    wf_in = {
        "inputs": {"messages": [["user", question]]},
        "tags": [],
        "metadata": {"session_id": sess},
        "kwargs": {"name": "support_agent"},
    }
    spans = [
        span(
            tid,
            wf,
            None,
            "support_agent.workflow",
            1,
            0,
            1800,
            flat(
                {
                    "traceloop.span.kind": "workflow",
                    "traceloop.entity.name": "support_agent",
                    "traceloop.entity.path": "",
                    **assoc,
                    "traceloop.entity.input": json.dumps(wf_in),
                    "traceloop.entity.output": json.dumps(
                        {
                            "outputs": {
                                "messages": [
                                    {
                                        "lc": 1,
                                        "type": "constructor",
                                        "id": ["langchain", "schema", "messages", "AIMessage"],
                                        "kwargs": {"content": answer, "type": "ai"},
                                    }
                                ]
                            },
                            "kwargs": {"tags": []},
                        }
                    ),
                }
            ),
        ),
        span(
            tid,
            task1,
            wf,
            "agent.task",
            1,
            5,
            700,
            flat(
                {
                    "traceloop.span.kind": "task",
                    "traceloop.entity.name": "agent",
                    **assoc,
                    "traceloop.entity.input": json.dumps({"inputs": {"messages": [["user", question]]}}),
                    "traceloop.entity.output": json.dumps(
                        {
                            "outputs": {
                                "messages": [
                                    {
                                        "lc": 1,
                                        "type": "constructor",
                                        "id": ["langchain", "schema", "messages", "AIMessage"],
                                        "kwargs": {
                                            "content": "",
                                            "type": "ai",
                                            "tool_calls": [
                                                {
                                                    "name": "get_order",
                                                    "args": {"order_id": "10057"},
                                                    "id": "call_go_7",
                                                    "type": "tool_call",
                                                }
                                            ],
                                        },
                                    }
                                ]
                            }
                        }
                    ),
                }
            ),
        ),
        span(tid, chat1, task1, "ChatOpenAI.chat", 3, 10, 690, flat(c1)),
        span(
            tid,
            tool,
            wf,
            "get_order.tool",
            1,
            710,
            800,
            flat(
                {
                    "traceloop.span.kind": "tool",
                    "traceloop.entity.name": "get_order",
                    "traceloop.entity.path": "tools",
                    **assoc,
                    "traceloop.entity.input": json.dumps(
                        {
                            "input_str": "{'order_id': '10057'}",
                            "tags": ["seq:step:1"],
                            "metadata": {"session_id": sess, "langgraph_node": "tools"},
                            "kwargs": {"color": "green", "name": "get_order"},
                            "inputs": {"order_id": "10057"},
                        }
                    ),
                    "traceloop.entity.output": json.dumps(
                        {"output": tool_msg, "kwargs": {"color": "green", "name": "get_order"}}
                    ),
                }
            ),
        ),
        span(
            tid,
            task2,
            wf,
            "agent.task",
            1,
            810,
            1790,
            flat({"traceloop.span.kind": "task", "traceloop.entity.name": "agent", **assoc}),
        ),
        span(tid, chat2, task2, "ChatOpenAI.chat", 3, 815, 1780, flat(c2)),
    ]
    resource = {"service.name": "support-agent-traceloop", "telemetry.sdk.language": "python"}
    scope = {"name": "opentelemetry.instrumentation.langchain", "version": "0.54.0"}
    expected = {
        "scenario": "openllmetry_indexed",
        "kind": "handmade",
        "session_id": sess,
        "model_name": "gpt-4o-mini",
        "description": "OpenLLMetry <= 0.54 indexed attributes gen_ai.prompt.N.* / gen_ai.completion.N.* "
        "on ChatOpenAI.chat spans, <name>.workflow / .task / .tool spans.",
        "answers": [
            {
                "question": question,
                "text": answer,
                "refusal": False,
                "tool_results": [
                    {
                        "name": "get_order",
                        "tool_call_id": "call_go_7",
                        "args": {"order_id": "10057"},
                        "contains": "JD014600006281",
                    }
                ],
                "documents": [],
                "not_visible": [],
                "hops": [],
                "notes": "The tool span get_order.tool carries no tool-call id attribute; its result is the "
                "lc-serialised ToolMessage inside traceloop.entity.output (output.kwargs.content), "
                "and again as gen_ai.prompt.3 (role tool, tool_call_id call_go_7) on the second "
                "chat span. traceloop.entity.input.input_str is a Python repr.",
            }
        ],
    }
    return to_lines(spans, resource, scope), expected


BUILDERS = {
    "genai_current": genai_current,
    "genai_events": genai_events,
    "openllmetry_indexed": openllmetry_indexed,
}


def write(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in BUILDERS.items():
        lines, expected = build()
        (out_dir / f"{name}.otlp.jsonl").write_text(lines, encoding="utf-8")
        (out_dir / f"{name}.expected.json").write_text(
            json.dumps(expected, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        written += [out_dir / f"{name}.otlp.jsonl", out_dir / f"{name}.expected.json"]
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description="Write the hand-made OTLP JSON fixtures.")
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/handmade"))
    for p in write(parser.parse_args().out):
        print(p)


if __name__ == "__main__":
    main()
