"""CrewAI (PyPI ``crewai``) fixtures: its real crew, agent loop and tools, traced by OpenInference.

Each scenario is one ``Crew`` of one ``Agent`` (role, goal and backstory from the shared system
prompt) and one ``Task`` whose description is the question, with the scenario's tools as CrewAI
``@tool`` functions; the agent's ``LLM`` is ``openai/scripted-gpt-4o`` on the scripted model (CrewAI's
native OpenAI provider: Chat Completions with function calling). The spans are OpenInference's:
``openinference-instrumentation-crewai`` (crew, task, agent and tool spans) with
``openinference-instrumentation-openai`` (the model calls). CrewAI's own anonymous telemetry is
switched off (``CREWAI_DISABLE_TELEMETRY``), so nothing leaves the machine. One file, five traces:
``openinference.otlp.jsonl``.

    scripts/framework-fixtures crewai     # crewai.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios, tool_text
from tests.support.frameworks.scripted_model import ScriptedModel


def make_tools() -> list[Any]:
    from crewai.tools import tool

    @tool("get_weather")
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return tool_text("get_weather", city=city)

    @tool("search_orders")
    def search_orders(customer: str) -> str:
        """Orders placed by a customer."""
        return tool_text("search_orders", customer=customer)

    @tool("get_order")
    def get_order(order_id: str) -> str:
        """One order by its id."""
        return tool_text("get_order", order_id=order_id)

    @tool("get_stock")
    def get_stock(sku: str) -> str:
        """Stock level of a product."""
        return tool_text("get_stock", sku=sku)

    @tool("search_kb")
    def search_kb(query: str) -> str:
        """Search the support knowledge base."""
        return tool_text("search_kb", query=query)

    return [get_weather, search_orders, get_order, get_stock, search_kb]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
    os.environ["CREWAI_TRACING_ENABLED"] = "false"
    os.environ["OPENAI_API_KEY"] = "sk-scripted"
    with ScriptedModel() as scripted, capture() as captured:
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor

        CrewAIInstrumentor().instrument(tracer_provider=captured.provider)
        OpenAIInstrumentor().instrument(tracer_provider=captured.provider)
        from crewai import LLM, Agent, Crew, Task

        llm = LLM(model=f"openai/{MODEL}", base_url=scripted.base_url, api_key="sk-scripted")
        for scenario in scenarios():
            agent = Agent(
                role="Support agent",
                goal="Answer the customer's question",
                backstory=SYSTEM_PROMPT,
                llm=llm,
                tools=make_tools(),
                verbose=False,
            )
            task = Task(description=scenario.question, expected_output="A short answer.", agent=agent)
            text = str(Crew(agents=[agent], tasks=[task], verbose=False).kickoff().raw).strip()
            if text != scenario.answer:
                raise SystemExit(f"crewai {scenario.name}: unexpected answer {text!r}")
        path = args.out / "openinference.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
