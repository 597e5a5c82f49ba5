"""A real LangGraph agent loop with a scripted chat model, traced by two run collectors.

Used by ``tests/test_langchain_runtree_live.py``; run it directly to write sample files:

    .venv/bin/python tests/langchain_samples/scripted_agent.py OUT_DIR

The graph is the usual ReAct shape built by hand (``create_react_agent`` is deprecated in
langgraph 1.x): ``agent`` node -> ``tools`` node (``ToolNode``) -> ``agent``. The model asks for two
tools in parallel (``get_order`` and ``search_kb``, which calls a retriever), then answers.

Two collectors watch the same invocation, so both input forms of an llm run are produced with the
same run ids: ``ChatRunCollector`` copies ``LangChainTracer.on_chat_model_start`` (``inputs.messages``),
``PlainRunCollector`` is a bare ``BaseTracer`` (``inputs.prompts``, flattened strings).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from auditor_langchain.live import LangSmithChatRuns
from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import tool
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langsmith._internal._serde import dumps_json

ORDER = {"order_id": "10042", "status": "shipped", "carrier": "DHL", "eta": "2026-12-03"}
KB = [
    Document(
        id="KB-RET-7",
        page_content="Refunds are issued within 14 days of receiving the returned item.",
        metadata={
            "source": "https://help.example.com/refunds",
            "updated_at": "2026-05-01",
            "status": "current",
        },
    ),
    Document(
        id="KB-RET-2",
        page_content="Refunds are issued within 30 days.",
        metadata={
            "source": "https://help.example.com/refunds-old",
            "updated_at": "2023-01-10",
            "status": "superseded",
        },
    ),
]
FINAL_ANSWER = "Order 10042 has shipped with DHL and should arrive on 2026-12-03. Refunds take up to 14 days."


class ScriptedChatModel(BaseChatModel):
    """Returns queued AIMessages in order; ``bind_tools`` returns the model itself."""

    script: list[AIMessage]
    model_name: str = "scripted-1"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.script.pop(0))])


class KbRetriever(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return list(KB)


retriever = KbRetriever(name="kb_retriever")


@tool
def get_order(order_id: str) -> str:
    """Look up an order by id."""
    return json.dumps(ORDER)


@tool
def search_kb(query: str) -> str:
    """Search the help-centre knowledge base."""
    docs = retriever.invoke(query)
    return "\n".join(f"[{d.id}] {d.page_content}" for d in docs)


class PlainRunCollector(BaseTracer):
    """Keeps every finished root run (the stock "original" schema: llm inputs are prompts)."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        self.roots.append(run)

    def runs(self) -> list[Run]:
        out: list[Run] = []
        stack = list(reversed(self.roots))
        while stack:
            run = stack.pop()
            out.append(run)
            stack.extend(reversed(run.child_runs))
        return out


class ChatRunCollector(LangSmithChatRuns, PlainRunCollector):
    """Records chat models with ``inputs.messages``, as ``LangChainTracer.on_chat_model_start`` does."""


def build_graph(model: ScriptedChatModel) -> Any:
    tools = [get_order, search_kb]
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        system = SystemMessage(content="You are a support agent. Answer only from tool results.")
        return {"messages": [bound.invoke([system, *state["messages"]])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name="support_agent")


def run_agent() -> tuple[ChatRunCollector, PlainRunCollector, dict[str, Any]]:
    """Run the scripted conversation once under both collectors."""
    script = [
        AIMessage(
            content="",
            tool_calls=[
                {
                    "name": "get_order",
                    "args": {"order_id": "10042"},
                    "id": "call_order_1",
                    "type": "tool_call",
                },
                {
                    "name": "search_kb",
                    "args": {"query": "refund time"},
                    "id": "call_kb_1",
                    "type": "tool_call",
                },
            ],
        ),
        AIMessage(content=FINAL_ANSWER),
    ]
    chat, plain = ChatRunCollector(), PlainRunCollector()
    app = build_graph(ScriptedChatModel(script=script))
    state = app.invoke(
        {"messages": [HumanMessage(content="Where is order 10042 and how long do refunds take?")]},
        config={"callbacks": [chat, plain], "metadata": {"thread_id": "conv-7"}},
    )
    return chat, plain, state


def flat_json(runs: list[Run]) -> bytes:
    """The runs as a flat JSON list (LangChainTracer's shape), via langsmith's serialiser."""
    return dumps_json([r.model_dump(exclude={"child_runs"}) for r in runs])


def nested_json(root: Run) -> bytes:
    """One root run with ``child_runs`` nested (model_dump leaves them out)."""

    def nest(run: Run) -> dict[str, Any]:
        data: dict[str, Any] = run.model_dump(exclude={"child_runs"})
        data["child_runs"] = [nest(child) for child in run.child_runs]
        return data

    return dumps_json(nest(root))


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    chat_collector, plain_collector, _ = run_agent()
    (out / "runs_messages.json").write_bytes(flat_json(chat_collector.runs()))
    (out / "runs_prompts.json").write_bytes(flat_json(plain_collector.runs()))
    (out / "runs_nested.json").write_bytes(nested_json(chat_collector.roots[0]))
