"""LlamaIndex (PyPI ``llama-index-core``) fixtures, traced by ``openinference-instrumentation-llama-index``.

Two files, five traces in the first and one in the second, written by ``LlamaIndexInstrumentor``
(captured by ``capture.py``), the model being ``OpenAILike`` on the scripted model (Chat
Completions):

- ``agent.otlp.jsonl``: each scenario through ``llama_index.core.agent.workflow.FunctionAgent``
  with the system prompt and the scenarios' tools (``FunctionTool`` over ``tools.py``);
- ``query_engine.otlp.jsonl``: the returns question through a ``CustomQueryEngine`` (LlamaIndex's
  documented pattern): a ``VectorStoreIndex`` retriever over two knowledge-base pages (one node each,
  ids ``KB-7`` and ``KB-12``) (embedded by
  the scripted model's ``/embeddings``), then one ``llm.complete`` over the retrieved text, which
  the instrumentation writes as a completion span (``llm.prompts`` and ``output.value``, no
  messages). The scripted model answers a request without tools with the scenario's final text.

    scripts/framework-fixtures llama_index     # llama_index.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenario, scenarios, tool_text
from tests.support.frameworks.scripted_model import Decided, ScriptedModel
from tests.support.frameworks.tools import TOOLS

#: The knowledge base the query engine retrieves from: the returns page the ``search_kb`` tool
#: returns, and one more.
PAGES = [
    tool_text("search_kb", query="returns"),
    "[KB-12] Refunds are paid to the original payment method within 5 business days of receipt.",
]


def _final_without_tools(
    protocol: str, body: dict[str, Any], decided: Decided | None
) -> dict[str, Any] | None:
    """A request without tools (the query engine's completion) gets the scenario's final text."""
    if decided is not None and not body.get("tools"):
        return {"text": decided[0].answer}
    return None


def run(out: Path) -> None:
    with ScriptedModel(override=_final_without_tools) as model, capture() as captured:
        from llama_index.core import Settings, VectorStoreIndex
        from llama_index.core.agent.workflow import FunctionAgent
        from llama_index.core.query_engine import CustomQueryEngine
        from llama_index.core.retrievers import BaseRetriever
        from llama_index.core.schema import TextNode
        from llama_index.core.tools import FunctionTool
        from llama_index.embeddings.openai import OpenAIEmbedding
        from llama_index.llms.openai_like import OpenAILike
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument(tracer_provider=captured.provider)
        llm = OpenAILike(
            model=MODEL,
            api_base=model.base_url,
            api_key="sk-scripted",
            is_chat_model=True,
            is_function_calling_model=True,
            context_window=128000,
        )
        Settings.embed_model = OpenAIEmbedding(
            model_name="text-embedding-3-small", api_base=model.base_url, api_key="sk-scripted"
        )

        async def agent_runs() -> None:
            for sc in scenarios():
                agent = FunctionAgent(
                    name="support_agent",
                    tools=[FunctionTool.from_defaults(fn) for fn in TOOLS],
                    llm=llm,
                    system_prompt=SYSTEM_PROMPT,
                )
                text = str(await agent.run(user_msg=sc.question)).strip()
                if text != sc.answer:
                    raise SystemExit(f"llama_index agent {sc.name}: unexpected answer {text!r}")

        asyncio.run(agent_runs())
        path = out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")

        class KnowledgeBaseQueryEngine(CustomQueryEngine):
            """Retrieve, then complete: the pattern of LlamaIndex's custom query engine guide."""

            retriever: BaseRetriever

            def custom_query(self, query_str: str) -> str:
                nodes = self.retriever.retrieve(query_str)
                context = "\n\n".join(n.get_content() for n in nodes)
                prompt = f"{SYSTEM_PROMPT}\n\nContext:\n{context}\n\nQuestion: {query_str}\nAnswer:"
                return str(llm.complete(prompt))

        # One node per page, its id the page's ("KB-7"), as a knowledge base keyed by page would be.
        index = VectorStoreIndex([TextNode(id_=page[1:].split("]")[0], text=page) for page in PAGES])
        engine = KnowledgeBaseQueryEngine(retriever=index.as_retriever(similarity_top_k=2))
        returns = scenario("returns_kb")
        text = str(engine.query(returns.question)).strip()
        if text != returns.answer:
            raise SystemExit(f"llama_index query engine: unexpected answer {text!r}")
        path = out / "query_engine.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
