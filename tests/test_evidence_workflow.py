"""An OpenLLMetry workflow around plain code (issue 27 item 12): its returned text is the answer.

``@workflow`` / ``@task`` / ``@tool`` decorators write ``traceloop.entity.input`` / ``output`` on
spans the reader makes CHAIN and TOOL spans; when no span of the trace is a model call, the root
workflow's plain-text output is the answer and its ``{"args": [...]}`` input the question. Such an
answer exists only when the workflow returns, so its evidence cutoff (and ``generated_at``) is the
span's end: a tool that ended inside the run before it returned is evidence, one that ended after
(a later turn of the conversation) is not.
"""

from __future__ import annotations

import json

from auditor.evidence import Answer, EvidenceKind, reconstruct, unanswered_traces
from tests.tracebuilder import TraceBuilder, at, system, user


def _turn(b: TraceBuilder, root: str, start: float, question: str, answer: str, city: str) -> None:
    envelope = json.dumps({"args": [question], "kwargs": {}})
    b.chain(root, start, start + 5, name="support_agent.workflow", input_text=envelope, output_text=answer)
    b.chain(f"{root}-m1", start + 1, start + 2, parent=root, name="call_model.task")
    b.tool(
        f"{root}-t", "get_weather", start + 2, start + 3, {"city": city}, f'{{"city": "{city}"}}', parent=root
    )
    b.chain(f"{root}-m2", start + 3, start + 4.5, parent=root, name="call_model.task")


def test_the_workflow_output_is_the_answer_with_the_tools_that_ended_inside_it() -> None:
    b = TraceBuilder("t-wf")
    _turn(b, "wf", 0, "Weather in Paris?", "Light rain in Paris.", "Paris")
    (answer,) = reconstruct([b.build()])
    assert (answer.span_id, answer.question, answer.text) == (
        "wf",
        "Weather in Paris?",
        "Light rain in Paris.",
    )
    assert answer.generated_at == at(5)  # the workflow's end: its output exists only then
    tools = [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
    assert [(t.name, t.metadata["arguments"]) for t in tools] == [("get_weather", {"city": "Paris"})]
    asked = [e for e in answer.evidence if e.kind is EvidenceKind.USER_MESSAGE]
    assert [(e.text, e.current_question) for e in asked] == [("Weather in Paris?", True)]


def _cities(answer: Answer) -> list[str]:
    return [e.metadata["arguments"]["city"] for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]


def test_a_later_turns_tool_is_not_evidence_of_an_earlier_workflow_answer() -> None:
    first, second = TraceBuilder("t-1", conversation_id="c"), TraceBuilder("t-2", conversation_id="c")
    _turn(first, "wf1", 0, "Weather in Paris?", "Light rain in Paris.", "Paris")
    _turn(second, "wf2", 10, "And in Oslo?", "Snow in Oslo.", "Oslo")
    early, late = reconstruct([first.build(), second.build()])
    assert _cities(early) == ["Paris"]  # Oslo's tool ended after this answer was returned
    assert _cities(late) == ["Paris", "Oslo"]  # the conversation's earlier result, and its own


def test_a_tool_that_ends_after_the_workflow_returns_is_not_its_evidence() -> None:
    b = TraceBuilder("t-late")
    b.chain("wf", 0, 5, name="support_agent.workflow", input_text=json.dumps({"args": ["Q?"], "kwargs": {}}),
            output_text="Done.")  # fmt: skip
    b.tool("bg", "audit_log", 4, 6, {"id": "1"}, "logged", parent="wf")  # still running at the return
    (answer,) = reconstruct([b.build()])
    assert [e.name for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT] == []


def test_a_workflow_returning_a_structure_is_not_an_answer() -> None:
    b = TraceBuilder("t-json")
    b.chain("wf", 0, 5, name="pipeline.workflow", output_text='{"rows": 3}')
    assert reconstruct([b.build()]) == []


def test_with_a_model_call_in_the_trace_the_model_gives_the_answer_not_the_workflow() -> None:
    b = TraceBuilder("t-llm")
    b.chain("wf", 0, 5, name="support_agent.workflow", output_text="Light rain in Paris.")
    b.llm("l1", 1, 4, [user("Weather in Paris?")], output="Light rain in Paris.", parent="wf")
    (answer,) = reconstruct([b.build()])
    assert answer.span_id == "l1" and answer.generated_at == at(1)


def test_traces_without_model_calls_or_workflow_text_stay_unanswered() -> None:
    b = TraceBuilder("t-none")
    b.chain("wf", 0, 5, name="pipeline.workflow")
    trace = b.build()
    assert reconstruct([trace]) == [] and unanswered_traces([trace], []) == []  # no model-call marker


def test_a_workflow_answer_has_the_system_prompt_its_steps_were_given() -> None:
    b = TraceBuilder("t-sys")
    _turn(b, "wf", 0, "Weather in Paris?", "Light rain in Paris.", "Paris")
    spans = [
        s.model_copy(update={"input_messages": (system("Be Ada."), user("Weather in Paris?"))})
        if s.span_id == "wf-m1"
        else s
        for s in b.spans
    ]
    b.spans = spans
    (answer,) = reconstruct([b.build()])
    prompts = [(e.text, e.span_id) for e in answer.evidence if e.kind is EvidenceKind.SYSTEM_PROMPT]
    assert prompts == [("Be Ada.", "wf-m1")]


def test_a_repeated_message_is_kept_where_it_first_appeared() -> None:
    # The system prompt reaches the answer's chat span through its agent step (started later)
    # and through the first chat span: the item is the first appearance.
    b = TraceBuilder("t-first")
    b.chain("run", 0, 10, name="agent")
    b.llm("l1", 1, 2, [system("Be Ada."), user("Q?")], calls=[], output="", parent="run")
    b.tool("t1", "get_weather", 2, 3, {"city": "Paris"}, '{"city": "Paris"}', parent="run")
    b.chain("step", 4, 9, parent="run", name="call_model")
    b.spans = [
        s.model_copy(update={"input_messages": (system("Be Ada."),)}) if s.span_id == "step" else s
        for s in b.spans
    ]
    b.llm("l2", 5, 6, [system("Be Ada."), user("Q?")], output="Light rain.", parent="step")
    (answer,) = reconstruct([b.build()])
    (prompt,) = [e for e in answer.evidence if e.kind is EvidenceKind.SYSTEM_PROMPT]
    assert (prompt.span_id, prompt.available_at) == ("l1", at(1))
