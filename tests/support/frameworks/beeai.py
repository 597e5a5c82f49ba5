"""BeeAI Framework (PyPI ``beeai-framework``) fixtures, traced by ``openinference-instrumentation-beeai``.

Each scenario runs through ``beeai_framework.agents.requirement.RequirementAgent`` (BeeAI's
recommended agent) with ``OpenAIChatModel`` pointed at the scripted model (Chat Completions, through
LiteLLM), the system prompt as the agent's instructions and the scenarios' tools made with BeeAI's
``@tool`` from ``tools.py``. The agent delivers its answer by calling its ``final_answer``
tool (``response``), so the scripted model turns each final text into that call.
``BeeAIInstrumentor`` writes the OpenInference spans, captured (``capture.py``) into
``agent.otlp.jsonl`` (the model called plainly) and ``stream.otlp.jsonl`` (``stream=True``: the
instrumentation merges the streamed chunks into one output message), five traces each; and
``stream_text.otlp.jsonl``: streamed with ``final_answer_as_tool=False``, so the answer is the
model's plain text. ``beeai_legacy.py`` runs BeeAI 0.1.18 with its instrumentation 0.1.5, which
writes one output message per streamed chunk.

    scripts/framework-fixtures beeai     # beeai.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS


def run(out: Path) -> None:
    with capture() as captured:
        from beeai_framework.adapters.openai import OpenAIChatModel
        from beeai_framework.agents.requirement import RequirementAgent
        from beeai_framework.backend import ChatModelParameters
        from beeai_framework.memory import UnconstrainedMemory
        from beeai_framework.tools import tool
        from openinference.instrumentation.beeai import BeeAIInstrumentor

        BeeAIInstrumentor().instrument(tracer_provider=captured.provider)

        async def runs(base_url: str, stream: bool, final_tool: bool) -> None:
            for scenario in scenarios():
                llm = OpenAIChatModel(
                    MODEL,
                    base_url=base_url,
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
                    final_answer_as_tool=final_tool,
                )
                output = await agent.run(scenario.question)
                text = output.last_message.text.strip()
                if text != scenario.answer:
                    raise SystemExit(f"beeai {scenario.name}: unexpected answer {text!r}")

        for stem, stream, final_tool in (
            ("agent", False, True),
            ("stream", True, True),
            ("stream_text", True, False),
        ):
            with ScriptedModel(final_tool=("final_answer", "response") if final_tool else None) as model:
                asyncio.run(runs(model.base_url, stream, final_tool))
            path = out / f"{stem}.otlp.jsonl"
            print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
