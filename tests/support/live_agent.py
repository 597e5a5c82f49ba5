"""A real LangGraph ReAct loop over ``gen_traces``' scripted chat model, tools and retriever.

Used by the guard and span-processor tests. The graph is built by hand (``agent`` node ->
``ToolNode`` -> ``agent``), with a sync and an async ``agent`` node, so ``invoke`` and ``ainvoke``
both run through LangChain's own callback machinery; ``ToolNode`` runs parallel tool calls
concurrently (threads under ``invoke``, tasks under ``ainvoke``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from tests.support import gen_traces

CLASSES = gen_traces._build_langchain_classes()
ScriptedChatModel = CLASSES["ScriptedChatModel"]
KBRetriever = CLASSES["KBRetriever"]


def scenario(name: str) -> gen_traces.Scenario:
    return next(s for s in gen_traces.SCENARIOS if s.name == name)


def build_agent(script: Sequence[Any], tool_names: Sequence[str] | None = None) -> Any:
    """A compiled ReAct graph whose model replays ``script`` (lists of ``Call`` or final texts)."""
    tools_by_name = gen_traces._make_tools(KBRetriever(name=gen_traces.RETRIEVER_NAME))
    names = tool_names or sorted({c.name for step in script if isinstance(step, list) for c in step})
    tools = [tools_by_name[n] for n in names]
    model = ScriptedChatModel(list(script), model_name=gen_traces.MODEL_NAME)
    bound = model.bind_tools(tools)
    system = SystemMessage(content=gen_traces.SYSTEM_PROMPT)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke([system, *state["messages"]])]}

    async def aagent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke([system, *state["messages"]])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(agent, afunc=aagent))
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name="support_agent")


def scenario_agent(name: str) -> tuple[Any, gen_traces.Scenario]:
    sc = scenario(name)
    return build_agent([s for t in sc.turns for s in t.steps]), sc


def question(sc: gen_traces.Scenario, turn: int = 0) -> dict[str, Any]:
    return {"messages": [HumanMessage(sc.turns[turn].question)]}


def config(sc: gen_traces.Scenario, *callbacks: Any) -> dict[str, Any]:
    session = f"sess-{sc.name.replace('_', '-')}"
    return {
        "callbacks": list(callbacks),
        "metadata": {"session_id": session},
        "configurable": {"thread_id": session},
    }
