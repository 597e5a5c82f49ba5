"""Strands Agents (PyPI ``strands-agents``) fixtures: its real agent loop and built-in tracer.

Each scenario runs through ``strands.Agent`` with ``OpenAIModel`` pointed at the scripted model
(Chat Completions, streamed, as Strands always calls it) and the scenario's tools as ``@tool``
functions; the spans Strands' own tracer writes are captured (``capture.py``) into one file per
convention, five traces each:

- ``legacy.otlp.jsonl``: the default (GenAI conventions v1.36): one span event per message
  (``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message``) and ``gen_ai.choice`` for outputs, each holding Bedrock-style content
  blocks (``text``, ``toolUse``, ``toolResult``) as JSON;
- ``latest.otlp.jsonl``: ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``:
  ``gen_ai.client.inference.operation.details`` events holding ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` / ``gen_ai.system_instructions``;
- ``latest_attributes.otlp.jsonl``: the same with ``gen_ai_span_attributes_only``, as span
  attributes instead of events (what Strands writes for Langfuse).

Strands reads the opt-in once, when its tracer is made, so each convention runs in a process of
its own. ``strands_v0.py`` runs the same loop with the 0.1 series (``gen_ai.prompt`` /
``gen_ai.completion`` as span attributes, the system prompt in a plain ``system_prompt`` attribute).

    scripts/framework-fixtures strands     # strands.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios, tool_text
from tests.support.frameworks.scripted_model import ScriptedModel

#: file stem -> OTEL_SEMCONV_STABILITY_OPT_IN
VARIANTS = {
    "legacy": "",
    "latest": "gen_ai_latest_experimental",
    "latest_attributes": "gen_ai_latest_experimental,gen_ai_span_attributes_only",
}


def make_tools() -> list[Any]:
    from strands import tool

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name
        """
        return tool_text("get_weather", city=city)

    @tool
    def search_orders(customer: str) -> str:
        """Orders placed by a customer.

        Args:
            customer: Customer name
        """
        return tool_text("search_orders", customer=customer)

    @tool
    def get_order(order_id: str) -> str:
        """One order by its id.

        Args:
            order_id: Order id
        """
        return tool_text("get_order", order_id=order_id)

    @tool
    def get_stock(sku: str) -> str:
        """Stock level of a product.

        Args:
            sku: Product SKU
        """
        return tool_text("get_stock", sku=sku)

    @tool
    def search_kb(query: str) -> str:
        """Search the support knowledge base.

        Args:
            query: Search words
        """
        return tool_text("search_kb", query=query)

    return [get_weather, search_orders, get_order, get_stock, search_kb]


def run(out: Path, stem: str) -> None:
    """Run every scenario through one Strands agent each, in this process; write ``stem``'s file."""
    with ScriptedModel() as model, capture() as captured:
        from strands import Agent
        from strands.models.openai import OpenAIModel
        from strands.telemetry import tracer as strands_tracer

        if "enable_console_export" in inspect.signature(strands_tracer.get_tracer).parameters:
            # The 0.1 series traces only when told to export; it then takes the SDK provider
            # capture() installed as the global one (adding no console exporter to it).
            strands_tracer.get_tracer(enable_console_export=True)
        llm = OpenAIModel(client_args={"base_url": model.base_url, "api_key": "sk-scripted"}, model_id=MODEL)
        options: dict[str, Any] = {"callback_handler": None}
        if "load_tools_from_directory" in Agent.__init__.__code__.co_varnames:
            options["load_tools_from_directory"] = False
        for scenario in scenarios():
            agent = Agent(model=llm, tools=make_tools(), system_prompt=SYSTEM_PROMPT, **options)
            text = str(agent(scenario.question)).strip()
            if text != scenario.answer:
                raise SystemExit(f"{stem} {scenario.name}: unexpected answer {text!r}")
        path = out / f"{stem}.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main(variants: dict[str, str] = VARIANTS) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--variant", choices=sorted(variants), help="run one variant in this process")
    args = parser.parse_args()
    if args.variant:
        run(args.out, args.variant)
        return
    for stem, opt_in in variants.items():
        env = {**os.environ, "OTEL_SEMCONV_STABILITY_OPT_IN": opt_in}
        module = sys.modules["__main__"].__spec__.name  # type: ignore[union-attr]
        subprocess.run(
            [sys.executable, "-m", module, "--out", str(args.out), "--variant", stem], env=env, check=True
        )


if __name__ == "__main__":
    main()
