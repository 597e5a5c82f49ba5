"""Microsoft Agent Framework (PyPI ``agent-framework-core`` + ``agent-framework-openai``) fixtures.

Each scenario runs through ``agent_framework.Agent`` with ``OpenAIChatCompletionClient`` pointed at
the scripted model (Chat Completions) and the scenario's tools as plain functions (the framework
wraps them in ``FunctionTool``); the framework's own instrumentation (``observability.py``, on by
default; sensitive data switched on with ``enable_sensitive_telemetry``) writes its spans to the
global provider, captured (``capture.py``) into ``agent.otlp.jsonl``, five traces.

It puts the question and the instructions on the ``invoke_agent`` span
(``gen_ai.input.messages`` / ``gen_ai.system_instructions``) and each ``chat`` span's own messages
on that span, with ``execute_tool`` spans for the function calls.

    scripts/framework-fixtures agent_framework     # agent_framework.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS


async def _run_all(base_url: str) -> None:
    from agent_framework import Agent
    from agent_framework.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(model=MODEL, api_key="sk-scripted", base_url=base_url)
    for scenario in scenarios():
        agent = Agent(client=client, instructions=SYSTEM_PROMPT, name="support", tools=list(TOOLS))
        text = (await agent.run(scenario.question)).text.strip()
        if text != scenario.answer:
            raise SystemExit(f"{scenario.name}: unexpected answer {text!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with ScriptedModel() as model, capture() as captured:
        from agent_framework.observability import enable_sensitive_telemetry

        enable_sensitive_telemetry()
        asyncio.run(_run_all(model.base_url))
        path = args.out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
