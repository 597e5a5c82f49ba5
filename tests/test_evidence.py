"""Evidence reconstruction on hand-built traces: the rules that must hold whatever the format."""

from __future__ import annotations

from datetime import UTC, datetime

from auditor.evidence import AnswerSelection, Evidence, EvidenceKind, reconstruct
from auditor.trace import Document, ToolCall, assemble_trace
from tests.tracebuilder import TraceBuilder, assistant, system, tool_msg, user

SYS = system("You are a support agent. Answer only from tool results.")


def result_text(item: Evidence) -> str:
    """An item's text without the call a tool result ends with (``(called as name(arg=...))``)."""
    call = item.metadata.get("call")
    return item.text.removesuffix(f"\n(called as {call})") if call else item.text


def multi_hop_trace() -> TraceBuilder:
    b = TraceBuilder("t-hop")
    b.chain("root", 0, 10)
    q = user("What refund did ACME get?")
    c1 = ToolCall(id="c1", name="search_orders", arguments={"customer": "ACME"})
    b.llm("l1", 1, 2, [SYS, q], calls=[c1], parent="root")
    b.tool(
        "s1",
        "search_orders",
        2,
        3,
        {"customer": "ACME"},
        '[{"order_id": "10042", "status": "returned"}]',
        call_id="c1",
        parent="root",
    )
    c2 = ToolCall(id="c2", name="get_refund", arguments={"order_id": "10042"})
    b.llm("l2", 3, 4, [SYS, q, assistant(calls=[c1]), tool_msg("...", "c1")], calls=[c2], parent="root")
    b.tool(
        "s2",
        "get_refund",
        4,
        5,
        {"order_id": "10042"},
        '{"amount": "80.00", "currency": "USD"}',
        call_id="c2",
        parent="root",
    )
    b.llm("l3", 5, 6, [SYS, q], output="ACME was refunded $80.00 for order 10042.", parent="root")
    return b


def test_answer_is_the_generation_without_tool_calls() -> None:
    answers = reconstruct([multi_hop_trace().build()])
    assert [a.span_id for a in answers] == ["l3"]
    assert answers[0].text == "ACME was refunded $80.00 for order 10042."
    assert answers[0].question == "What refund did ACME get?"


def test_multi_hop_path_follows_the_value_that_linked_the_calls() -> None:
    (answer,) = reconstruct([multi_hop_trace().build()])
    tools = {e.name: e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT}
    assert tools["search_orders"].hop_path == ("search_orders(customer=ACME)",)
    assert tools["get_refund"].hop_path == ("search_orders(customer=ACME)", "get_refund(order_id=10042)")


def test_no_hop_when_arguments_do_not_come_from_an_earlier_result() -> None:
    b = multi_hop_trace()
    b.spans = [s for s in b.spans if s.span_id != "s2"]
    b.tool(
        "s2", "get_refund", 4, 5, {"order_id": "99999"}, '{"amount": "80.00"}', call_id="c2", parent="root"
    )
    (answer,) = reconstruct([b.build()])
    refund = next(e for e in answer.evidence if e.name == "get_refund")
    assert refund.hop_path == ("get_refund(order_id=99999)",)


def test_evidence_is_causal_within_a_trace() -> None:
    b = TraceBuilder("t-causal")
    q = user("Status of order 7?")
    b.llm("l1", 0, 1, [q], calls=[ToolCall(id="a", name="get_order", arguments={"id": 7})])
    b.tool("early", "get_order", 1, 2, {"id": 7}, "order 7 shipped on May 2")
    b.llm("ans", 3, 4, [q], output="Order 7 shipped on May 2.")
    # A tool that ends after the answer's generation began cannot have informed it.
    b.tool("late", "get_invoice", 2.5, 3.5, {"id": 7}, "invoice 7 is unpaid")
    (answer,) = reconstruct([b.build()])
    texts = [result_text(e) for e in answer.evidence]
    assert "order 7 shipped on May 2" in texts
    assert "invoice 7 is unpaid" not in texts


def test_second_turn_sees_first_turn_but_not_the_reverse() -> None:
    first = TraceBuilder("turn1", conversation_id="sess-1")
    first.llm(
        "a1",
        0,
        1,
        [user("Where is order 7?")],
        calls=[ToolCall(id="x", name="get_order", arguments={"id": 7})],
    )
    first.tool("t1", "get_order", 1, 2, {"id": 7}, "order 7: in transit")
    first.llm("ans1", 2, 3, [user("Where is order 7?")], output="Order 7 is in transit.")
    second = TraceBuilder("turn2", conversation_id="sess-1")
    history = [user("Where is order 7?"), assistant("Order 7 is in transit."), user("And order 8?")]
    second.llm("b1", 10, 11, history, calls=[ToolCall(id="y", name="get_order", arguments={"id": 8})])
    second.tool("t2", "get_order", 11, 12, {"id": 8}, "order 8: delivered")
    second.llm("ans2", 12, 13, history, output="Order 8 was delivered; order 7 is in transit.")
    a1, a2 = reconstruct([first.build(), second.build()])
    assert a1.span_id == "ans1" and a2.span_id == "ans2"
    assert "order 8: delivered" not in [result_text(e) for e in a1.evidence]
    texts2 = [result_text(e) for e in a2.evidence]
    assert "order 7: in transit" in texts2 and "order 8: delivered" in texts2
    # the first answer reappears in the second turn's input: one model_output item, once
    assert [e.text for e in a2.evidence if e.kind is EvidenceKind.MODEL_OUTPUT] == ["Order 7 is in transit."]
    assert a2.question == "And order 8?"
    users = [e for e in a2.evidence if e.kind is EvidenceKind.USER_MESSAGE]
    assert [(u.text, u.current_question) for u in users] == [
        ("Where is order 7?", False),
        ("And order 8?", True),
    ]


def test_separate_traces_without_a_conversation_id_do_not_share_evidence() -> None:
    first = TraceBuilder("solo1")
    first.tool("t1", "get_order", 0, 1, {"id": 7}, "order 7: in transit")
    first.llm("ans1", 2, 3, [user("q1")], output="It is in transit.")
    second = TraceBuilder("solo2")
    second.llm("ans2", 5, 6, [user("q2")], output="No idea.")
    _, a2 = reconstruct([first.build(), second.build()])
    assert [e.kind for e in a2.evidence] == [EvidenceKind.USER_MESSAGE]


def test_retriever_output_is_split_per_document_and_replaces_its_tools_copy() -> None:
    b = TraceBuilder("t-docs")
    q = user("What is the return window?")
    b.tool("kb", "search_kb", 1, 4, {"query": "return window"}, "Doc A text\n\nDoc B text", call_id="k")
    docs = [
        Document(
            id="A",
            text="Returns are accepted within 30 days.",
            metadata={"status": "current", "source": "https://kb.example.com/a"},
        ),
        Document(id="B", text="Returns are accepted within 14 days.", metadata={"status": "superseded"}),
    ]
    b.retriever("r", "kb_retriever", 2, 3, docs, parent="kb")
    b.llm("ans", 5, 6, [q, tool_msg("Doc A text\n\nDoc B text", "k")], output="You have 30 days.")
    (answer,) = reconstruct([b.build()])
    documents = [e for e in answer.evidence if e.kind is EvidenceKind.RETRIEVED_DOCUMENT]
    assert [(d.document_id, d.metadata["status"]) for d in documents] == [
        ("A", "current"),
        ("B", "superseded"),
    ]
    assert documents[0].url == "https://kb.example.com/a" and documents[1].url is None
    assert all(d.hop_path == ("search_kb(query=return window)", "kb_retriever") for d in documents)
    # the tool's own copy of the text would bypass a policy on documents: it is not an item
    assert not [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]


def test_sub_agent_output_is_model_output_and_its_tools_are_reached_through_it() -> None:
    b = TraceBuilder("t-sub")
    q = user("Summarise the warranty terms.")
    b.llm("p1", 0, 1, [q], calls=[ToolCall(id="r", name="research_agent", arguments={"task": "warranty"})])
    b.tool("sub", "research_agent", 1, 6, {"task": "warranty"}, "The warranty lasts 2 years.", call_id="r")
    b.llm(
        "s1",
        2,
        3,
        [user("warranty")],
        calls=[ToolCall(id="w", name="lookup", arguments={"topic": "warranty"})],
        parent="sub",
    )
    b.tool(
        "look",
        "lookup",
        3,
        4,
        {"topic": "warranty"},
        "Warranty: 24 months from delivery.",
        call_id="w",
        parent="sub",
    )
    b.llm("s2", 4, 5, [user("warranty")], output="The warranty lasts 2 years.", parent="sub")
    b.llm(
        "ans", 7, 8, [q, tool_msg("The warranty lasts 2 years.", "r")], output="The warranty lasts two years."
    )
    answers = reconstruct([b.build()])
    assert [a.span_id for a in answers] == ["ans"]  # the sub-agent's own final text is not an answer
    evidence = {(e.kind, e.name): e for e in answers[0].evidence}
    assert evidence[(EvidenceKind.MODEL_OUTPUT, "research_agent")].metadata["sub_agent"] is True
    lookup = evidence[(EvidenceKind.TOOL_RESULT, "lookup")]
    assert lookup.hop_path == ("research_agent(task=warranty)", "lookup(topic=warranty)")
    # the sub-agent's "user" turn is its caller's instruction, not the user's words
    assert [e.text for e in answers[0].evidence if e.kind is EvidenceKind.USER_MESSAGE] == [
        "Summarise the warranty terms."
    ]


def test_tool_results_seen_only_in_messages_become_items_once() -> None:
    b = TraceBuilder("t-msg")
    q = user("Weather in Paris?")
    call = ToolCall(id="w1", name="get_weather", arguments={"location": "Paris"})
    b.llm("l1", 0, 1, [SYS, q], calls=[call])
    b.llm(
        "l2",
        2,
        3,
        [SYS, q, assistant(calls=[call]), tool_msg("rainy, 57F", "w1", "get_weather")],
        calls=[ToolCall(id="w2", name="get_forecast", arguments={"location": "Paris"})],
    )
    b.llm(
        "ans",
        4,
        5,
        [
            SYS,
            q,
            assistant(calls=[call]),
            tool_msg("rainy, 57F", "w1", "get_weather"),
            tool_msg("sunny tomorrow", "w2", "get_forecast"),
        ],
        output="Rainy today, sunny tomorrow.",
    )
    (answer,) = reconstruct([b.build()])
    tools = [
        (e.name, result_text(e), e.hop_path) for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT
    ]
    assert tools == [
        ("get_weather", "rainy, 57F", ("get_weather(location=Paris)",)),
        ("get_forecast", "sunny tomorrow", ("get_forecast(location=Paris)",)),
    ]
    assert [e.kind for e in answer.evidence].count(EvidenceKind.SYSTEM_PROMPT) == 1


def test_error_tool_results_are_marked() -> None:
    b = TraceBuilder("t-err")
    b.tool("t", "get_order", 0, 1, {"id": 1}, "TimeoutError: upstream did not answer", error=True)
    b.llm("ans", 2, 3, [user("Order 1?")], output="Order 1 shipped.")
    (answer,) = reconstruct([b.build()])
    (tool,) = [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
    assert tool.error is True


def test_selection_narrows_answers_and_reads_question_type() -> None:
    b = TraceBuilder("t-sel")
    b.llm("rewrite", 0, 1, [user("refund?")], output="refund policy for damaged goods")
    b.llm(
        "final",
        2,
        3,
        [user("refund?")],
        output="Damaged goods are refunded in full.",
        attributes={"qtype": "policy"},
    )
    b.spans = [s.model_copy(update={"name": "final_answer"}) if s.span_id == "final" else s for s in b.spans]
    default = reconstruct([b.build()])
    assert [a.span_id for a in default] == ["rewrite", "final"]
    (only,) = reconstruct(
        [b.build()], AnswerSelection(span_names=("final_*",), question_type_attribute="qtype")
    )
    assert only.span_id == "final" and only.question_type == "policy"
    # the rewrite's output existed before the final generation: intermediate model output
    assert any(
        e.kind is EvidenceKind.MODEL_OUTPUT and e.text.startswith("refund policy") for e in only.evidence
    )


def test_evidence_ids_are_stable_across_runs() -> None:
    first = [e.evidence_id for e in reconstruct([multi_hop_trace().build()])[0].evidence]
    second = [e.evidence_id for e in reconstruct([multi_hop_trace().build()])[0].evidence]
    assert first == second and len(set(first)) == len(first)


def test_an_unknown_start_orders_the_answer_at_its_end_and_keeps_causality() -> None:
    # As an adapter left it: the answer's start is impossible (1969); assemble_trace makes it unknown,
    # taken to be the answer's end, so the document retrieved before is evidence and the tool that
    # ended after the answer is not.
    b = TraceBuilder("t-time")
    b.chain("root", 0, 10)
    b.retriever("r1", "kb", 1, 2, [Document(id="d1", text="Refunds take 30 days.")], parent="root")
    b.llm("l1", 3, 4, [user("Refunds?")], output="Refunds take 30 days.", parent="root")
    b.tool("t1", "audit_log", 5, 6, {}, "Logged the refund answer.", parent="root")
    spans = [
        s.model_copy(update={"start": datetime(1969, 12, 31, tzinfo=UTC)}) if s.span_id == "l1" else s
        for s in b.spans
    ]
    trace, problems = assemble_trace("t-time", spans, "t.json")
    [problem] = problems
    assert problem.span_id == "l1" and problem.reason.startswith("start time 1969-12-31T00:00:00+00:00")
    (answer,) = reconstruct([trace])
    assert answer.generated_at == trace.by_id()["l1"].end
    assert [e.kind for e in answer.evidence] == [EvidenceKind.RETRIEVED_DOCUMENT, EvidenceKind.USER_MESSAGE]
