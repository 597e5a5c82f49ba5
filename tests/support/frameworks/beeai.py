"""BeeAI Framework (PyPI ``beeai-framework``) fixtures, traced by ``openinference-instrumentation-beeai``.

Each scenario runs through ``beeai_framework.agents.requirement.RequirementAgent`` (BeeAI's
recommended agent) with ``OpenAIChatModel`` pointed at the scripted model (Chat Completions, through
LiteLLM), the system prompt as the agent's instructions and the scenarios' tools made with BeeAI's
``@tool`` from ``plain_tools.py``. The agent delivers its answer by calling its ``final_answer``
tool (``response``), so the scripted model turns each final text into that call.
``BeeAIInstrumentor`` writes the OpenInference spans, captured (``capture.py``) into
``agent.otlp.jsonl`` (the model called plainly) and ``stream.otlp.jsonl`` (``stream=True``: the
instrumentation writes one output message per streamed chunk), five traces each.

    scripts/framework-fixtures beeai     # beeai.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from tests.support.frameworks.capture import capture
from tests.support.frameworks.plain_tools import TOOLS
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel


def run(out: Path) -> None:
    with ScriptedModel(final_tool=("final_answer", "response")) as model, capture() as captured:
        from beeai_framework.adapters.openai import OpenAIChatModel
        from beeai_framework.agents.requirement import RequirementAgent
        from beeai_framework.backend import ChatModelParameters
        from beeai_framework.memory import UnconstrainedMemory
        from beeai_framework.tools import tool
        from openinference.instrumentation.beeai import BeeAIInstrumentor

        BeeAIInstrumentor().instrument(tracer_provider=captured.provider)

        async def runs(stream: bool) -> None:
            for scenario in scenarios():
                llm = OpenAIChatModel(
                    MODEL,
                    base_url=model.base_url,
                    api_key="sk-scripted",
                    parameters=ChatModelParameters(stream=stream),
                    allow_parallel_tool_calls=True,  # two_cities calls get_weather twice at once
                )
                agent = RequirementAgent(
                    llm=llm,
                    name="support_agent",
                    tools=[tool(fn) for fn in TOOLS],
                    instructions=SYSTEM_PROMPT,
                    memory=UnconstrainedMemory(),
                )
                output = await agent.run(scenario.question)
                text = output.last_message.text.strip()
                if text != scenario.answer:
                    raise SystemExit(f"beeai {scenario.name}: unexpected answer {text!r}")

        for stem, stream in (("agent", False), ("stream", True)):
            asyncio.run(runs(stream))
            path = out / f"{stem}.otlp.jsonl"
            print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
