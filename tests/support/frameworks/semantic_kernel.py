"""Semantic Kernel Python (PyPI ``semantic-kernel``) fixtures: its ChatCompletionAgent and its own spans.

Each scenario is one ``ChatCompletionAgent`` (instructions = the shared system prompt) whose service
is ``OpenAIChatCompletion`` on the scripted model (an ``AsyncOpenAI`` client with its base URL),
with the scenario's tools as a plugin of ``@kernel_function`` methods and automatic function
calling. The spans are Semantic Kernel's own (``semantic_kernel.utils.telemetry``): the GenAI
conventions for ``invoke_agent``, ``chat.completions`` and ``execute_tool``, with message content
because ``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true`` is set before
the package is imported (it reads the setting once). One file, five traces:
``sk.otlp.jsonl``.

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

os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"

from semantic_kernel.functions import kernel_function  # after the settings above


class SupportTools:
    """The scenario tools as a Semantic Kernel plugin."""

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


async def _run_all(base_url: str) -> None:
    from openai import AsyncOpenAI
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion

    service = OpenAIChatCompletion(
        ai_model_id=MODEL, async_client=AsyncOpenAI(base_url=base_url, api_key="sk-scripted")
    )
    for scenario in scenarios():
        agent = ChatCompletionAgent(
            service=service, name="SupportAgent", instructions=SYSTEM_PROMPT, plugins=[SupportTools()]
        )
        # positional: SK's agent span records its input only from the positional argument
        response = await agent.get_response(scenario.question)
        text = str(response.content).strip()
        if text != scenario.answer:
            raise SystemExit(f"semantic_kernel {scenario.name}: unexpected answer {text!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with ScriptedModel() as scripted, capture() as captured:
        asyncio.run(_run_all(scripted.base_url))
        path = args.out / "sk.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
