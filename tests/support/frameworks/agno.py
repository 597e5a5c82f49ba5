"""agno (PyPI ``agno``) fixtures: its real agent loop, traced by ``openinference-instrumentation-agno``.

Each scenario runs through ``agno.agent.Agent`` with ``OpenAIChat`` pointed at the scripted model
(Chat Completions), the system prompt as the agent's ``system_message`` and the scenarios' tools
as plain functions (``tools.py``); ``AgnoInstrumentor`` writes the OpenInference spans,
captured (``capture.py``) into ``agent.otlp.jsonl`` (``agent.run``) and ``stream.otlp.jsonl``
(``agent.run(stream=True)``), five traces each.

    scripts/framework-fixtures agno     # agno.requirements.txt, pinned

``agno_legacy.py`` runs the same with agno 1.x and its instrumentation 0.1.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS


def run(out: Path) -> None:
    with ScriptedModel() as model, capture() as captured:
        from agno.agent import Agent
        from agno.models.openai import OpenAIChat
        from openinference.instrumentation.agno import AgnoInstrumentor

        AgnoInstrumentor().instrument(tracer_provider=captured.provider)
        for stem, stream in (("agent", False), ("stream", True)):
            for scenario in scenarios():
                llm = OpenAIChat(id=MODEL, base_url=model.base_url, api_key="sk-scripted")
                agent = Agent(
                    name="support_agent", model=llm, tools=list(TOOLS), system_message=SYSTEM_PROMPT
                )
                if stream:
                    text = "".join(
                        str(event.content)
                        for event in agent.run(scenario.question, stream=True)
                        # agno 2+ names the event RunContent, 1.x RunResponseContent
                        if getattr(event, "event", "") in ("RunContent", "RunResponseContent")
                        and event.content
                    )
                else:
                    text = str(agent.run(scenario.question).content)
                if text.strip() != scenario.answer:
                    raise SystemExit(f"agno {stem} {scenario.name}: unexpected answer {text!r}")
            path = out / f"{stem}.otlp.jsonl"
            print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
