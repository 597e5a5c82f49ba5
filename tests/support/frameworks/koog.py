"""JetBrains Koog (Kotlin/JVM) fixtures, written from Koog's own source: Koog cannot run here.

Koog is a Kotlin library (Maven Central / JetBrains' repository, neither reachable from this
machine), so this generator does not run Koog: it transcribes what Koog 0.5.4's OpenTelemetry
feature (``agents-features-opentelemetry``: ``feature/OpenTelemetry.kt``, ``span/*.kt``,
``event/*.kt``, ``attribute/SpanAttributes.kt``) writes with ``setVerbose(true)`` and its Langfuse
exporter (``integration/langfuse/LangfuseSpanAdapter.kt``), span by span and attribute by
attribute, through the OpenTelemetry Python SDK (``capture.py``), while the agent loop of Koog's
``singleRunStrategy(ToolCalls.SEQUENTIAL)`` (nodes ``nodeCallLLM`` = ``nodeLLMRequestMultiple``,
``nodeToolCalls`` = ``nodeExecuteMultipleToolsAndSendResults``) talks to the scripted model over
Chat Completions, as Koog's OpenAI client does. Every name below is Koog's:

- spans ``agent.<agentId>`` (create_agent) > ``run.<runId>`` (invoke_agent) >
  ``node.<nodeName>.<nodeId>`` (``koog.node.*``) > ``llm.<sha256 of the last prompt message,
  URL-safe base64>`` (chat) and ``tool.<name>.args.<sha256 of the arguments>`` (execute_tool):
  a span's name is its Koog id less its parent's (``GenAIAgentSpan.name``);
- the Langfuse adapter turns the inference span's message events into numbered attributes:
  ``gen_ai.prompt.N.role`` / ``.content`` (N the event's index; only role and content are kept,
  so a tool result carries **no tool_call_id**), a tool call in the prompt is Koog's
  ``Message.Tool.Call`` whose role is ``tool`` and whose content is the OpenAI-style tool-call list
  **as JSON text** (``ChoiceEvent`` + ``EventBodyFields.ToolCalls.valueString``); responses become
  ``gen_ai.completion.N.role`` (forced to ``assistant``) / ``.content`` (the text, or the tool-call
  JSON) / ``.finish_reason``;
- tool spans hold ``gen_ai.tool.name`` / ``gen_ai.tool.call.id`` / ``gen_ai.tool.description``
  and Koog's custom ``input.value`` (the arguments, JSON) and ``output.value`` (the result).

    scripts/framework-fixtures koog       # koog.requirements.txt: the OpenTelemetry SDK only
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, TOOLS, scenarios, tool_text
from tests.support.frameworks.scripted_model import ScriptedModel

#: ``OpenTelemetryConfig.setServiceInfo``: the service name is also Koog's instrumentation scope.
SERVICE = {"service.name": "support-agent-demo", "service.version": "0.3.1"}


def sha256base64(text: str) -> str:
    """Koog's ``String.sha256base64()`` (``span/CryptographyUtil.kt``): URL-safe, padded."""
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _json(value: Any) -> str:
    """kotlinx.serialization's compact JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class KoogRun:
    """One ``AIAgent.run(question)``: Koog's prompt (its ``Message`` list) and the spans it writes."""

    def __init__(self, tracer: Any, base_url: str, question: str) -> None:
        self.tracer = tracer
        self.base_url = base_url
        self.question = question
        self.agent_id = str(uuid.uuid4())
        self.run_id = str(uuid.uuid4())
        #: Koog messages as (kind, fields): system / user / assistant / call / result.
        self.prompt: list[dict[str, Any]] = [{"kind": "system", "content": SYSTEM_PROMPT}]
        self.step = 0

    # ---- the model, as Koog's OpenAI client calls it -------------------------------------------

    def _wire(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for m in self.prompt:
            if m["kind"] in ("system", "user", "assistant"):
                messages.append({"role": m["kind"], "content": m["content"]})
            elif m["kind"] == "call":
                call = {
                    "id": m["id"],
                    "type": "function",
                    "function": {"name": m["tool"], "arguments": m["content"]},
                }
                if messages and messages[-1]["role"] == "assistant" and messages[-1].get("tool_calls"):
                    messages[-1]["tool_calls"].append(call)
                else:
                    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            else:
                messages.append({"role": "tool", "tool_call_id": m["id"], "content": m["content"]})
        return messages

    def _request(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        tools = [{"type": "function", "function": {"name": n, **spec}} for n, spec in TOOLS.items()]
        body = {"model": MODEL, "messages": self._wire(), "tools": tools, "temperature": 0.0}
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer sk-scripted"},
        )
        with urllib.request.urlopen(request) as reply:
            data = json.loads(reply.read())
        message = data["choices"][0]["message"]
        if message.get("tool_calls"):
            responses = [
                {
                    "kind": "call",
                    "id": c["id"],
                    "tool": c["function"]["name"],
                    "content": c["function"]["arguments"],
                }
                for c in message["tool_calls"]
            ]
        else:
            responses = [{"kind": "assistant", "content": message["content"]}]
        return responses, data["usage"]

    # ---- spans ---------------------------------------------------------------------------------

    @staticmethod
    def _tool_calls_json(m: dict[str, Any]) -> str:
        """``EventBodyFields.ToolCalls(listOf(call)).valueString(verbose = true)``."""
        return _json(
            [
                {
                    "function": {"name": m["tool"], "arguments": m["content"]},
                    "id": m["id"] or "",
                    "type": "function",
                }
            ]
        )

    def _prompt_attributes(self) -> dict[str, Any]:
        """``LangfuseSpanAdapter.onBeforeSpanStarted`` on the prompt's events, by event index."""
        attrs: dict[str, Any] = {}
        for index, m in enumerate(self.prompt):
            if m["kind"] == "call":  # ChoiceEvent: Role (Message.Tool.Call's role is Tool) + ToolCalls
                attrs[f"gen_ai.prompt.{index}.role"] = "tool"
                attrs[f"gen_ai.prompt.{index}.content"] = self._tool_calls_json(m)
            elif m["kind"] == "result":  # ToolMessageEvent: Role(Tool), Content, Id (the Id is dropped)
                attrs[f"gen_ai.prompt.{index}.role"] = "tool"
                attrs[f"gen_ai.prompt.{index}.content"] = m["content"]
            else:  # System / User / AssistantMessageEvent: Role, Content
                attrs[f"gen_ai.prompt.{index}.role"] = m["kind"]
                attrs[f"gen_ai.prompt.{index}.content"] = m["content"]
        return attrs

    def _completion_attributes(self, responses: list[dict[str, Any]]) -> dict[str, Any]:
        """``LangfuseSpanAdapter.onBeforeSpanFinished`` on the response events."""
        attrs: dict[str, Any] = {}
        for index, m in enumerate(responses):
            attrs[f"gen_ai.completion.{index}.role"] = "assistant"
            if m["kind"] == "call":  # ChoiceEvent: role forced to assistant, ToolCalls, FinishReason
                attrs[f"gen_ai.completion.{index}.content"] = self._tool_calls_json(m)
                attrs[f"gen_ai.completion.{index}.finish_reason"] = "tool_calls"
            else:  # AssistantMessageEvent: Role, Content
                attrs[f"gen_ai.completion.{index}.content"] = m["content"]
        return attrs

    def _llm(self, node: Any) -> list[dict[str, Any]]:
        """``interceptLLMCallStarting`` / ``interceptLLMCallCompleted``: one InferenceSpan."""
        from opentelemetry import trace

        name = "llm." + sha256base64(self.prompt[-1]["content"])
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.conversation.id": self.run_id,
            "gen_ai.request.model": MODEL,
            "gen_ai.request.temperature": 0.0,
            **self._prompt_attributes(),
        }
        context = trace.set_span_in_context(node)
        with self.tracer.start_as_current_span(
            name, context=context, kind=trace.SpanKind.CLIENT, attributes=attrs, end_on_exit=False
        ) as span:
            responses, usage = self._request()
            span.set_attribute("gen_ai.usage.input_tokens", usage["prompt_tokens"])
            span.set_attribute("gen_ai.usage.output_tokens", usage["completion_tokens"])
            span.set_attribute("gen_ai.usage.total_tokens", usage["total_tokens"])
            for key, value in self._completion_attributes(responses).items():
                span.set_attribute(key, value)
            last = "tool_calls" if responses[-1]["kind"] == "call" else "stop"
            span.set_attribute("gen_ai.response.finish_reasons", [last])
            span.set_status(trace.StatusCode.OK)
            span.end()
        self.prompt.extend(responses)
        return responses

    def _tool(self, node: Any, call: dict[str, Any]) -> None:
        """``interceptToolCallStarting`` / ``interceptToolCallCompleted``: one ExecuteToolSpan."""
        from opentelemetry import trace

        arguments = json.loads(call["content"])
        args_text = _json(arguments)  # Tool.encodeArgsToStringUnsafe
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.description": TOOLS[call["tool"]]["description"],
            "gen_ai.tool.name": call["tool"],
            "gen_ai.tool.call.id": call["id"],
            "input.value": args_text,
        }
        context = trace.set_span_in_context(node)
        span = self.tracer.start_span(
            f"tool.{call['tool']}.args.{sha256base64(args_text)}",
            context=context,
            kind=trace.SpanKind.INTERNAL,
            attributes=attrs,
        )
        result = tool_text(call["tool"], **arguments)
        span.set_attribute("output.value", result)  # Tool.encodeResultToStringUnsafe (a String result)
        span.set_status(trace.StatusCode.OK)
        span.end()
        self.prompt.append({"kind": "result", "id": call["id"], "tool": call["tool"], "content": result})

    def _node(self, parent: Any, name: str, node_input: str, body: Any) -> Any:
        """``interceptNodeExecutionStarting`` / ``Completed``: one NodeExecuteSpan around ``body``."""
        from opentelemetry import trace

        attrs = {
            "gen_ai.conversation.id": self.run_id,
            "koog.node.name": name,
            "koog.node.input": node_input,
            "langfuse.observation.metadata.langgraph_step": self.step,
            "langfuse.observation.metadata.langgraph_node": name,
        }
        self.step += 1
        span = self.tracer.start_span(
            f"node.{name}.{uuid.uuid4()}",
            context=trace.set_span_in_context(parent),
            kind=trace.SpanKind.INTERNAL,
            attributes=attrs,
        )
        output = body(span)
        span.set_attribute("koog.node.output", _json(output))
        span.set_status(trace.StatusCode.OK)
        span.end()
        return output

    def run(self) -> str:
        from opentelemetry import trace

        agent = self.tracer.start_span(
            f"agent.{self.agent_id}",
            kind=trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "create_agent",
                "gen_ai.system": "openai",
                "gen_ai.agent.id": self.agent_id,
                "gen_ai.request.model": MODEL,
            },
            context=trace.set_span_in_context(trace.INVALID_SPAN),
        )
        invoke = self.tracer.start_span(
            f"run.{self.run_id}",
            kind=trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.system": "openai",
                "gen_ai.agent.id": self.agent_id,
                "gen_ai.conversation.id": self.run_id,
                "langfuse.session.id": self.run_id,
            },
            context=trace.set_span_in_context(agent),
        )
        self._node(invoke, "__start__", _json(self.question), lambda _: self.question)

        def call_llm(node: Any) -> list[dict[str, Any]]:
            self.prompt.append({"kind": "user", "content": self.question})
            return self._llm(node)

        responses = self._node(invoke, "nodeCallLLM", _json(self.question), call_llm)
        while responses[-1]["kind"] == "call":

            def tools_then_llm(node: Any, calls: list[dict[str, Any]] = responses) -> list[dict[str, Any]]:
                for call in calls:  # SEQUENTIAL: one after the other, then one request with all results
                    self._tool(node, call)
                return self._llm(node)

            responses = self._node(invoke, "nodeToolCalls", _json(responses), tools_then_llm)
        answer = "\n".join(m["content"] for m in responses)
        self._node(invoke, "__finish__", _json(answer), lambda _: answer)
        invoke.set_status(trace.StatusCode.OK)
        invoke.end()
        agent.set_status(trace.StatusCode.OK)
        agent.end()  # interceptAgentClosing: the agent is closed after its one run
        return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with ScriptedModel() as model, capture(SERVICE) as captured:
        from opentelemetry import trace

        tracer = trace.get_tracer("support-agent-demo", "0.3.1")
        for scenario in scenarios():
            text = KoogRun(tracer, model.base_url, scenario.question).run()
            if text != scenario.answer:
                raise SystemExit(f"koog {scenario.name}: unexpected answer {text!r}")
        path = args.out / "langfuse.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


if __name__ == "__main__":
    main()
