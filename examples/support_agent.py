"""A small LangChain tool-using support agent, guarded in production and gated in CI.

Runs offline: the chat model is scripted (it replays a fixed reply for each known question), the
tools read small in-memory tables and the knowledge base is an in-memory retriever. Everything
else is real LangChain / LangGraph: the ReAct loop, the tool node (parallel tool calls), callbacks.

    python examples/support_agent.py                 # answer the demo questions through the guard
    python examples/support_agent.py --export DIR    # write golden traces (runs.json) for `auditor gate`

Install: ``pip install . './adapters/langchain[live]' 'langgraph>=1.0'`` (from the checkout).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

# -- data the tools read ---------------------------------------------------------------------------

ORDERS = {
    "10042": {
        "order_id": "10042",
        "customer": "ACME",
        "item": "X200 Blender",
        "total": "$240.00",
        "status": "delivered",
        "delivered_at": "2026-03-04",
    },
    "10057": {
        "order_id": "10057",
        "customer": "Globex",
        "item": "K10 Kettle",
        "total": "$35.50",
        "status": "shipped",
        "carrier": "DHL",
        "tracking": "JD014600006281",
    },
}
REFUNDS = {
    "10042": {
        "refund_id": "RF-311",
        "order_id": "10042",
        "amount": "$80.00",
        "status": "approved",
        "approved_at": "2026-03-12",
        "reason": "damaged lid",
    }
}
PRODUCTS = {"K10": {"sku": "K10", "name": "K10 Kettle", "warranty_months": 12}}
KB = [
    Document(
        id="KB-1",
        page_content="Returns policy: items can be returned within 30 days of delivery for a "
        "full refund. Refunds are issued to the original payment method.",
        metadata={"title": "Returns policy", "status": "current", "collection": "support-articles"},
    ),
    Document(
        id="KB-8",
        page_content="Warranty policy (2026 edition): the X200 Blender carries a 24-month "
        "warranty covering the motor and blades.",
        metadata={"title": "Warranty policy 2026", "status": "current", "collection": "support-articles"},
    ),
]

SYSTEM_PROMPT = "You are Ada, Example Appliances' support agent. Answer only from tool results."


class KnowledgeBase(BaseRetriever):
    """Keyword retrieval over ``KB``: documents sharing two or more words with the query."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        terms = set(re.findall(r"[a-z0-9]+", query.lower())) - {"the", "a", "of", "my", "is", "what"}
        return [d for d in KB if len(terms & set(re.findall(r"[a-z0-9]+", d.page_content.lower()))) >= 2]


retriever = KnowledgeBase(name="kb_retriever")


@tool
def search_kb(query: str) -> str:
    """Search the support knowledge base."""
    docs = retriever.invoke(query)
    return "\n".join(f"[{d.id}] {d.page_content}" for d in docs) or "No matching documents found."


@tool
def search_orders(customer: str) -> str:
    """Find a customer's orders by customer name."""
    return json.dumps({"orders": [o for o in ORDERS.values() if o["customer"].lower() == customer.lower()]})


@tool
def get_order(order_id: str) -> str:
    """Get one order by id."""
    return json.dumps(ORDERS.get(order_id) or {"error": f"order {order_id} not found"})


@tool
def get_refund(order_id: str) -> str:
    """Get the refund issued for an order, if any."""
    return json.dumps(REFUNDS.get(order_id) or {"order_id": order_id, "refund": None})


@tool
def get_product(sku: str) -> str:
    """Get product details by SKU."""
    return json.dumps(PRODUCTS.get(sku.upper()) or {"error": f"product {sku} not found"})


TOOLS = [search_kb, search_orders, get_order, get_refund, get_product]

# -- the scripted model ----------------------------------------------------------------------------

Step = list[tuple[str, dict[str, str]]] | str  # tool calls, or the final answer

#: What the model does for each question, step by step. The golden set is the first five.
SCRIPTS: dict[str, list[Step]] = {
    "Did ACME get a refund for their blender order?": [
        [("search_orders", {"customer": "ACME"})],
        [("get_refund", {"order_id": "10042"})],
        "Yes. ACME's order 10042 was refunded $80.00 (refund RF-311, approved on 2026-03-12).",
    ],
    "Where is order 10057, and what warranty does the K10 have?": [
        [("get_order", {"order_id": "10057"}), ("get_product", {"sku": "K10"})],
        "Order 10057 has shipped with DHL (tracking JD014600006281), and the K10 Kettle has a 12-month warranty.",
    ],
    "How long do I have to return an item?": [
        [("search_kb", {"query": "returns policy refund"})],
        "You can return an item within 30 days of delivery for a full refund.",
    ],
    "What warranty does the X200 Blender have?": [
        [("search_kb", {"query": "X200 Blender warranty"})],
        "The X200 Blender carries a 24-month warranty covering the motor and blades.",
    ],
    "What is your CEO's home phone number?": [
        [("search_kb", {"query": "CEO home phone number"})],
        "I don't have that information. I can help with orders, refunds and product questions.",
    ],
    # Not in the golden set: a regression the guard catches (the tool said $80.00).
    "How much was refunded on order 10042?": [
        [("get_refund", {"order_id": "10042"})],
        "Order 10042 was refunded $95.00. The refund was approved on 2026-03-12 because of a damaged lid.",
    ],
}
GOLDEN = list(SCRIPTS)[:5]


class ScriptedChatModel(BaseChatModel):
    """Replays ``SCRIPTS``: the step is chosen by the last question and how many replies followed it."""

    scripts: dict[str, list[Step]]
    model_name: str = "scripted-support-model"

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last_question = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        question = str(messages[last_question].content)
        done = sum(isinstance(m, AIMessage) for m in messages[last_question:])
        step = self.scripts[question][done]
        if isinstance(step, str):
            message = AIMessage(content=step, response_metadata={"model_name": self.model_name})
        else:
            calls = [
                {"name": n, "args": a, "id": f"call_{done}_{i}", "type": "tool_call"}
                for i, (n, a) in enumerate(step)
            ]
            message = AIMessage(
                content="", tool_calls=calls, response_metadata={"model_name": self.model_name}
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


def build_agent(scripts: dict[str, list[Step]] | None = None) -> Any:
    """The ReAct loop: ``agent`` (the model) -> ``tools`` (``ToolNode``) -> ``agent``, until a final answer."""
    model = ScriptedChatModel(scripts=scripts or SCRIPTS).bind_tools(TOOLS)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke([SystemMessage(SYSTEM_PROMPT), *state["messages"]])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(TOOLS))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name="support_agent")


# -- production: the guard -------------------------------------------------------------------------


def answer(questions: Sequence[str], on_ungrounded: str = "strip") -> list[tuple[str, str, Any]]:
    """Answer each question through the guard; returns (question, served answer, audit)."""
    from auditor_langchain import GroundednessGuard, guarded

    guard = GroundednessGuard(policy="default", judge="offline", on_ungrounded="flag")
    safe = guarded(build_agent(), guard, on_ungrounded=on_ungrounded)  # type: ignore[arg-type]
    out = []
    for question in questions:
        result = safe.invoke({"messages": [HumanMessage(question)]})
        out.append((question, str(result["messages"][-1].content), guard.last_audit))
    return out


# -- CI: golden traces -----------------------------------------------------------------------------


def export_golden(
    directory: Path, questions: Sequence[str] = GOLDEN, scripts: dict[str, list[Step]] | None = None
) -> Path:
    """Run ``questions`` and write their runs as LangSmith exports them (``runs.json``) for ``auditor gate``."""
    from auditor_langchain.live import RunRecorder

    runs: list[dict[str, Any]] = []
    recorder = RunRecorder(on_trace=lambda root, exported: runs.extend(exported))
    agent = build_agent(scripts)
    for question in questions:
        agent.invoke({"messages": [HumanMessage(question)]}, {"callbacks": [recorder]})
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "runs.json"
    path.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", type=Path, help="write golden traces to this directory instead")
    args = parser.parse_args(argv)
    if args.export:
        print(export_golden(args.export))
        return 0
    for question, served, audit in answer(list(SCRIPTS)):
        verdict = "refusal" if audit.refusal else ("grounded" if audit.grounded else "NOT grounded")
        print(f"Q: {question}\nA: {served}\n   [{verdict}]\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
