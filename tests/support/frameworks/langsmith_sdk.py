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
- ``langchain.multipart``: the same agent written with LangChain (``langchain-openai``'s
  ``ChatOpenAI.bind_tools``, ``StructuredTool``s, a ``RunnableLambda`` root), traced by LangChain's
  ``LangChainTracer`` through the same client: serialised LangChain messages and ``generations``
  in the multipart parts;
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
    "langchain": (True, False),
}


def langchain_agent(base_url: str) -> Any:
    """The same loop in LangChain (``ChatOpenAI.bind_tools``, ``@tool`` functions, a
    ``RunnableLambda`` root), traced by LangChain's own ``LangChainTracer`` through the client."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI

    def make_tool(name: str) -> Any:
        properties = TOOLS[name]["parameters"]["properties"]
        return StructuredTool.from_function(
            func=lambda **arguments: tool_text(name, **arguments),
            name=name,
            description=TOOLS[name]["description"],
            args_schema=TOOLS[name]["parameters"] | {"title": name, "properties": properties},
        )

    tools = {name: make_tool(name) for name in TOOLS}
    model = ChatOpenAI(model=MODEL, base_url=base_url, api_key="sk-scripted").bind_tools(list(tools.values()))

    def agent(question: str) -> str:
        messages: list[Any] = [SystemMessage(SYSTEM_PROMPT), HumanMessage(question)]
        while True:
            reply = model.invoke(messages)
            if not reply.tool_calls:
                return str(reply.content)
            messages.append(reply)
            for call in reply.tool_calls:
                messages.append(tools[call["name"]].invoke(call))  # a ToolMessage with the call's id

    return RunnableLambda(agent).with_config(run_name="support_agent")


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

        run_one = langchain_agent(model.base_url).invoke if stem == "langchain" else support_agent
        for scenario in scenarios():
            text = run_one(scenario.question).strip()
            if text != scenario.answer:
                raise SystemExit(f"{stem} {scenario.name}: unexpected answer {text!r}")
        client.flush()
        if stem == "langchain":
            from langchain_core.tracers.langchain import wait_for_all_tracers

            wait_for_all_tracers()
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
