"""LangSmith's OpenTelemetry exporter (PyPI ``langsmith``) over the Anthropic SDK (``anthropic``).

A plain tool-use loop of the Anthropic Messages API (what an agent built on the SDK itself runs),
traced the LangSmith way: ``wrap_anthropic`` around the client (one ``llm`` run per model call) and
``@traceable`` on the loop (a ``chain`` run) and on each tool (a ``tool`` run); LangSmith's client
in ``tracing_mode="otel"`` with the capture's provider writes each run as an OpenTelemetry span,
the run's inputs as JSON in the ``gen_ai.prompt`` attribute and its outputs in
``gen_ai.completion`` (the deprecated GenAI form). The model is the scripted model speaking the
Anthropic protocol; the system prompt is given as a list of text blocks and the conversation
carries Anthropic content blocks (``tool_use`` from the model, ``tool_result`` sent back).
Written (``capture.py``) into ``agent.otlp.jsonl``, five traces.

    scripts/framework-fixtures anthropic_genai     # anthropic_genai.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, TOOLS, scenarios, tool_text
from tests.support.frameworks.scripted_model import ScriptedModel


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    os.environ.setdefault("LANGSMITH_TRACING", "true")
    # Not the global provider: the Anthropic SDK's own spans (content-free) would go there too.
    with ScriptedModel() as model, capture(set_global=False) as captured:
        import anthropic
        from langsmith import Client, traceable
        from langsmith.wrappers import wrap_anthropic

        ls = Client(api_key="ls-scripted", tracing_mode="otel", otel_tracer_provider=captured.provider)
        client = wrap_anthropic(
            anthropic.Anthropic(base_url=model.base_url.removesuffix("/v1"), api_key="sk-scripted"),
            tracing_extra={"client": ls},
        )
        tools = [
            {"name": n, "description": t["description"], "input_schema": t["parameters"]}
            for n, t in TOOLS.items()
        ]

        def call_tool(name: str, arguments: dict[str, Any]) -> str:
            # One tool run named after the tool, its arguments as the run's inputs.
            return str(
                traceable(run_type="tool", name=name, client=ls)(lambda **kw: tool_text(name, **kw))(
                    **arguments
                )
            )

        @traceable(run_type="chain", name="support_agent", client=ls)
        def agent(question: str) -> str:
            messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
            while True:
                reply = client.messages.create(
                    model=MODEL,
                    max_tokens=512,
                    system=[{"type": "text", "text": SYSTEM_PROMPT}],
                    tools=tools,
                    messages=messages,
                )
                messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
                uses = [b for b in reply.content if b.type == "tool_use"]
                if not uses:
                    return "".join(b.text for b in reply.content if b.type == "text")
                messages.append(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": b.id,
                                "content": call_tool(b.name, b.input),
                            }
                            for b in uses
                        ],
                    }
                )

        for scenario in scenarios():
            text = agent(scenario.question).strip()
            if text != scenario.answer:
                raise SystemExit(f"{scenario.name}: unexpected answer {text!r}")
        ls.flush()
        path = args.out / "agent.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
