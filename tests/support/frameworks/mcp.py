"""MCP tool calls: an OpenAI Agents SDK agent whose tools come from a real MCP server.

The agent (PyPI ``openai-agents``) runs on the scripted model through
``OpenAIChatCompletionsModel`` and gets its tools from ``mcp_server.py`` (PyPI ``mcp`` 2.x), started
as a stdio subprocess through the SDK's ``MCPServerStdio``: every tool call goes over MCP
(``tools/list``, ``tools/call``) and its result is the MCP ``CallToolResult``. The SDK's traces
become OpenTelemetry spans through ``openinference-instrumentation-openai-agents`` (its processor
replaces the SDK's default exporter, so nothing leaves the machine); the MCP client's own spans
(mcp 2.x ``mcp.shared._otel``) are captured with them. One file, five traces:
``mcp.otlp.jsonl``.

    scripts/framework-fixtures mcp     # mcp.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel


async def _run_all(base_url: str) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="sk-scripted")
    model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    root = Path(__file__).resolve().parents[3]
    params = {
        "command": sys.executable,
        "args": ["-m", "tests.support.frameworks.mcp_server"],
        "cwd": str(root),
    }
    async with MCPServerStdio(params=params, name="support-tools", cache_tools_list=True) as server:
        for scenario in scenarios():
            agent = Agent(name="Support agent", instructions=SYSTEM_PROMPT, model=model, mcp_servers=[server])
            result = await Runner.run(agent, scenario.question)
            text = str(result.final_output).strip()
            if text != scenario.answer:
                raise SystemExit(f"mcp {scenario.name}: unexpected answer {text!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with ScriptedModel() as scripted, capture() as captured:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        # exclusive_processor: the SDK's default exporter (to OpenAI's servers) is replaced.
        OpenAIAgentsInstrumentor().instrument(tracer_provider=captured.provider, exclusive_processor=True)
        asyncio.run(_run_all(scripted.base_url))
        path = args.out / "mcp.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
