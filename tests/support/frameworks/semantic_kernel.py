"""Semantic Kernel (Python, PyPI ``semantic-kernel``) fixtures: its ``ChatCompletionAgent`` and its
own GenAI instrumentation.

Each scenario runs through ``ChatCompletionAgent`` with ``OpenAIChatCompletion`` on the scripted
model (Chat Completions) and the scenario's tools as a plugin of ``@kernel_function`` methods
(automatic function calling). Semantic Kernel's diagnostics, switched on with sensitive data by
``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE`` (read when it is imported),
write their spans to the global provider, captured (``capture.py``) into ``agent.otlp.jsonl``.

    scripts/framework-fixtures semantic_kernel     # semantic_kernel.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Annotated

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios, tool_text
from tests.support.frameworks.scripted_model import ScriptedModel


def _plugin() -> object:
    from semantic_kernel.functions import kernel_function

    class SupportTools:
        @kernel_function(description="Current weather for a city.")
        def get_weather(self, city: Annotated[str, "City name"]) -> str:
            return tool_text("get_weather", city=city)

        @kernel_function(description="Orders placed by a customer.")
        def search_orders(self, customer: Annotated[str, "Customer name"]) -> str:
            return tool_text("search_orders", customer=customer)

        @kernel_function(description="One order by its id.")
        def get_order(self, order_id: Annotated[str, "Order id"]) -> str:
            return tool_text("get_order", order_id=order_id)

        @kernel_function(description="Stock level of a product.")
        def get_stock(self, sku: Annotated[str, "Product SKU"]) -> str:
            return tool_text("get_stock", sku=sku)

        @kernel_function(description="Search the support knowledge base.")
        def search_kb(self, query: Annotated[str, "Search words"]) -> str:
            return tool_text("search_kb", query=query)

    return SupportTools()


async def _run_all(base_url: str) -> None:
    from openai import AsyncOpenAI
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion

    service = OpenAIChatCompletion(
        ai_model_id=MODEL, async_client=AsyncOpenAI(base_url=base_url, api_key="sk-scripted")
    )
    for scenario in scenarios():
        agent = ChatCompletionAgent(
            service=service, name="support", instructions=SYSTEM_PROMPT, plugins=[_plugin()]
        )
        text = str((await agent.get_response(messages=scenario.question)).content).strip()
        if text != scenario.answer:
            raise SystemExit(f"{scenario.name}: unexpected answer {text!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"
    with ScriptedModel() as model, capture() as captured:
        asyncio.run(_run_all(model.base_url))
        path = args.out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
