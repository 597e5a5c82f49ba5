"""Generate trace fixtures with the REAL instrumentation libraries.

Drives real LangGraph / LangChain tool-using agents (``create_react_agent``) and one plain LCEL
RAG chain with a scripted fake chat model, real ``@tool`` functions over small in-memory data and
an in-memory retriever. Every run is captured at the same time by

1. ``openinference-instrumentation-langchain`` (own TracerProvider, in-memory exporter),
2. ``opentelemetry-instrumentation-langchain`` (OpenLLMetry; own TracerProvider, in-memory exporter),
3. a LangChain run collector that records runs like LangSmith's ``LangChainTracer``.

For each scenario it writes into ``<out>/<scenario>/``::

    openinference.otlp.jsonl   OTLP JSON lines as the Collector file exporter writes them
    openinference.otlp.pb      the same spans as one binary ExportTraceServiceRequest
    openllmetry.otlp.jsonl     OpenLLMetry spans of the same run, same layout
    runtree.json               flat list of LangChain runs, serialised as LangSmith does
    expected.json              what the scenario contains, written from the scenario definition

Usage::

    .venv/bin/python tests/support/gen_traces.py --out tests/fixtures [--scenario multi_hop ...]

Ids and timestamps differ per run; ``expected.json`` is deterministic.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------------------------
# In-memory data (the only source of truth for tool results and retrieved documents)
# --------------------------------------------------------------------------------------------

SYSTEM_PROMPT = "You are Ada, Example Appliances' support agent. Answer only from tool results."

ORDERS: dict[str, dict[str, Any]] = {
    "10042": {
        "order_id": "10042",
        "customer": "ACME",
        "sku": "X200",
        "item": "X200 Blender",
        "total": "$240.00",
        "status": "delivered",
        "placed_at": "2026-03-01",
        "delivered_at": "2026-03-04",
    },
    "10057": {
        "order_id": "10057",
        "customer": "Globex",
        "sku": "K10",
        "item": "K10 Kettle",
        "total": "$35.50",
        "status": "shipped",
        "placed_at": "2026-03-20",
        "carrier": "DHL",
        "tracking": "JD014600006281",
    },
}

REFUNDS: dict[str, dict[str, Any]] = {
    "10042": {
        "refund_id": "RF-311",
        "order_id": "10042",
        "amount": "$80.00",
        "status": "approved",
        "approved_at": "2026-03-12",
        "reason": "damaged lid",
    },
}

PRODUCTS: dict[str, dict[str, Any]] = {
    "X200": {"sku": "X200", "name": "X200 Blender", "price": "$240.00", "warranty_months": 24},
    "K10": {"sku": "K10", "name": "K10 Kettle", "price": "$35.50", "warranty_months": 12},
}

# Document(id, page_content, metadata). Ids are NOT repeated in metadata on purpose: real
# retrievers rarely do, and OpenInference drops Document.id from its document attributes.
KB_DOCS: list[dict[str, Any]] = [
    {
        "id": "KB-1",
        "page_content": "Returns policy: items can be returned within 30 days of delivery for a full "
        "refund. Refunds are issued to the original payment method.",
        "metadata": {
            "title": "Returns policy",
            "source": "https://support.example.com/kb/returns-policy",
            "status": "current",
            "updated_at": "2026-01-15",
            "collection": "support-articles",
        },
    },
    {
        "id": "KB-7",
        "page_content": "Warranty policy (2024 edition): the X200 Blender carries a 12-month limited "
        "warranty.",
        "metadata": {
            "title": "Warranty policy 2024",
            "source": "https://support.example.com/kb/warranty-2024",
            "status": "superseded",
            "updated_at": "2024-02-01",
            "collection": "support-articles",
        },
    },
    {
        "id": "KB-8",
        "page_content": "Warranty policy (2026 edition): the X200 Blender carries a 24-month warranty "
        "covering the motor and blades.",
        "metadata": {
            "title": "Warranty policy 2026",
            "source": "https://support.example.com/kb/warranty",
            "status": "current",
            "updated_at": "2026-02-10",
            "collection": "support-articles",
        },
    },
    {
        "id": "KB-12",
        "page_content": "Q1 shipping report: the average delivery time in Q1 was 3.2 days across all "
        "regions.",
        "metadata": {
            "title": "Q1 shipping report",
            "source": "https://intranet.example.com/reports/q1-shipping",
            "status": "current",
            "updated_at": "2026-04-05",
            "collection": "reports",
        },
    },
    {
        "id": "KB-13",
        "page_content": "Q1 logistics audit: carriers delivered orders in an average of 3.2 days in Q1, "
        "and 97% of parcels arrived on time.",
        "metadata": {
            "title": "Q1 logistics audit",
            "source": "https://intranet.example.com/reports/q1-logistics-audit",
            "status": "current",
            "updated_at": "2026-04-18",
            "collection": "reports",
        },
    },
    {
        "id": "KB-20",
        "page_content": "X200 Blender product sheet: 1200 W motor, 1.5 litre glass jar, six speed settings.",
        "metadata": {
            "title": "X200 product sheet",
            "source": "https://www.example.com/products/x200",
            "status": "current",
            "updated_at": "2025-11-30",
            "collection": "product-docs",
        },
    },
]

RETRIEVER_NAME = "kb_retriever"
MODEL_NAME = "scripted-gpt-4o-mini"
_STOP = {
    "the",
    "a",
    "an",
    "of",
    "in",
    "on",
    "is",
    "was",
    "what",
    "does",
    "do",
    "have",
    "has",
    "for",
    "to",
    "and",
    "how",
    "my",
    "i",
    "it",
    "we",
    "our",
}
_MIN_SCORE = 2
_TOP_K = 2


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def kb_search(query: str) -> list[dict[str, Any]]:
    """Deterministic keyword retrieval: docs sharing >= 2 non-stop words with the query, top 2."""
    terms = _words(query) - _STOP
    scored = []
    for i, doc in enumerate(KB_DOCS):
        score = len(terms & (_words(doc["page_content"]) | _words(doc["metadata"]["title"])))
        if score >= _MIN_SCORE:
            scored.append((-score, i, doc))
    return [d for _, _, d in sorted(scored, key=lambda t: (t[0], t[1]))[:_TOP_K]]


def format_docs_text(docs: Sequence[Any]) -> str:
    """How the search_kb tool and the RAG chain render documents for the model."""
    if not docs:
        return "No matching documents found."
    parts = []
    for d in docs:
        did = d["id"] if isinstance(d, dict) else d.id
        content = d["page_content"] if isinstance(d, dict) else d.page_content
        md = d["metadata"] if isinstance(d, dict) else d.metadata
        parts.append(
            f"[{did}] {content} (source: {md['source']}, status: {md['status']}, updated {md['updated_at']})"
        )
    return "\n".join(parts)


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# Pure tool bodies (also used to validate expected.json without tracing anything).
def search_orders_text(customer: str) -> str:
    rows = [o for o in ORDERS.values() if o["customer"].lower() == customer.lower()]
    return _json({"customer": customer, "orders": rows})


def get_order_text(order_id: str) -> str:
    order = ORDERS.get(str(order_id))
    return _json(order) if order else _json({"error": f"order {order_id} not found"})


def get_refund_text(order_id: str) -> str:
    refund = REFUNDS.get(str(order_id))
    return _json(refund) if refund else _json({"order_id": order_id, "refund": None})


def get_product_text(sku: str) -> str:
    product = PRODUCTS.get(sku.upper())
    return _json(product) if product else _json({"error": f"product {sku} not found"})


PURE_TOOLS: dict[str, Callable[..., str]] = {
    "search_orders": search_orders_text,
    "get_order": get_order_text,
    "get_refund": get_refund_text,
    "get_product": get_product_text,
    "search_kb": lambda query: format_docs_text(kb_search(query)),
}

# --------------------------------------------------------------------------------------------
# Scenario definitions
# --------------------------------------------------------------------------------------------


@dataclass
class Call:
    """One scripted tool call; ``contains`` is a distinctive substring of its result."""

    name: str
    args: dict[str, Any]
    id: str
    contains: str | None = None  # None: derived (search_kb) or given by the sub-agent answer


@dataclass
class Turn:
    question: str
    steps: list[list[Call] | str]  # a list of Calls = one AIMessage with tool_calls; str = final text
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, text) before the question
    refusal: bool = False
    not_visible: list[str] = field(default_factory=list)
    hops: list[list[str]] = field(default_factory=list)
    notes: str = ""
    user_statements: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        last = self.steps[-1]
        assert isinstance(last, str)
        return last


@dataclass
class SubAgent:
    name: str
    tool_name: str
    tool_description: str
    steps: list[list[Call] | str]


@dataclass
class Scenario:
    name: str
    description: str
    turns: list[Turn]
    kind: str = "agent"  # "agent" | "rag_chain"
    sub_agent: SubAgent | None = None


SCENARIOS: list[Scenario] = [
    Scenario(
        "single_retrieval",
        "One knowledge-base search through a tool that calls the retriever; the answer is grounded in KB-1.",
        [
            Turn(
                "How long do I have to return an item?",
                [
                    [Call("search_kb", {"query": "returns policy refund"}, "call_sr_1")],
                    "You can return an item within 30 days of delivery for a full refund.",
                ],
                notes="Both facts (30 days, full refund) are in KB-1.",
            )
        ],
    ),
    Scenario(
        "multi_hop",
        "search_orders returns order 10042, then get_refund is called with that id; the answer uses both.",
        [
            Turn(
                "Did ACME get a refund for their blender order?",
                [
                    [Call("search_orders", {"customer": "ACME"}, "call_mh_1", '"order_id": "10042"')],
                    [Call("get_refund", {"order_id": "10042"}, "call_mh_2", '"refund_id": "RF-311"')],
                    "Yes. ACME's order 10042 was refunded $80.00 (refund RF-311, approved on 2026-03-12).",
                ],
                hops=[["search_orders", "get_refund"]],
                notes="order id 10042 flows from search_orders' result into get_refund's argument.",
            )
        ],
    ),
    Scenario(
        "parallel_tools",
        "One AIMessage requests get_order and get_product at once; both run in parallel.",
        [
            Turn(
                "Where is order 10057, and what warranty does the K10 have?",
                [
                    [
                        Call("get_order", {"order_id": "10057"}, "call_pt_1", '"status": "shipped"'),
                        Call("get_product", {"sku": "K10"}, "call_pt_2", '"warranty_months": 12'),
                    ],
                    "Order 10057 has shipped with DHL (tracking JD014600006281), and the K10 Kettle has a "
                    "12-month warranty.",
                ],
                notes="Two tool calls in one model turn; executed as two parallel 'tools' node tasks.",
            )
        ],
    ),
    Scenario(
        "multi_turn",
        "Two user turns in one conversation (same session_id/thread_id); turn 2 sees turn 1's history.",
        [
            Turn(
                "What did ACME order from us?",
                [
                    [Call("search_orders", {"customer": "ACME"}, "call_mt_1", '"item": "X200 Blender"')],
                    "ACME ordered an X200 Blender (order 10042) for $240.00; it was delivered on 2026-03-04.",
                ],
                not_visible=["RF-311", "damaged lid"],
                notes="First answer: only search_orders is visible; the refund arrives in turn 2.",
            ),
            Turn(
                "Was that order refunded?",
                [
                    [Call("get_refund", {"order_id": "10042"}, "call_mt_2", '"reason": "damaged lid"')],
                    "Yes, order 10042 was refunded $80.00 because of a damaged lid.",
                ],
                hops=[["search_orders", "get_refund"]],
                notes="Second top-level invocation; its input repeats turn 1 (question, tool call, "
                "tool result, answer). The hop crosses turns.",
            ),
        ],
    ),
    Scenario(
        "sub_agent",
        "A tool runs an inner billing agent (own model calls and tools); its final text is the tool result.",
        [
            Turn(
                "Can you check with billing whether ACME's order 10042 was refunded?",
                [
                    [
                        Call(
                            "ask_billing_specialist",
                            {"question": "Was order 10042 refunded, and how much?"},
                            "call_sa_1",
                        )
                    ],
                    "Billing confirmed that order 10042 was refunded $80.00 under refund RF-311.",
                ],
                notes="Inner agent billing_agent calls get_refund (call_sa_inner_1) and answers "
                "'Order 10042 was refunded $80.00 (refund RF-311, status approved).', which is the "
                "result of ask_billing_specialist. The inner answer is not a user-facing answer.",
            )
        ],
        sub_agent=SubAgent(
            "billing_agent",
            "ask_billing_specialist",
            "Ask the billing specialist agent a question about payments and refunds.",
            [
                [Call("get_refund", {"order_id": "10042"}, "call_sa_inner_1", '"refund_id": "RF-311"')],
                "Order 10042 was refunded $80.00 (refund RF-311, status approved).",
            ],
        ),
    ),
    Scenario(
        "refusal",
        "The knowledge base has nothing on the question; the agent refuses.",
        [
            Turn(
                "What is your CEO's home phone number?",
                [
                    [Call("search_kb", {"query": "CEO home phone number"}, "call_rf_1")],
                    "I don't have that information. I can help with orders, refunds and product questions.",
                ],
                refusal=True,
                notes="search_kb returns 'No matching documents found.'; the answer makes no claims.",
            )
        ],
    ),
    Scenario(
        "document_metadata",
        "Two warranty documents, one superseded (12-month) and one current (24-month); the answer uses "
        "the superseded one.",
        [
            Turn(
                "What warranty does the X200 Blender come with?",
                [
                    [Call("search_kb", {"query": "X200 warranty policy"}, "call_dm_1")],
                    "The X200 Blender carries a 12-month limited warranty.",
                ],
                notes="'12-month' rests only on KB-7 (status superseded, updated_at 2024-02-01); the "
                "current KB-8 says 24-month. With superseded documents excluded the claim is "
                "contradicted by KB-8.",
            )
        ],
    ),
    Scenario(
        "fabricated_figure",
        "The answer states a shipping fee found in no evidence.",
        [
            Turn(
                "How much did ACME pay for order 10042?",
                [
                    [Call("get_order", {"order_id": "10042"}, "call_ff_1", '"total": "$240.00"')],
                    "ACME paid $240.00 for order 10042, including a $15.00 shipping fee.",
                ],
                notes="'$15.00 shipping fee' is fabricated: no tool result mentions shipping fees or $15.",
            )
        ],
    ),
    Scenario(
        "changed_figure",
        "get_refund says $80.00 but the answer says $95.00.",
        [
            Turn(
                "How much was refunded on order 10042?",
                [
                    [Call("get_refund", {"order_id": "10042"}, "call_cf_1", '"amount": "$80.00"')],
                    "Order 10042 was refunded $95.00 on 2026-03-12.",
                ],
                notes="The tool returned $80.00; the answer changed it to $95.00 (contradicted). The date "
                "2026-03-12 is supported.",
            )
        ],
    ),
    Scenario(
        "user_message_support",
        "The user states a payment in an earlier message; the answer repeats it, and no tool confirms it.",
        [
            Turn(
                "Can you confirm how much I paid for the extended warranty?",
                [
                    [Call("get_order", {"order_id": "10042"}, "call_um_1", '"total": "$240.00"')],
                    "You paid $120 for the extended warranty on March 3.",
                ],
                history=[
                    ("user", "I paid $120 on March 3 for the extended warranty on order 10042."),
                    ("assistant", "Thanks for letting me know. What would you like me to check?"),
                ],
                user_statements=["I paid $120 on March 3"],
                notes="The claim rests only on the user's own earlier message; get_order has no warranty "
                "payment.",
            )
        ],
    ),
    Scenario(
        "combined_documents",
        "The answer combines two reports that agree ('Both reports say ...').",
        [
            Turn(
                "What was the average delivery time in Q1?",
                [
                    [Call("search_kb", {"query": "average delivery time Q1"}, "call_cd_1")],
                    "Both reports say the average delivery time in Q1 was 3.2 days.",
                ],
                notes="Aggregated claim: KB-12 (shipping report) and KB-13 (logistics audit) both say 3.2 days.",
            )
        ],
    ),
    Scenario(
        "rag_chain",
        "A plain LCEL RAG chain: retriever -> prompt with the context in the system message -> model.",
        [
            Turn(
                "What motor does the X200 Blender have?",
                ["The X200 Blender has a 1200 W motor."],
                notes="No agent and no tools: the documents reach the model only through the system "
                "prompt. KB-8 is retrieved too but not used.",
            )
        ],
        kind="rag_chain",
    ),
]

SCENARIO_NAMES = [s.name for s in SCENARIOS]


def _doc_entry(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "retriever": RETRIEVER_NAME,
        "id": doc["id"],
        "contains": doc["page_content"],
        "metadata": dict(doc["metadata"]),
    }


def _tool_result_entries(
    calls: Sequence[Call], sub: SubAgent | None, agent: str | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tool_results, documents) for a sequence of scripted calls, computed from the data."""
    results: list[dict[str, Any]] = []
    docs: list[dict[str, Any]] = []
    for c in calls:
        if sub is not None and c.name == sub.tool_name:
            inner_calls = [ic for step in sub.steps if isinstance(step, list) for ic in step]
            inner_res, inner_docs = _tool_result_entries(inner_calls, None, agent=sub.name)
            results.extend(inner_res)
            docs.extend(inner_docs)
            inner_answer = sub.steps[-1]
            assert isinstance(inner_answer, str)
            results.append({"name": c.name, "tool_call_id": c.id, "args": c.args, "contains": inner_answer})
            continue
        text = PURE_TOOLS[c.name](**c.args)
        if c.name == "search_kb":
            found = kb_search(c.args["query"])
            docs.extend(_doc_entry(d) for d in found)
            contains = found[0]["id"] if found else "No matching documents found."
        else:
            assert c.contains is not None, c
            contains = c.contains
        if contains not in text:
            raise AssertionError(f"{c.name}{c.args}: {contains!r} not in {text!r}")
        entry: dict[str, Any] = {"name": c.name, "tool_call_id": c.id, "args": c.args, "contains": contains}
        if agent:
            entry["agent"] = agent
        results.append(entry)
    return results, docs


def expected_for(sc: Scenario) -> dict[str, Any]:
    """expected.json content, from the scenario definition and the in-memory data only."""
    answers = []
    seen_results: list[dict[str, Any]] = []
    seen_docs: list[dict[str, Any]] = []
    for turn in sc.turns:
        calls = [c for step in turn.steps if isinstance(step, list) for c in step]
        res, docs = _tool_result_entries(calls, sc.sub_agent)
        if sc.kind == "rag_chain":
            docs = [_doc_entry(d) for d in kb_search(turn.question)]
        seen_results += res
        seen_docs += docs
        for nv in turn.not_visible:
            assert nv not in turn.answer
        ans: dict[str, Any] = {
            "question": turn.question,
            "text": turn.answer,
            "refusal": turn.refusal,
            "tool_results": list(seen_results),  # everything visible to this answer
            "documents": list(seen_docs),
            "not_visible": list(turn.not_visible),
            "hops": turn.hops,
            "notes": turn.notes,
        }
        if turn.user_statements:
            ans["user_statements"] = turn.user_statements
        answers.append(ans)
    return {
        "scenario": sc.name,
        "description": sc.description,
        "kind": sc.kind,
        "session_id": _session_id(sc),
        "model_name": MODEL_NAME,
        "answers": answers,
    }


def _session_id(sc: Scenario) -> str:
    return f"sess-{sc.name.replace('_', '-')}"


# --------------------------------------------------------------------------------------------
# LangChain pieces: scripted chat model, retriever, tools, agents, run collector
# --------------------------------------------------------------------------------------------


def _build_langchain_classes() -> dict[str, Any]:
    """Import LangChain lazily (after instrumentation) and define the fake model and retriever."""
    from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from pydantic import PrivateAttr

    class ScriptedChatModel(BaseChatModel):
        """A chat model that replays a fixed script of AIMessages (text or tool calls)."""

        model_name: str = MODEL_NAME
        temperature: float = 0.0
        _script: list[list[Call] | str] = PrivateAttr(default_factory=list)
        _cursor: int = PrivateAttr(default=0)

        def __init__(self, script: list[list[Call] | str], **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._script = list(script)

        @classmethod
        def is_lc_serializable(cls) -> bool:
            return True  # like real provider classes: serialized["kwargs"] carries model_name

        @classmethod
        def get_lc_namespace(cls) -> list[str]:
            return ["trace_auditor_fixtures", "chat_models"]

        @property
        def _llm_type(self) -> str:
            return "scripted-chat"

        @property
        def _identifying_params(self) -> dict[str, Any]:
            return {"model_name": self.model_name, "temperature": self.temperature}

        def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
            formatted = [convert_to_openai_tool(t) for t in tools]
            return self.bind(tools=formatted, **kwargs)

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: CallbackManagerForLLMRun | None = None,
            **kwargs: Any,
        ) -> ChatResult:
            if self._cursor >= len(self._script):
                raise RuntimeError("ScriptedChatModel ran out of scripted steps")
            step = self._script[self._cursor]
            self._cursor += 1
            prompt_tokens = sum(len(str(m.content)) for m in messages) // 4 + 3 * len(messages)
            if isinstance(step, str):
                content, tool_calls, finish = step, [], "stop"
            else:
                content = ""
                tool_calls = [
                    {"name": c.name, "args": dict(c.args), "id": c.id, "type": "tool_call"} for c in step
                ]
                finish = "tool_calls"
            completion_tokens = len(content) // 4 + 12 * len(tool_calls) + 1
            msg = AIMessage(
                content=content,
                tool_calls=tool_calls,
                response_metadata={"model_name": self.model_name, "finish_reason": finish},
                usage_metadata={
                    "input_tokens": prompt_tokens,
                    "output_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            )
            return ChatResult(
                generations=[ChatGeneration(message=msg)], llm_output={"model_name": self.model_name}
            )

    class KBRetriever(BaseRetriever):
        """In-memory keyword retriever over KB_DOCS."""

        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return [
                Document(id=d["id"], page_content=d["page_content"], metadata=dict(d["metadata"]))
                for d in kb_search(query)
            ]

    return {"ScriptedChatModel": ScriptedChatModel, "KBRetriever": KBRetriever}


TOOL_LATENCY_S = 0.015  # makes parallel tool calls overlap visibly in time


def _make_tools(retriever: Any) -> dict[str, Any]:
    from langchain_core.tools import tool

    @tool
    def search_kb(query: str) -> str:
        """Search the support knowledge base (policies, reports, product sheets)."""
        return format_docs_text(retriever.invoke(query))

    @tool
    def search_orders(customer: str) -> str:
        """Find all orders of a customer by customer name."""
        time.sleep(TOOL_LATENCY_S)
        return search_orders_text(customer)

    @tool
    def get_order(order_id: str) -> str:
        """Get one order by its order id."""
        time.sleep(TOOL_LATENCY_S)
        return get_order_text(order_id)

    @tool
    def get_refund(order_id: str) -> str:
        """Get the refund issued for an order, if any."""
        time.sleep(TOOL_LATENCY_S)
        return get_refund_text(order_id)

    @tool
    def get_product(sku: str) -> str:
        """Get product details (name, price, warranty) by SKU."""
        time.sleep(TOOL_LATENCY_S)
        return get_product_text(sku)

    return {t.name: t for t in (search_kb, search_orders, get_order, get_refund, get_product)}


def _make_run_collector() -> Any:
    from auditor_langchain.live import RUN_KEYS, LangSmithChatRuns
    from langchain_core.tracers.schemas import Run

    class LangSmithStyleRunCollector(LangSmithChatRuns):
        """Records every run as LangSmith's LangChainTracer would post it (flat, no child_runs)."""

        name: str = "langsmith_style_run_collector"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.runs: list[Run] = []

        def _persist_run(self, run: Run) -> None:
            pass

        def _start_trace(self, run: Run) -> None:
            super()._start_trace(run)
            self.runs.append(run)

        def dump(self) -> list[dict[str, Any]]:
            from langsmith._internal._serde import dumps_json

            out = []
            for run in sorted(self.runs, key=lambda r: r.dotted_order or ""):
                d = {k: getattr(run, k, None) for k in RUN_KEYS}
                out.append(json.loads(dumps_json(d)))
            return out

    return LangSmithStyleRunCollector()


# --------------------------------------------------------------------------------------------
# OTLP encoding
# --------------------------------------------------------------------------------------------


def _b64_to_hex(value: str) -> str:
    return base64.b64decode(value).hex() if value else value


def request_to_otlp_json(request: Any) -> dict[str, Any]:
    """ExportTraceServiceRequest -> OTLP JSON (hex ids, integer enums, camelCase, int64 strings)."""
    from google.protobuf.json_format import MessageToDict

    data = MessageToDict(request, use_integers_for_enums=True)
    for rs in data.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for sp in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in sp:
                        sp[key] = _b64_to_hex(sp[key])
                for link in sp.get("links", []):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _b64_to_hex(link[key])
                sp.setdefault("status", {})
    return data


def spans_to_otlp_lines(spans: Sequence[Any], batch_size: int = 3) -> list[str]:
    """Spans -> JSON lines, one ExportTraceServiceRequest per batch, batched in end-time order."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    ordered = sorted(spans, key=lambda s: (s.end_time or 0, s.start_time or 0))
    lines = []
    for i in range(0, len(ordered), batch_size):
        req = encode_spans(ordered[i : i + batch_size])
        lines.append(json.dumps(request_to_otlp_json(req), ensure_ascii=False, separators=(",", ":")))
    return lines


# --------------------------------------------------------------------------------------------
# Capture harness
# --------------------------------------------------------------------------------------------


class Capture:
    """Both instrumentors active at once, each with its own TracerProvider and in-memory exporter."""

    def __init__(self) -> None:
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.oi_exporter = InMemorySpanExporter()
        self.ol_exporter = InMemorySpanExporter()
        resource = {
            "service.name": "support-agent-demo",
            "service.version": "0.3.1",
            "deployment.environment.name": "fixtures",
        }
        self.oi_provider = TracerProvider(resource=Resource.create(resource))
        self.oi_provider.add_span_processor(SimpleSpanProcessor(self.oi_exporter))
        self.ol_provider = TracerProvider(resource=Resource.create(resource))
        self.ol_provider.add_span_processor(SimpleSpanProcessor(self.ol_exporter))
        self.oi = LangChainInstrumentor()
        self.ol = LangchainInstrumentor()
        # separate_trace_from_runtime_context: OpenLLMetry attaches its spans to the OTel context;
        # without this flag OpenInference root spans would be parented to OpenLLMetry spans.
        self.oi.instrument(tracer_provider=self.oi_provider, separate_trace_from_runtime_context=True)
        self.ol.instrument(tracer_provider=self.ol_provider)

    def clear(self) -> None:
        self.oi_exporter.clear()
        self.ol_exporter.clear()

    def close(self) -> None:
        self.ol.uninstrument()
        self.oi.uninstrument()
        self.oi_provider.shutdown()
        self.ol_provider.shutdown()


def _history_messages(turn: Turn) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage

    msgs: list[Any] = []
    for role, text in turn.history:
        msgs.append(HumanMessage(text) if role == "user" else AIMessage(text))
    return msgs


def run_scenario(sc: Scenario, classes: dict[str, Any]) -> list[Any]:
    """Run the scenario under the run collector; returns the collector's runs."""
    from langchain_core.messages import HumanMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    collector = _make_run_collector()
    retriever = classes["KBRetriever"](name=RETRIEVER_NAME)
    script: list[list[Call] | str] = [s for t in sc.turns for s in t.steps]
    model = classes["ScriptedChatModel"](script, model_name=MODEL_NAME)
    session = _session_id(sc)
    base_config: dict[str, Any] = {
        "callbacks": [collector],
        "metadata": {"session_id": session, "user_id": "user-0042"},
        "configurable": {"thread_id": session},
    }

    if sc.kind == "rag_chain":
        turn = sc.turns[0]
        prompt = ChatPromptTemplate.from_messages(
            [
                (
                    "system",
                    "You answer questions about Example Appliances products using only the "
                    "context below. If the context does not contain the answer, say you don't "
                    "know.\n\nContext:\n{context}",
                ),
                ("human", "{question}"),
            ]
        )
        chain = (
            {
                "context": retriever | RunnableLambda(format_docs_text).with_config(run_name="format_docs"),
                "question": RunnablePassthrough(),
            }
            | prompt
            | model
            | StrOutputParser()
        ).with_config(run_name="rag_chain")
        out = chain.invoke(turn.question, base_config)
        assert out == turn.answer, out
        return collector.dump()

    tools = _make_tools(retriever)
    used = {c.name for t in sc.turns for step in t.steps if isinstance(step, list) for c in step}
    tool_list = [t for name, t in tools.items() if name in used]
    if sc.sub_agent is not None:
        sub = sc.sub_agent
        inner_model = classes["ScriptedChatModel"](sub.steps, model_name=MODEL_NAME)
        inner_agent = create_react_agent(
            inner_model,
            [tools["get_refund"], tools["get_order"]],
            prompt="You are the billing specialist. Answer only from the billing tools.",
            name=sub.name,
        )

        def _ask(question: str) -> str:
            result = inner_agent.invoke({"messages": [HumanMessage(question)]})
            return str(result["messages"][-1].content)

        ask_tool = tool(sub.tool_name, description=sub.tool_description)(_ask)
        tool_list.append(ask_tool)

    agent = create_react_agent(model, tool_list, prompt=SYSTEM_PROMPT, name="support_agent")

    def handle_support_request(inputs: dict[str, Any]) -> dict[str, Any]:
        return agent.invoke(inputs)

    entry = RunnableLambda(handle_support_request)
    history: list[Any] = []
    for turn in sc.turns:
        messages = [*history, *_history_messages(turn), HumanMessage(turn.question)]
        result = entry.invoke({"messages": messages}, base_config)
        final = result["messages"][-1]
        assert final.content == turn.answer, (final.content, turn.answer)
        history = list(result["messages"])
    return collector.dump()


def _write_otlp(path: Path, spans: Sequence[Any]) -> None:
    path.write_text("\n".join(spans_to_otlp_lines(spans)) + "\n", encoding="utf-8")


def generate(out_dir: Path, scenarios: list[str] | None = None) -> list[Path]:
    """Regenerate fixtures for ``scenarios`` (all by default) under ``out_dir``; returns the dirs."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    selected = [s for s in SCENARIOS if scenarios is None or s.name in scenarios]
    unknown = set(scenarios or []) - set(SCENARIO_NAMES)
    if unknown:
        raise ValueError(f"unknown scenarios: {sorted(unknown)}")
    out_dir = Path(out_dir)
    written: list[Path] = []
    with warnings.catch_warnings():
        # Library deprecation chatter (create_react_agent, pydantic, OpenLLMetry) is not ours.
        # Importing langchain_core installs "default" filters for its deprecation warnings, so
        # import first and then ignore everything for the duration of the capture.
        import langchain_core  # noqa: F401

        warnings.simplefilter("ignore")
        capture = Capture()
        try:
            classes = _build_langchain_classes()
            for sc in selected:
                expected = expected_for(sc)  # validates the script against the data first
                capture.clear()
                runs = run_scenario(sc, classes)
                capture.oi_provider.force_flush()
                capture.ol_provider.force_flush()
                oi_spans = capture.oi_exporter.get_finished_spans()
                ol_spans = capture.ol_exporter.get_finished_spans()
                d = out_dir / sc.name
                d.mkdir(parents=True, exist_ok=True)
                _write_otlp(d / "openinference.otlp.jsonl", oi_spans)
                (d / "openinference.otlp.pb").write_bytes(encode_spans(oi_spans).SerializeToString())
                _write_otlp(d / "openllmetry.otlp.jsonl", ol_spans)
                (d / "runtree.json").write_text(
                    json.dumps(runs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
                )
                (d / "expected.json").write_text(
                    json.dumps(expected, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
                )
                written.append(d)
        finally:
            capture.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures"))
    parser.add_argument(
        "--scenario",
        action="append",
        choices=SCENARIO_NAMES,
        help="scenario to generate (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    for d in generate(args.out, args.scenario):
        print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
