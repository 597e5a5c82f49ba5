"""OpenLLMetry (PyPI ``traceloop-sdk``) fixtures: its decorators around a plain-code agent.

Each scenario runs through a small tool-calling agent written as plain Python, with the SDK's
decorators around it: ``@workflow(name="support_agent")`` on the loop, ``@task(name="call_model")``
on the model call (the OpenAI client on the scripted model), ``@tool(name=...)`` on each tool.
The decorators write ``traceloop.span.kind`` and the function's arguments and return value as
JSON in ``traceloop.entity.input`` / ``traceloop.entity.output``. ``Traceloop.init`` gets an
in-memory exporter (``capture.otlp_lines`` writes the OTLP JSON lines):

- ``workflow_only.otlp.jsonl``: every instrumentation blocked, so the trace holds only the
  decorators' spans (the answer is the workflow's output; no span marks a model call but
  ``call_model``'s task);
- ``workflow_openai.otlp.jsonl``: the SDK's own OpenAI instrumentation on too (a ``openai.chat``
  span with ``gen_ai.input.messages`` / ``gen_ai.output.messages`` inside each ``call_model``).

``Traceloop.init`` may run once per process, so each variant runs in a process of its own.

    scripts/framework-fixtures openllmetry     # openllmetry.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import RESOURCE, otlp_lines
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, TOOLS, scenarios, tool_text
from tests.support.frameworks.scripted_model import ScriptedModel

VARIANTS = ("workflow_only", "workflow_openai")


def run(out: Path, stem: str) -> None:
    os.environ["TRACELOOP_TELEMETRY"] = "false"
    from openai import OpenAI
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from traceloop.sdk import Traceloop
    from traceloop.sdk.decorators import task, tool, workflow
    from traceloop.sdk.instruments import Instruments

    exporter = InMemorySpanExporter()
    blocked = set(Instruments) if stem == "workflow_only" else set(Instruments) - {Instruments.OPENAI}
    Traceloop.init(
        app_name=RESOURCE["service.name"],
        exporter=exporter,
        disable_batch=True,
        telemetry_enabled=False,
        resource_attributes=RESOURCE,
        block_instruments=blocked,
    )
    with ScriptedModel() as model:
        client = OpenAI(base_url=model.base_url, api_key="sk-scripted")

        def make_tool(name: str) -> Any:
            @tool(name=name)
            def call(**arguments: Any) -> str:
                return tool_text(name, **arguments)

            return call

        tools = {name: make_tool(name) for name in TOOLS}
        specs = [{"type": "function", "function": {"name": n, **spec}} for n, spec in TOOLS.items()]

        @task(name="call_model")
        def call_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
            reply = client.chat.completions.create(model=MODEL, messages=messages, tools=specs)
            return reply.choices[0].message.model_dump(exclude_none=True)

        @workflow(name="support_agent")
        def support_agent(question: str) -> str:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": question},
            ]
            while True:
                message = call_model(messages)
                if not message.get("tool_calls"):
                    return str(message.get("content") or "")
                messages.append(message)
                for call in message["tool_calls"]:
                    function = call["function"]
                    result = tools[function["name"]](**json.loads(function["arguments"]))
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

        for scenario in scenarios():
            text = support_agent(scenario.question).strip()
            if text != scenario.answer:
                raise SystemExit(f"{stem} {scenario.name}: unexpected answer {text!r}")
    spans = list(exporter.get_finished_spans())
    path = out / f"{stem}.otlp.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in otlp_lines(spans)), encoding="utf-8")
    print(f"{path}: {len(spans)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--variant", choices=VARIANTS, help="run one variant in this process")
    args = parser.parse_args()
    if args.variant:
        run(args.out, args.variant)
        return
    module = sys.modules["__main__"].__spec__.name  # type: ignore[union-attr]
    for stem in VARIANTS:
        subprocess.run([sys.executable, "-m", module, "--out", str(args.out), "--variant", stem], check=True)


if __name__ == "__main__":
    main()
