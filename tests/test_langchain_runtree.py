"""The ``langchain`` run-tree adapter on small hand-built run lists: layouts, payloads, bad input."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from auditor_langchain.messages import split_prompt
from auditor_langchain.runtree import RunTreeAdapter

from auditor.trace import Problem, Severity, Span, SpanKind, SpanStatus, Trace, detect_adapter, get_adapter

ROOT = "0b9f1a9e-0000-4000-8000-000000000001"
LLM = "0b9f1a9e-0000-4000-8000-000000000002"
TOOL = "0b9f1a9e-0000-4000-8000-000000000003"
RET = "0b9f1a9e-0000-4000-8000-000000000004"


def lc(cls: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def run(
    run_id: str, run_type: str, name: str, parent: str | None = None, second: int = 0, **fields: Any
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": run_id,
        "name": name,
        "run_type": run_type,
        "start_time": f"2026-11-29T10:00:{second:02d}.000000",
        "end_time": f"2026-11-29T10:00:{second:02d}.500000",
        "parent_run_id": parent,
        "inputs": {},
        "outputs": {},
        "extra": {},
    }
    data.update(fields)
    return data


def sample_runs() -> list[dict[str, Any]]:
    """An agent turn: a chain, a chat model asking for a tool, the tool, a retriever under it."""
    return [
        run(
            ROOT, "chain", "support_agent", inputs={"messages": []}, extra={"metadata": {"session_id": "S-1"}}
        ),
        run(
            LLM,
            "llm",
            "ChatOpenAI",
            ROOT,
            1,
            inputs={
                "messages": [
                    [
                        lc("SystemMessage", content="Be brief.", type="system"),
                        lc(
                            "HumanMessage",
                            content=[
                                {"type": "text", "text": "Where is "},
                                {"type": "text", "text": "10042?"},
                            ],
                        ),
                    ]
                ]
            },
            outputs={
                "generations": [
                    [
                        {
                            "type": "ChatGeneration",
                            "text": "",
                            "message": lc(
                                "AIMessage",
                                content="",
                                tool_calls=[
                                    {
                                        "name": "get_order",
                                        "args": {"order_id": "10042"},
                                        "id": "call_1",
                                        "type": "tool_call",
                                    }
                                ],
                                response_metadata={"model_name": "gpt-x-2026"},
                            ),
                        }
                    ]
                ]
            },
            extra={"invocation_params": {"model_name": "gpt-x"}, "metadata": {"ls_model_name": "other"}},
        ),
        run(
            TOOL,
            "tool",
            "get_order",
            ROOT,
            2,
            inputs={"order_id": "10042"},
            outputs={
                "output": {
                    "type": "tool",
                    "content": "status: shipped",
                    "tool_call_id": "call_1",
                    "name": "get_order",
                }
            },
        ),
        run(
            RET,
            "retriever",
            "kb",
            TOOL,
            3,
            inputs={"query": "shipping"},
            outputs={
                "documents": [
                    {
                        "id": "D1",
                        "page_content": "Ships in 2 days.",
                        "metadata": {"status": "current", "score": 0.9},
                        "type": "Document",
                    },
                    {
                        "lc": 1,
                        "type": "constructor",
                        "id": ["langchain", "schema", "document", "Document"],
                        "kwargs": {"page_content": "Old text.", "metadata": {"id": "D2"}},
                    },
                ]
            },
        ),
    ]


def parse(data: bytes | str, source: str = "runs.json") -> tuple[list[Trace], list[Problem]]:
    raw = data.encode() if isinstance(data, str) else data
    items = list(RunTreeAdapter().parse(io.BytesIO(raw), source))
    traces = [i for i in items if isinstance(i, Trace)]
    problems = [i for i in items if isinstance(i, Problem)]
    return traces, problems


def one_trace(data: bytes | str) -> tuple[Trace, dict[str, Span], list[Problem]]:
    traces, problems = parse(data)
    assert len(traces) == 1, (traces, problems)
    return traces[0], {s.name: s for s in traces[0].spans}, problems


# --- sniffing and registration -------------------------------------------------------------------


@pytest.mark.parametrize(
    "head",
    [
        json.dumps(sample_runs()),
        json.dumps({"runs": sample_runs()}),
        json.dumps({**sample_runs()[0], "child_runs": []}),
        "\n".join(json.dumps(r) for r in sample_runs()),
        "\ufeff  " + json.dumps(sample_runs()),
        json.dumps(sample_runs(), indent=2)[:300],  # cut mid-object: sniff sees only the head
    ],
)
def test_sniff_accepts_run_layouts(head: str) -> None:
    assert RunTreeAdapter().sniff(head.encode()[:4096]) is True


@pytest.mark.parametrize(
    "head",
    [
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x", "attributes": [{"key": "a", "value": '
        b'{"stringValue": "{\\"run_type\\": \\"llm\\"}"}}]}]}]}]}',
        b'{"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}',
        b"name,run_type\nx,llm\n",
        b"\x00\xff\xfe garbage",
        b"",
    ],
)
def test_sniff_rejects_other_formats(head: bytes) -> None:
    assert RunTreeAdapter().sniff(head) is False


def test_registered_as_langchain_entry_point() -> None:
    adapter = get_adapter("langchain")
    assert adapter.name == "langchain"
    assert detect_adapter(json.dumps(sample_runs()).encode(), "x.json").name == "langchain"


# --- layouts and trace grouping --------------------------------------------------------------------


def test_flat_list_maps_every_run_kind() -> None:
    trace, spans, problems = one_trace(json.dumps(sample_runs()))
    assert problems == []
    assert trace.trace_id == ROOT  # no trace_id field: the root of the parent chain
    assert trace.source_format == "langchain-runtree"
    assert trace.conversation_id == "S-1"
    assert [s.name for s in trace.spans] == ["support_agent", "ChatOpenAI", "get_order", "kb"]

    llm = spans["ChatOpenAI"]
    assert llm.kind is SpanKind.LLM and llm.parent_id == ROOT
    assert llm.model == "gpt-x"
    assert [(m.role, m.content) for m in llm.input_messages] == [
        ("system", "Be brief."),
        ("user", "Where is 10042?"),
    ]
    (out,) = llm.output_messages
    assert out.role == "assistant"
    assert [(c.id, c.name, c.arguments) for c in out.tool_calls] == [
        ("call_1", "get_order", {"order_id": "10042"})
    ]

    tool = spans["get_order"]
    assert tool.kind is SpanKind.TOOL and tool.tool is not None
    assert (tool.tool.name, tool.tool.call_id, tool.tool.arguments, tool.tool.result) == (
        "get_order",
        "call_1",
        {"order_id": "10042"},
        "status: shipped",
    )

    ret = spans["kb"]
    assert ret.kind is SpanKind.RETRIEVER and ret.parent_id == TOOL and ret.query == "shipping"
    assert [(d.id, d.text, d.score) for d in ret.documents] == [
        ("D1", "Ships in 2 days.", 0.9),
        ("D2", "Old text.", None),
    ]
    assert ret.documents[0].metadata == {"status": "current", "score": 0.9}

    root = spans["support_agent"]
    assert root.kind is SpanKind.CHAIN and root.parent_id is None and root.status is SpanStatus.OK
    assert root.start == datetime(2026, 11, 29, 10, 0, tzinfo=UTC)  # naive time read as UTC
    assert root.source is not None and root.source.file == "runs.json" and root.source.line == 1


def test_nested_child_runs_give_parents_and_trace() -> None:
    flat = sample_runs()
    for r in flat:
        r.pop("parent_run_id")
    root, llm, tool, ret = flat
    tool["child_runs"] = [ret]
    root["child_runs"] = [llm, tool]
    trace, spans, problems = one_trace(json.dumps(root, indent=2))
    assert problems == []
    assert trace.trace_id == ROOT
    assert spans["kb"].parent_id == TOOL and spans["get_order"].parent_id == ROOT
    assert len(trace.spans) == 4


def test_langsmith_export_object_and_explicit_trace_ids() -> None:
    runs = sample_runs()
    for r in runs:
        r["trace_id"] = ROOT.upper()  # ids are normalised to lower case
    other = run("0b9f1a9e-0000-4000-8000-0000000000aa", "chain", "second_request", second=9)
    traces, problems = parse(json.dumps({"runs": [*runs, other]}))
    assert problems == []
    assert [t.trace_id for t in traces] == [ROOT, "0b9f1a9e-0000-4000-8000-0000000000aa"]
    assert [len(t.spans) for t in traces] == [4, 1]


def test_dotted_order_gives_parent_and_trace_when_ids_are_missing() -> None:
    runs = sample_runs()[:2]
    for r in runs:
        r.pop("parent_run_id")
    runs[1]["dotted_order"] = f"20261129T100000000000Z{ROOT}.20261129T100001000000Z{LLM}"
    runs.reverse()  # children before parents
    trace, spans, _ = one_trace(json.dumps(runs))
    assert trace.trace_id == ROOT and spans["ChatOpenAI"].parent_id == ROOT


def test_jsonl_skips_malformed_line_and_merges_create_and_update() -> None:
    runs = sample_runs()
    created = {**runs[2], "end_time": None, "outputs": None}
    lines = [json.dumps(runs[0]), json.dumps(created), "{not json", json.dumps(runs[1]), json.dumps(runs[2])]
    trace, spans, problems = one_trace("\n".join(lines) + "\n")
    assert [(p.line, p.severity) for p in problems] == [(3, Severity.ERROR)]
    assert "malformed JSON line" in problems[0].reason
    assert spans["get_order"].tool is not None and spans["get_order"].tool.result == "status: shipped"
    assert spans["get_order"].source is not None and spans["get_order"].source.line == 2
    assert len(trace.spans) == 3


def test_separate_traces_in_one_file() -> None:
    a = sample_runs()
    b = [run("1b9f1a9e-0000-4000-8000-000000000001", "chain", "other", second=5)]
    traces, _ = parse(json.dumps(a + b))
    assert {t.trace_id for t in traces} == {ROOT, "1b9f1a9e-0000-4000-8000-000000000001"}


# --- payload shapes ----------------------------------------------------------------------------------


def test_plain_dict_and_openai_style_messages() -> None:
    llm = run(
        LLM,
        "llm",
        "m",
        inputs={
            "messages": [
                {"type": "human", "data": {"content": "hi", "type": "human"}},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c9",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                        }
                    ],
                },
                {"role": "tool", "content": "result text", "tool_call_id": "c9"},
                {
                    "type": "ai",
                    "content": "",
                    "additional_kwargs": {
                        "tool_calls": [{"id": "c10", "function": {"name": "f", "arguments": "not json"}}]
                    },
                },
                {"type": "chat", "role": "critic", "content": "meh"},
                42,
            ]
        },
        outputs={"generations": [[{"text": "plain text answer"}]]},
        extra={"metadata": {"ls_model_name": "from-metadata"}},
    )
    _, spans, _ = one_trace(json.dumps([llm]))
    span = spans["m"]
    assert [m.role for m in span.input_messages] == ["user", "assistant", "tool", "assistant", "critic"]
    assert span.input_messages[1].tool_calls[0].arguments == {"q": "x"}
    assert span.input_messages[2].tool_call_id == "c9"
    assert span.input_messages[3].tool_calls[0].arguments == "not json"
    assert [(m.role, m.content) for m in span.output_messages] == [("assistant", "plain text answer")]
    assert span.model == "from-metadata"


def test_prompts_form_is_split_and_tool_call_ids_inferred_by_position() -> None:
    prompt = (
        "System: Be brief.\nHuman: Where is 10042?\n"
        "AI: [{'name': 'get_order', 'args': {'order_id': '10042'}, 'id': 'call_1', 'type': 'tool_call'}]\n"
        "Tool: status: shipped\nsecond line\nAI: It shipped."
    )
    llm = run(LLM, "llm", "m", inputs={"prompts": [prompt]})
    _, spans, problems = one_trace(json.dumps([llm]))
    msgs = spans["m"].input_messages
    assert [(m.role, m.content) for m in msgs] == [
        ("system", "Be brief."),
        ("user", "Where is 10042?"),
        ("assistant", ""),
        ("tool", "status: shipped\nsecond line"),
        ("assistant", "It shipped."),
    ]
    assert msgs[2].tool_calls[0].id == "call_1" and msgs[2].tool_calls[0].arguments == {"order_id": "10042"}
    assert msgs[3].tool_call_id == "call_1"
    assert spans["m"].attributes["langchain.input_form"] == "prompts"
    assert spans["m"].attributes["langchain.tool_call_ids_inferred"] is True
    assert problems == []


def test_prompts_form_leaves_ids_unset_when_counts_disagree() -> None:
    messages, inferred = split_prompt(
        "AI: [{'name': 'a', 'args': {}, 'id': 'c1'}, {'name': 'b', 'args': {}, 'id': 'c2'}]\nTool: only one"
    )
    assert inferred is False and messages[1].tool_call_id is None


def test_tool_variants() -> None:
    runs = [
        run(
            TOOL,
            "tool",
            "t_str",
            inputs={"input": "raw query"},
            outputs={"output": "plain result"},
            extra={"tool_call_id": "call_x"},
        ),
        run(
            LLM,
            "tool",
            "t_lc",
            inputs={"a": 1},
            outputs={
                "output": lc(
                    "ToolMessage", content=[{"type": "text", "text": "blocks"}], tool_call_id="call_y"
                )
            },
        ),
        run(
            RET,
            "tool",
            "t_err",
            inputs={"a": 1},
            outputs={
                "output": {"type": "tool", "content": "Error: boom", "tool_call_id": "c", "status": "error"}
            },
        ),
        run(ROOT, "tool", "t_obj", inputs={"a": 1}, outputs={"output": {"rows": [1, 2]}}),
    ]
    traces, _ = parse(json.dumps(runs))
    spans = {s.name: s for t in traces for s in t.spans}
    assert spans["t_str"].tool == spans["t_str"].tool.model_copy(  # type: ignore[union-attr]
        update={"name": "t_str", "call_id": "call_x", "arguments": "raw query", "result": "plain result"}
    )
    assert spans["t_lc"].tool is not None and (spans["t_lc"].tool.result, spans["t_lc"].tool.call_id) == (
        "blocks",
        "call_y",
    )
    assert spans["t_err"].status is SpanStatus.ERROR and spans["t_err"].status_message == "Error: boom"
    assert spans["t_obj"].tool is not None and json.loads(spans["t_obj"].tool.result or "") == {
        "rows": [1, 2]
    }


def test_error_run_and_events() -> None:
    bad = run(
        TOOL,
        "tool",
        "t",
        error="ValueError('no such order')",
        outputs=None,
        events=[
            {"name": "start", "time": "2026-11-29T10:00:00Z"},
            {"name": "new_token", "kwargs": {"token": "a"}},
        ],
    )
    _, spans, problems = one_trace(json.dumps([bad]))
    span = spans["t"]
    assert span.status is SpanStatus.ERROR and span.status_message == "ValueError('no such order')"
    assert [e.name for e in span.events] == ["start"] and span.attributes["langchain.new_token_events"] == 1
    assert problems == []  # an errored tool has no outputs, and that is not a problem


# --- bad input ------------------------------------------------------------------------------------------


def test_runs_without_id_or_start_are_skipped_with_problems() -> None:
    runs = sample_runs()
    del runs[3]["id"]
    runs[2]["start_time"] = "yesterday"
    traces, problems = parse(json.dumps(runs))
    reasons = [p.reason for p in problems]
    assert any("has no id" in r for r in reasons)
    assert any("unreadable start_time 'yesterday'" in r for r in reasons)
    assert [s.name for s in traces[0].spans] == ["support_agent", "ChatOpenAI"]


def test_truncated_list_keeps_runs_before_the_break() -> None:
    text = json.dumps(sample_runs(), indent=1)
    cut = text[: text.index(TOOL) + 5]  # inside the tool run, the third of four
    traces, problems = parse(cut)
    assert [s.name for s in traces[0].spans] == ["support_agent", "ChatOpenAI"]
    assert len(problems) == 1 and "2 run(s) before it were read" in problems[0].reason
    assert problems[0].line is not None and problems[0].line > 1


def test_truncated_runs_export_and_nested_object() -> None:
    text = json.dumps({"runs": sample_runs()})
    traces, problems = parse(text[: len(text) // 2])
    assert traces and problems and "truncated" in problems[0].reason
    nested = json.dumps({**sample_runs()[0], "child_runs": sample_runs()[1:]})
    traces, problems = parse(nested[:-10])
    assert traces == [] and len(problems) == 1 and "malformed JSON" in problems[0].reason


def test_invalid_utf8_is_replaced_with_a_warning() -> None:
    runs = sample_runs()
    runs[2]["outputs"]["output"]["content"] = "status: XX"
    data = json.dumps(runs).encode().replace(b"XX", b"\xff\xfe")
    _, spans, problems = one_trace(data)
    assert [p.severity for p in problems] == [Severity.WARNING] and "UTF-8" in problems[0].reason
    assert spans["get_order"].tool is not None and spans["get_order"].tool.result == "status: \ufffd\ufffd"


@pytest.mark.parametrize(
    "mutation",
    [
        {"inputs": "not a dict"},
        {"outputs": ["list"]},
        {"extra": 7},
        {"run_type": "wizard"},
        {"end_time": None},
        {"name": None, "run_type": None},
        {"inputs": {"messages": "oops"}},
        {"outputs": {"generations": [["x", None, {"message": 5}]]}},
        {"inputs": {"prompts": [None]}},
    ],
)
def test_unexpected_types_are_problems_not_crashes(mutation: dict[str, Any]) -> None:
    runs = sample_runs()
    runs[1].update(mutation)
    traces, problems = parse(json.dumps(runs))
    assert len(traces) == 1 and len(traces[0].spans) == 4
    span = traces[0].by_id()[LLM]
    assert span.start == datetime(2026, 11, 29, 10, 0, 1, tzinfo=UTC)
    assert problems or span.kind is SpanKind.LLM


@pytest.mark.parametrize("text", ["", "   \n", "42", '"a string"', "[1, 2]", '{"hello": 1}', "[", "{]"])
def test_garbage_never_raises(text: str) -> None:
    traces, problems = parse(text)
    assert traces == [] and problems


def test_jsonl_with_a_broken_first_line_is_still_jsonl() -> None:
    lines = ['{"id": "x", "run_type": ', *(json.dumps(r) for r in sample_runs())]
    trace, _, problems = one_trace("\n".join(lines))
    assert [p.line for p in problems] == [1] and len(trace.spans) == 4


def test_pretty_list_with_one_run_per_line_is_a_document() -> None:
    text = "[\n" + ",\n".join(json.dumps(r) for r in sample_runs()) + "\n]\n"
    trace, _, problems = one_trace(text)
    assert problems == []
    assert [s.source.line for s in trace.spans if s.source] == [2, 3, 4, 5]
    single = "[\n" + json.dumps(sample_runs()[0]) + "\n]"
    assert len(one_trace(single)[0].spans) == 1


def test_openai_shaped_llm_run_from_traceable() -> None:
    llm = run(
        LLM,
        "llm",
        "ChatOpenAI",
        inputs={"messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o-mini"},
        outputs={"choices": [{"message": {"role": "assistant", "content": "hello", "tool_calls": None}}]},
    )
    _, spans, problems = one_trace(json.dumps([llm]))
    span = spans["ChatOpenAI"]
    assert [(m.role, m.content) for m in span.output_messages] == [("assistant", "hello")]
    assert span.model == "gpt-4o-mini" and problems == []


@pytest.mark.parametrize(
    "text", ["[" * 100_000, '{"id": "a", "run_type": "chain", "inputs": ' + "[" * 100_000]
)
def test_absurd_nesting_is_a_problem(text: str) -> None:
    traces, problems = parse(text)
    assert traces == [] and problems


def test_unreadable_stream_is_a_problem() -> None:
    class Broken(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")

    items = list(RunTreeAdapter().parse(Broken(), "t.json.gz"))
    assert len(items) == 1 and isinstance(items[0], Problem) and "could not read" in items[0].reason
