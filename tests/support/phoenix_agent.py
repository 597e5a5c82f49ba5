"""A real OpenInference-instrumented tool-using agent, for the Phoenix tests.

The agent is a plain loop over the real ``openai`` client (instrumented by
``openinference-instrumentation-openai``) against the tests' fake OpenAI-compatible server, which
replays its scripted replies: the model asks for the ``lookup_order`` tool, the agent runs it in a
``TOOL`` span (OpenInference attributes, as agents that trace their own tools write them), and the
model answers. One trace per question, under an ``AGENT`` span.

Its spans go to two places at once: to Phoenix over OTLP/HTTP, and to an in-memory exporter that
:func:`run_agent` writes as OTLP JSON lines, as the Collector's file exporter would: the same spans,
so an audit of the file is what an audit pulled from Phoenix must equal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: What the ``lookup_order`` tool knows: the evidence the answers are judged against.
ORDERS = {
    "A-1001": "Order A-1001 shipped on 3 March 2026 with DHL. The tracking number is 00340434161.",
    "A-1002": "Order A-1002 is delayed. The new delivery date is 9 May 2026.",
}

SYSTEM = "You are the support assistant of an online shop. Answer from the order system only."

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "The status of an order in the order system.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
]


@dataclass(frozen=True)
class Turn:
    """A question about ``order_id`` and the answer the scripted model gives after the tool ran."""

    question: str
    order_id: str
    answer: str


TURNS = [
    Turn("Where is my order A-1001?", "A-1001", "Order A-1001 shipped on 3 March 2026 with DHL."),
    Turn(
        "When will order A-1002 arrive?",
        "A-1002",
        "Order A-1002 was delivered on 2 May 2026. You will get a 10% refund for the delay.",
    ),
]


def script(fake: Any, turns: list[Turn]) -> None:
    """Queue the model's replies on the fake server: per turn a tool call, then the answer."""
    for number, turn in enumerate(turns):
        call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": "lookup_order", "arguments": json.dumps({"order_id": turn.order_id})},
        }
        fake.chat_replies += [{"content": None, "tool_calls": [call]}, {"content": turn.answer}]


def run_agent(base_url: str, phoenix_url: str, project: str, file: Path, turns: list[Turn]) -> int:
    """Run the agent over ``turns``, its spans exported to Phoenix (``phoenix_url``, project
    ``project``) and written to ``file``; returns the number of spans."""
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tests.support.frameworks.capture import otlp_lines

    resource = Resource.create({"service.name": "order-support-agent", "openinference.project.name": project})
    provider = TracerProvider(resource=resource)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{phoenix_url}/v1/traces")))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
        tracer = provider.get_tracer("order-support-agent")
        for turn in turns:
            _one_turn(client, tracer, turn)
    finally:
        instrumentor.uninstrument()
        provider.force_flush()
    spans = list(memory.get_finished_spans())
    provider.shutdown()
    file.write_text("".join(line + "\n" for line in otlp_lines(spans)), encoding="utf-8")
    return len(spans)


def _one_turn(client: Any, tracer: Any, turn: Turn) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": turn.question},
    ]
    with tracer.start_as_current_span(
        "order_support_agent",
        attributes={"openinference.span.kind": "AGENT", "input.value": turn.question},
    ) as agent:
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        reply = first.choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls or []:
            arguments = json.loads(call.function.arguments)
            with tracer.start_as_current_span(
                call.function.name,
                attributes={
                    "openinference.span.kind": "TOOL",
                    "tool.name": call.function.name,
                    "input.value": call.function.arguments,
                    "input.mime_type": "application/json",
                },
            ) as tool:
                result = ORDERS.get(arguments["order_id"], "No such order.")
                tool.set_attribute("output.value", result)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        final = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        agent.set_attribute("output.value", final.choices[0].message.content or "")
