"""BeeAI Framework 0.1.18 fixtures, traced by ``openinference-instrumentation-beeai`` 0.1.5.

That instrumentation (its middleware, before the processors of 0.1.10) writes a streamed model
call as **one output message per streamed chunk** (``llm.output_messages.N``, a word each).
Two files, the model being ``OpenAIChatModel`` (LiteLLM) on the scripted model:

- ``agent.otlp.jsonl``: each scenario through ``ToolCallingAgent`` (BeeAI's tool-calling agent of
  the time: the model is called plainly, the answer delivered through its ``final_answer`` tool),
  the scenarios' tools made with ``@tool`` from ``tools.py``, five traces;
- ``chat_stream.otlp.jsonl``: each question asked of the model directly,
  ``ChatModel.create(messages=[system, user], stream=True)``, five traces; the scripted model
  answers a request without tools with the scenario's final text.

    scripts/framework-fixtures beeai_legacy     # beeai_legacy.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import Decided, ScriptedModel
from tests.support.frameworks.tools import TOOLS


def _final_without_tools(
    protocol: str, body: dict[str, Any], decided: Decided | None
) -> dict[str, Any] | None:
    """A request without tools (the direct chat) gets the scenario's final text."""
    if decided is not None and not body.get("tools"):
        return {"text": decided[0].answer}
    return None


def run(out: Path) -> None:
    with capture() as captured:
        from beeai_framework.adapters.openai import OpenAIChatModel
        from beeai_framework.agents.tool_calling import ToolCallingAgent
        from beeai_framework.backend import SystemMessage, UserMessage
        from beeai_framework.memory import UnconstrainedMemory
        from beeai_framework.tools import tool
        from openinference.instrumentation.beeai import BeeAIInstrumentor

        BeeAIInstrumentor().instrument(tracer_provider=captured.provider)

        async def agent_runs(base_url: str) -> None:
            for scenario in scenarios():
                llm = OpenAIChatModel(MODEL, base_url=base_url, api_key="sk-scripted")
                agent = ToolCallingAgent(
                    llm=llm, tools=[tool(fn) for fn in TOOLS], memory=UnconstrainedMemory()
                )
                output = await agent.run(scenario.question)
                text = output.result.text.strip()
                if text != scenario.answer:
                    raise SystemExit(f"beeai_legacy agent {scenario.name}: unexpected answer {text!r}")

        async def chat_runs(base_url: str) -> None:
            for scenario in scenarios():
                llm = OpenAIChatModel(MODEL, base_url=base_url, api_key="sk-scripted")
                output = await llm.create(
                    messages=[SystemMessage(SYSTEM_PROMPT), UserMessage(scenario.question)], stream=True
                )
                text = output.get_text_content().strip()
                if text != scenario.answer:
                    raise SystemExit(f"beeai_legacy chat {scenario.name}: unexpected answer {text!r}")

        with ScriptedModel(final_tool=("final_answer", "response")) as model:
            asyncio.run(agent_runs(model.base_url))
        path = out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")
        with ScriptedModel(override=_final_without_tools) as model:
            asyncio.run(chat_runs(model.base_url))
        path = out / "chat_stream.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
