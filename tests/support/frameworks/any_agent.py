"""any-agent (mozilla-ai, PyPI ``any-agent[openai]``) fixtures: its own ``tinyagent`` loop and tracing.

Each scenario runs through ``AnyAgent.create("tinyagent", AgentConfig(...))`` with the model
``vllm:scripted-gpt-4o`` (any-llm's vLLM provider: OpenAI Chat Completions) pointed at the scripted
model, and the scenario's tools as plain functions. For every provider but ``openai`` TinyAgent
requires a tool call each turn, adds its ``final_answer`` tool and tells the model to deliver the
answer through it (with ``openai`` it adds no such tool, and a ``final_answer`` call loops), so the scripted model turns every final text
into ``final_answer(answer=...)``. any-agent's span-generation callbacks write the spans to the
global provider (which it takes when it is imported), captured (``capture.py``) into
``agent.otlp.jsonl``, five traces: ``invoke_agent`` > ``call_llm MODEL`` (the OpenAI-format
messages without ``parts`` in ``gen_ai.input.messages``, the answer or the tool calls in
``gen_ai.output``) and ``execute_tool NAME`` (``gen_ai.tool.args``, the result in
``gen_ai.output``).

    scripts/framework-fixtures any_agent     # any_agent.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with ScriptedModel(final_tool=("final_answer", "answer")) as model, capture() as captured:
        from any_agent import AgentConfig, AnyAgent  # after capture(): it takes the global provider

        for scenario in scenarios():
            config = AgentConfig(
                model_id=f"vllm:{MODEL}",
                api_base=model.base_url,
                api_key="sk-scripted",
                instructions=SYSTEM_PROMPT,
                tools=list(TOOLS),
            )
            agent = AnyAgent.create("tinyagent", config)
            text = str(agent.run(scenario.question).final_output).strip()
            if text != scenario.answer:
                raise SystemExit(f"{scenario.name}: unexpected answer {text!r}")
        path = args.out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
