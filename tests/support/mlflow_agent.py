"""A real tool-calling agent traced by MLflow Tracing, for the MLflow source's tests.

The agent is plain Python over the real ``openai`` client, pointed at the scripted model
(:mod:`tests.support.frameworks.scripted_model`, replaying ``scenarios.json``), instrumented the way
MLflow's own docs show: ``mlflow.openai.autolog()`` traces each chat completion (a ``CHAT_MODEL``
span with ``mlflow.spanInputs`` / ``mlflow.spanOutputs``), ``mlflow.trace(span_type="TOOL")`` each
tool (the scenarios' typed functions, ``tests/support/frameworks/tools.py``) and ``@mlflow.trace(span_type="AGENT")`` the loop. The traces go to the tracking server at
``--tracking-uri``, into ``--experiment``.

With ``--otlp-endpoint`` MLflow also exports the very same spans over OTLP/HTTP (its dual export,
``MLFLOW_TRACE_ENABLE_OTLP_DUAL_EXPORT``), which the tests write to a file: the spans as the
application exported them, to compare with what the server gives back.

Run in its own process (autolog patches the ``openai`` module for the whole process):

    python -m tests.support.mlflow_agent --tracking-uri http://127.0.0.1:5000 --experiment agent
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, TOOLS, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS as TOOL_FUNCTIONS


def run(tracking_uri: str, experiment: str, otlp_endpoint: str | None, names: list[str] | None) -> None:
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
    if otlp_endpoint:
        os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = otlp_endpoint
        os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
        os.environ["MLFLOW_TRACE_ENABLE_OTLP_DUAL_EXPORT"] = "true"
    import mlflow
    from openai import OpenAI

    mlflow.set_tracking_uri(tracking_uri)
    mlflow.set_experiment(experiment)
    mlflow.openai.autolog()

    # The scenarios' typed tool functions: MLflow records their parameters by name as the inputs.
    tools = {f.__name__: mlflow.trace(f, span_type="TOOL") for f in TOOL_FUNCTIONS}
    specs = [{"type": "function", "function": {"name": n, **spec}} for n, spec in TOOLS.items()]
    with ScriptedModel() as model:
        client = OpenAI(base_url=model.base_url, api_key="sk-scripted")

        @mlflow.trace(name="support_agent", span_type="AGENT")
        def support_agent(question: str) -> str:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": question},
            ]
            while True:
                reply = client.chat.completions.create(model=MODEL, messages=messages, tools=specs)
                message = reply.choices[0].message.model_dump(exclude_none=True)
                if not message.get("tool_calls"):
                    return str(message.get("content") or "")
                messages.append(message)
                for call in message["tool_calls"]:
                    function = call["function"]
                    result = tools[function["name"]](**json.loads(function["arguments"]))
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

        for scenario in scenarios():
            if names and scenario.name not in names:
                continue
            text = support_agent(scenario.question).strip()
            if text != scenario.answer:
                raise SystemExit(f"{scenario.name}: unexpected answer {text!r}")
    mlflow.flush_trace_async_logging()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tracking-uri", required=True)
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--otlp-endpoint", help="also export the spans over OTLP/HTTP to this URL")
    parser.add_argument("--scenario", action="append", help="only these scenarios (default: all)")
    args = parser.parse_args()
    run(args.tracking_uri, args.experiment, args.otlp_endpoint, args.scenario)


if __name__ == "__main__":
    main()
