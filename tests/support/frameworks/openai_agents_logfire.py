"""OpenAI Agents SDK (PyPI ``openai-agents``) traced through Logfire (``logfire.instrument_openai_agents``).

Each scenario runs through ``agents.Runner.run_sync`` with an ``Agent`` whose model is
``OpenAIChatCompletionsModel`` on the scripted model (Chat Completions) and the scenario's tools as
``function_tool`` functions. The SDK's own trace processors are replaced by none (nothing is sent
to OpenAI); Logfire turns the SDK's traces into OpenTelemetry spans (``logfire.configure`` with
``send_to_logfire=False``, its spans handed to the capture's exporter as an additional processor),
written (``capture.py``'s encoding) into ``agent.otlp.jsonl``, five traces.

    scripts/framework-fixtures openai_agents_logfire     # openai_agents_logfire.requirements.txt
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.support.frameworks.capture import otlp_lines
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import logfire
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
    from openai import AsyncOpenAI
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tests.support.frameworks.capture import RESOURCE

    exporter = InMemorySpanExporter()
    logfire.configure(
        send_to_logfire=False,
        console=False,
        service_name=RESOURCE["service.name"],
        service_version=RESOURCE["service.version"],
        environment=RESOURCE["deployment.environment.name"],
        additional_span_processors=[SimpleSpanProcessor(exporter)],
    )
    set_trace_processors([])
    logfire.instrument_openai_agents()
    with ScriptedModel() as model:
        client = AsyncOpenAI(base_url=model.base_url, api_key="sk-scripted")
        llm = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        tools = [function_tool(f) for f in TOOLS]
        for scenario in scenarios():
            agent = Agent(name="support", instructions=SYSTEM_PROMPT, model=llm, tools=tools)
            text = str(Runner.run_sync(agent, scenario.question).final_output).strip()
            if text != scenario.answer:
                raise SystemExit(f"{scenario.name}: unexpected answer {text!r}")
    logfire.force_flush()
    spans = list(exporter.get_finished_spans())
    path = args.out / "agent.otlp.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in otlp_lines(spans)), encoding="utf-8")
    print(f"{path}: {len(spans)} spans")


if __name__ == "__main__":
    main()
