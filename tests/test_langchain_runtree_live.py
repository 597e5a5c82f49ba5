"""The run-tree adapter on runs recorded from a real LangGraph agent loop (scripted chat model).

The agent and the two collectors live in ``tests/langchain_samples/scripted_agent.py``; the runs
are serialised with langsmith's own JSON serialiser, then read back through the adapter.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from auditor_langchain.runtree import RunTreeAdapter

from auditor.trace import Message, Problem, Span, SpanKind, Trace

HERE = Path(__file__).parent


def _load_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "scripted_agent", HERE / "langchain_samples" / "scripted_agent.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


agent = _load_agent()


@pytest.fixture(scope="module")
def recorded() -> tuple[Any, Any, dict[str, Any]]:
    chat, plain, state = agent.run_agent()
    return chat, plain, state


def parse(data: bytes) -> tuple[list[Trace], list[Problem]]:
    adapter = RunTreeAdapter()
    assert adapter.sniff(data[:4096])
    items = list(adapter.parse(io.BytesIO(data), "recorded.json"))
    return [i for i in items if isinstance(i, Trace)], [i for i in items if isinstance(i, Problem)]


def check_agent_trace(trace: Trace, root_id: str) -> None:
    """What every layout and both input forms must give for the scripted conversation."""
    assert trace.trace_id == root_id
    assert trace.conversation_id == "conv-7"
    by_kind: dict[SpanKind, list[Span]] = {}
    for span in trace.spans:
        by_kind.setdefault(span.kind, []).append(span)
    index = trace.by_id()

    tools = {s.name: s for s in by_kind[SpanKind.TOOL]}
    assert set(tools) == {"get_order", "search_kb"}
    order = tools["get_order"].tool
    assert order is not None and order.call_id == "call_order_1" and order.arguments == {"order_id": "10042"}
    assert json.loads(order.result or "") == agent.ORDER
    kb = tools["search_kb"].tool
    assert (
        kb is not None
        and kb.call_id == "call_kb_1"
        and "[KB-RET-7] Refunds are issued within 14 days" in (kb.result or "")
    )
    assert index[tools["get_order"].parent_id or ""].name == "tools"

    (retriever,) = by_kind[SpanKind.RETRIEVER]
    assert retriever.parent_id == tools["search_kb"].span_id and retriever.query == "refund time"
    assert [(d.id, d.text, d.metadata["status"]) for d in retriever.documents] == [
        (d.id, d.page_content, d.metadata["status"]) for d in agent.KB
    ]

    first, second = sorted(by_kind[SpanKind.LLM], key=lambda s: s.start)
    assert first.model == "scripted-1"
    assert [c.id for c in first.output_messages[0].tool_calls] == ["call_order_1", "call_kb_1"]
    assert [(m.role, m.tool_call_id) for m in second.input_messages] == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "call_order_1"),
        ("tool", "call_kb_1"),
    ]
    assert second.input_messages[4].content == kb.result
    assert [(m.role, m.content) for m in second.output_messages] == [("assistant", agent.FINAL_ANSWER)]
    assert [a.name for a in trace.ancestors(second)] == ["agent", "support_agent"]
    assert tools["get_order"].end <= second.start  # causal order is kept


def test_flat_runs_with_messages_input(recorded: tuple[Any, Any, Any]) -> None:
    chat, _, state = recorded
    assert state["messages"][-1].content == agent.FINAL_ANSWER
    traces, problems = parse(agent.flat_json(chat.runs()))
    assert problems == []
    (trace,) = traces
    check_agent_trace(trace, str(chat.roots[0].id))
    assert len(trace.spans) == len(chat.runs())
    assert all("langchain.input_form" not in s.attributes for s in trace.spans)


def test_flat_runs_with_flattened_prompts_input(recorded: tuple[Any, Any, Any]) -> None:
    _, plain, _ = recorded
    runs = plain.runs()
    assert any("prompts" in r.inputs for r in runs if r.run_type == "llm")
    traces, problems = parse(agent.flat_json(runs))
    assert problems == []
    (trace,) = traces
    check_agent_trace(trace, str(plain.roots[0].id))  # tool-call ids are recovered by position
    llm = [s for s in trace.spans if s.kind is SpanKind.LLM][1]
    assert llm.attributes["langchain.tool_call_ids_inferred"] is True


def test_nested_child_runs_layout(recorded: tuple[Any, Any, Any]) -> None:
    chat, _, _ = recorded
    traces, problems = parse(agent.nested_json(chat.roots[0]))
    assert problems == []
    check_agent_trace(traces[0], str(chat.roots[0].id))


def test_jsonl_and_langsmith_export_layouts(recorded: tuple[Any, Any, Any]) -> None:
    chat, _, _ = recorded
    dumped = json.loads(agent.flat_json(chat.runs()))
    jsonl = "\n".join(json.dumps(r) for r in reversed(dumped)).encode()  # children first
    export = json.dumps({"runs": dumped}, indent=2).encode()
    for data in (jsonl, export):
        traces, problems = parse(data)
        assert problems == []
        check_agent_trace(traces[0], str(chat.roots[0].id))


def test_any_truncation_of_a_real_file_is_survived(recorded: tuple[Any, Any, Any]) -> None:
    chat, _, _ = recorded
    data = agent.flat_json(chat.runs())
    adapter = RunTreeAdapter()
    for cut in range(1, len(data), 97):
        items = list(adapter.parse(io.BytesIO(data[:cut]), "cut.json"))
        problems = [i for i in items if isinstance(i, Problem)]
        assert problems, cut  # a cut file always says so


# --- fixtures written by the shared generator (tests/fixtures/<scenario>/) -----------------------------

FIXTURES = sorted((HERE / "fixtures").glob("*/runtree.json"))


def _messages(spans: list[Span], *, output: bool) -> list[Message]:
    return [
        m
        for s in spans
        if s.kind is SpanKind.LLM
        for m in (s.output_messages if output else s.input_messages)
    ]


@pytest.mark.skipif(not FIXTURES, reason="no tests/fixtures/*/runtree.json generated yet")
@pytest.mark.parametrize("path", FIXTURES, ids=[p.parent.name for p in FIXTURES])
def test_generated_fixture_reads_onto_the_right_spans(path: Path) -> None:
    """Each expected answer, tool result and document of the scenario is on a span of the right kind."""
    expected = json.loads((path.parent / "expected.json").read_text())
    traces, problems = parse(path.read_bytes())
    assert traces and problems == []
    spans = [s for t in traces for s in t.spans]
    assert {t.conversation_id for t in traces} == {expected["session_id"]}
    assert {s.model for s in spans if s.kind is SpanKind.LLM} == {expected["model_name"]}
    tools = [s for s in spans if s.kind is SpanKind.TOOL]
    retrievers = [s for s in spans if s.kind is SpanKind.RETRIEVER]
    for answer in expected["answers"]:
        assistant = [m for m in _messages(spans, output=True) if m.role == "assistant" and not m.tool_calls]
        assert answer["text"] in [m.content for m in assistant]
        assert any(
            m.role == "user" and m.content == answer["question"] for m in _messages(spans, output=False)
        )
        for result in answer["tool_results"]:
            matches = [
                s
                for s in tools
                if s.tool is not None
                and (s.name, s.tool.name, s.tool.call_id, s.tool.arguments)
                == (result["name"], result["name"], result["tool_call_id"], result["args"])
            ]
            assert matches and all(result["contains"] in (s.tool.result or "") for s in matches if s.tool), (
                result
            )
            fed_back = [m for m in _messages(spans, output=False) if m.tool_call_id == result["tool_call_id"]]
            assert fed_back and all(m.role == "tool" and result["contains"] in m.content for m in fed_back)
        for doc in answer["documents"]:
            found = [
                d for s in retrievers if s.name == doc["retriever"] for d in s.documents if d.id == doc["id"]
            ]
            assert found and doc["contains"] in found[0].text
            assert found[0].metadata.items() >= doc["metadata"].items()


OTHER_FILES = sorted(
    p
    for p in (HERE / "fixtures").glob("*/*")
    if p.is_file() and p.name not in {"runtree.json", "expected.json"}
)


@pytest.mark.skipif(not OTHER_FILES, reason="no generated OTLP fixtures yet")
def test_sniff_leaves_other_formats_of_the_same_scenarios_alone() -> None:
    adapter = RunTreeAdapter()
    claimed = [p.name for p in OTHER_FILES if adapter.sniff(p.read_bytes()[:4096])]
    assert claimed == []
    assert all(adapter.sniff(p.read_bytes()[:4096]) for p in FIXTURES)


def test_both_input_forms_give_the_same_llm_inputs(recorded: tuple[Any, Any, Any]) -> None:
    chat, plain, _ = recorded
    (from_messages,), _ = parse(agent.flat_json(chat.runs()))
    (from_prompts,), _ = parse(agent.flat_json(plain.runs()))

    def llm_inputs(trace: Trace) -> dict[str, list[tuple[Any, ...]]]:
        return {
            s.span_id: [
                (m.role, m.content, m.tool_call_id, [(c.id, c.name, c.arguments) for c in m.tool_calls])
                for m in s.input_messages
            ]
            for s in trace.spans
            if s.kind is SpanKind.LLM
        }

    assert llm_inputs(from_prompts) == llm_inputs(from_messages)
    assert len(llm_inputs(from_messages)) == 2
