"""LangSmith SDK (PyPI ``langsmith``) fixtures: the ingest bodies its client sends, captured.

A small tool-calling agent runs each scenario against the scripted model: the OpenAI client wrapped
by ``langsmith.wrappers.wrap_openai`` (an ``llm`` run per model call), each tool a
``@traceable(run_type="tool")`` function, the loop a ``@traceable(run_type="chain")`` agent.
``LANGSMITH_ENDPOINT`` points at ``langsmith_capture.py``, which keeps the request bodies:

- ``batch.jsonl``: the server says ``use_multipart_endpoint: false``, so the client posts
  ``{"post": [...], "patch": [...]}`` to ``/runs/batch`` (one body per line);
- ``multipart.multipart``: the default, ``multipart/form-data`` to ``/runs/multipart``, one body
  after another (the runs' ``inputs`` / ``outputs`` in parts of their own);
- ``multipart_zstd.multipart``: the same when the server enables zstd compression (what the SDK
  sends to LangSmith today), stored decompressed;
- ``otel.otlp.jsonl``: ``Client(tracing_mode="otel")``: the SDK's own OpenTelemetry exporter turns
  each run into a span (``gen_ai.prompt`` / ``gen_ai.completion`` as span attributes, the
  deprecated GenAI form, and ``langsmith.span.kind``), captured through ``capture.py``.

Each variant runs in a process of its own (the client reads ``/info`` once).

    scripts/framework-fixtures langsmith_sdk     # langsmith_sdk.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.langsmith_capture import LangSmithCapture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, TOOLS, scenarios, tool_text
from tests.support.frameworks.scripted_model import ScriptedModel

#: file stem -> (multipart, zstd); ``otel`` sends nothing to the API but spans to OpenTelemetry
VARIANTS = {
    "batch": (False, False),
    "multipart": (True, False),
    "multipart_zstd": (True, True),
    "otel": (True, False),
}


def run(out: Path, stem: str) -> None:
    multipart, zstd = VARIANTS[stem]
    with (
        ScriptedModel() as model,
        LangSmithCapture(multipart=multipart, zstd=zstd) as api,
        capture() as spans,
    ):
        os.environ.update(
            LANGSMITH_TRACING="true",
            LANGSMITH_ENDPOINT=api.url,
            LANGSMITH_API_KEY="lsv2-scripted",
            LANGSMITH_PROJECT="support-agent-demo",
        )
        from langsmith import Client, traceable
        from langsmith.wrappers import wrap_openai
        from openai import OpenAI

        client = (
            Client(tracing_mode="otel", otel_tracer_provider=spans.provider) if stem == "otel" else Client()
        )
        llm = wrap_openai(OpenAI(base_url=model.base_url, api_key="sk-scripted"))

        def make_tool(name: str) -> Any:
            @traceable(run_type="tool", name=name, client=client)
            def call(**arguments: Any) -> str:
                return tool_text(name, **arguments)

            return call

        tools = {name: make_tool(name) for name in TOOLS}
        specs = [{"type": "function", "function": {"name": n, **spec}} for n, spec in TOOLS.items()]

        @traceable(run_type="chain", name="support_agent", client=client)
        def support_agent(question: str) -> str:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": question},
            ]
            while True:
                reply = llm.chat.completions.create(
                    model=MODEL, messages=messages, tools=specs, langsmith_extra={"client": client}
                )
                message = reply.choices[0].message
                if not message.tool_calls:
                    return message.content or ""
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    result = tools[call.function.name](**json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

        for scenario in scenarios():
            text = support_agent(scenario.question).strip()
            if text != scenario.answer:
                raise SystemExit(f"{stem} {scenario.name}: unexpected answer {text!r}")
        client.flush()
        if stem == "otel":
            path = out / f"{stem}.otlp.jsonl"
            print(f"{path}: {spans.write(path)} spans")
        else:
            api.write(out, stem)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--variant", choices=sorted(VARIANTS), help="run one variant in this process")
    args = parser.parse_args()
    if args.variant:
        run(args.out, args.variant)
        return
    module = sys.modules["__main__"].__spec__.name  # type: ignore[union-attr]
    for stem in VARIANTS:
        subprocess.run([sys.executable, "-m", module, "--out", str(args.out), "--variant", stem], check=True)


if __name__ == "__main__":
    main()
