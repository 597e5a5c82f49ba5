"""Haystack (PyPI ``haystack-ai``) fixtures, traced by ``openinference-instrumentation-haystack``.

``HaystackInstrumentor`` writes OpenInference spans for each pipeline run and component run,
captured (``capture.py``) into two files, the model being ``OpenAIChatGenerator`` on the scripted
model (Chat Completions):

- ``agent.otlp.jsonl``: each scenario through a pipeline holding one
  ``haystack.components.agents.Agent`` with the system prompt and the scenarios' tools
  (``create_tool_from_function`` over ``tools.py``), five traces;
- ``rag.otlp.jsonl``: the returns question through a retrieval pipeline (``InMemoryBM25Retriever``
  over two knowledge-base pages, ``ChatPromptBuilder``, ``OpenAIChatGenerator``), one trace. The
  scripted model answers a request without tools with the scenario's final text.

    scripts/framework-fixtures haystack     # haystack.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenario, scenarios, tool_text
from tests.support.frameworks.scripted_model import Decided, ScriptedModel
from tests.support.frameworks.tools import TOOLS

#: The knowledge base the RAG pipeline retrieves from.
PAGES = {
    "KB-7": tool_text("search_kb", query="returns"),
    "KB-12": "[KB-12] Refunds are paid to the original payment method within 5 business days of receipt.",
}


def _final_without_tools(
    protocol: str, body: dict[str, Any], decided: Decided | None
) -> dict[str, Any] | None:
    """A request without tools (the RAG pipeline's generator) gets the scenario's final text."""
    if decided is not None and not body.get("tools"):
        return {"text": decided[0].answer}
    return None


def run(out: Path) -> None:
    with ScriptedModel(override=_final_without_tools) as model, capture() as captured:
        from haystack import Document, Pipeline
        from haystack.components.agents import Agent
        from haystack.components.builders import ChatPromptBuilder
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
        from haystack.dataclasses import ChatMessage
        from haystack.document_stores.in_memory import InMemoryDocumentStore
        from haystack.tools import create_tool_from_function
        from haystack.utils import Secret
        from openinference.instrumentation.haystack import HaystackInstrumentor

        HaystackInstrumentor().instrument(tracer_provider=captured.provider)

        def generator() -> Any:
            return OpenAIChatGenerator(
                model=MODEL, api_base_url=model.base_url, api_key=Secret.from_token("sk-scripted")
            )

        for sc in scenarios():
            pipeline = Pipeline()
            pipeline.add_component(
                "support_agent",
                Agent(
                    chat_generator=generator(),
                    tools=[create_tool_from_function(fn) for fn in TOOLS],
                    system_prompt=SYSTEM_PROMPT,
                ),
            )
            result = pipeline.run({"support_agent": {"messages": [ChatMessage.from_user(sc.question)]}})
            text = (result["support_agent"]["last_message"].text or "").strip()
            if text != sc.answer:
                raise SystemExit(f"haystack agent {sc.name}: unexpected answer {text!r}")
        path = out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")

        store = InMemoryDocumentStore()
        store.write_documents([Document(id=key, content=text) for key, text in PAGES.items()])
        template = [
            ChatMessage.from_system(SYSTEM_PROMPT),
            ChatMessage.from_user(
                "Context:\n{% for doc in documents %}{{ doc.content }}\n{% endfor %}\nQuestion: {{ question }}"
            ),
        ]
        rag = Pipeline()
        rag.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=2))
        rag.add_component("prompt_builder", ChatPromptBuilder(template=template, required_variables="*"))
        rag.add_component("llm", generator())
        rag.connect("retriever.documents", "prompt_builder.documents")
        rag.connect("prompt_builder.prompt", "llm.messages")
        returns = scenario("returns_kb")
        result = rag.run(
            {"retriever": {"query": "returns refunds"}, "prompt_builder": {"question": returns.question}},
            include_outputs_from={"retriever"},
        )
        if len(result["retriever"]["documents"]) != len(PAGES):
            raise SystemExit(f"haystack rag: retrieved {result['retriever']['documents']}")
        text = (result["llm"]["replies"][0].text or "").strip()
        if text != returns.answer:
            raise SystemExit(f"haystack rag: unexpected answer {text!r}")
        path = out / "rag.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
