"""pydantic-ai (PyPI ``pydantic-ai-slim[openai]``) fixtures: its real agent loop and instrumentation.

Each scenario runs through ``pydantic_ai.Agent`` with ``OpenAIChatModel`` pointed at the scripted
model (Chat Completions) and the scenario's tools as ``tool_plain`` functions; the agent is
instrumented (``Agent.instrument_all(True)``: the package's default ``InstrumentationSettings``) and its spans
are captured (``capture.py``) into one file per output mode, five traces each:

- ``text.otlp.jsonl``: the agent answers in plain text (``output_type=str``);
- ``structured.otlp.jsonl``: the agent answers through its ``final_result`` tool
  (``output_type=Reply``, a model with one ``response`` field): the scripted model turns every
  final text into ``final_result(response=...)``.

The 2.x series writes its default instrumentation version (5: ``execute_tool X`` spans with
``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``); ``pydantic_ai_v1.py`` runs the same
loop with the 1.x series, whose default (version 2) names tool spans ``running tool`` with
``tool_arguments`` / ``tool_response``.

    scripts/framework-fixtures pydantic_ai     # pydantic_ai.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS


def _output_type(structured: bool) -> Any:
    if not structured:
        return str
    from pydantic import BaseModel

    class Reply(BaseModel):
        """The answer to the customer."""

        response: str

    return Reply


def run(out: Path, stem: str, captured: Any) -> None:
    """Run every scenario through one agent each; write ``stem``'s file."""
    structured = stem == "structured"
    final_tool = ("final_result", "response") if structured else None
    with ScriptedModel(final_tool=final_tool) as model:
        from pydantic_ai import Agent
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        Agent.instrument_all(True)  # the package's default InstrumentationSettings, global provider
        llm = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=model.base_url, api_key="sk-scripted"))
        for scenario in scenarios():
            agent = Agent(
                llm,
                output_type=_output_type(structured),
                system_prompt=SYSTEM_PROMPT,
                tools=TOOLS,
            )
            output = agent.run_sync(scenario.question).output
            text = (output.response if structured else str(output)).strip()
            if text != scenario.answer:
                raise SystemExit(f"{stem} {scenario.name}: unexpected answer {text!r}")
        path = out / f"{stem}.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with capture() as captured:  # one global provider per process: OpenTelemetry sets it once
        for stem in ("text", "structured"):
            run(args.out, stem, captured)


if __name__ == "__main__":
    main()
