"""smolagents (PyPI ``smolagents``) fixtures, traced by ``openinference-instrumentation-smolagents``.

Each scenario runs through ``smolagents.ToolCallingAgent`` with ``OpenAIServerModel`` pointed at
the scripted model (Chat Completions), the system prompt as the agent's ``instructions`` and the
scenarios' tools made with smolagents' ``@tool`` from ``tools.py``. smolagents' agent
answers by calling its ``final_answer`` tool (``answer``), so the scripted model turns each final
text into that call. ``SmolagentsInstrumentor`` writes the OpenInference spans, captured
(``capture.py``) into ``agent.otlp.jsonl``, five traces.

    scripts/framework-fixtures smolagents     # smolagents.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS


def run(out: Path) -> None:
    with ScriptedModel(final_tool=("final_answer", "answer")) as model, capture() as captured:
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
        from smolagents import OpenAIServerModel, ToolCallingAgent, tool

        SmolagentsInstrumentor().instrument(tracer_provider=captured.provider)
        llm = OpenAIServerModel(model_id=MODEL, api_base=model.base_url, api_key="sk-scripted")
        for scenario in scenarios():
            agent = ToolCallingAgent(
                tools=[tool(fn) for fn in TOOLS],
                model=llm,
                name="support_agent",
                instructions=SYSTEM_PROMPT,
                verbosity_level=0,
            )
            text = str(agent.run(scenario.question)).strip()
            if text != scenario.answer:
                raise SystemExit(f"smolagents {scenario.name}: unexpected answer {text!r}")
        path = out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
