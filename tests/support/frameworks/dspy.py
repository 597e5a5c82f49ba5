"""DSPy (PyPI ``dspy``) fixtures, traced by ``openinference-instrumentation-dspy``.

Each scenario runs through ``dspy.ReAct`` (signature ``question -> answer`` with the system prompt
as its instructions, the scenarios' tools from ``tools.py``) on ``dspy.LM`` pointed at the
scripted model (Chat Completions, through LiteLLM). ``DSPyInstrumentor`` writes the OpenInference
spans, captured (``capture.py``) into ``react.otlp.jsonl``, five traces.

DSPy's ChatAdapter has the model write fields as text (``[[ ## next_tool_name ## ]]`` ...), one
tool call per step and the trajectory so far inside the one user message, so this generator
answers the model calls itself (``override``): the scenario's tool calls one at a time (as many as
the trajectory holds observations), then ``finish``, then the extraction step's ``reasoning`` and
``answer`` (the scenario's final text).

    scripts/framework-fixtures dspy     # dspy.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import Decided, ScriptedModel
from tests.support.frameworks.tools import TOOLS

_OBSERVATION = re.compile(r"\[\[ ## observation_\d+ ## \]\]")


def _fields(**values: str) -> str:
    return "".join(f"[[ ## {k} ## ]]\n{v}\n\n" for k, v in values.items()) + "[[ ## completed ## ]]"


def _chat_adapter(protocol: str, body: dict[str, Any], decided: Decided | None) -> dict[str, Any] | None:
    if decided is None:
        return None
    sc = decided[0]
    messages = body.get("messages") or []
    system = str(messages[0].get("content", "")) if messages else ""
    last = str(messages[-1].get("content", "")) if messages else ""
    if "next_tool_name" not in system:  # the extraction step: reasoning, then the answer
        return {"text": _fields(reasoning="The tool results answer the question.", answer=sc.answer)}
    calls = [c for step in sc.steps for c in step.get("tool_calls", [])]
    done = len(_OBSERVATION.findall(last))
    if done < len(calls):
        call = calls[done]
        return {
            "text": _fields(
                next_thought=f"I should call {call['name']}.",
                next_tool_name=call["name"],
                next_tool_args=json.dumps(call["arguments"]),
            )
        }
    return {"text": _fields(next_thought="I can answer now.", next_tool_name="finish", next_tool_args="{}")}


def run(out: Path) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
    with ScriptedModel(override=_chat_adapter) as model, capture() as captured:
        import dspy
        from openinference.instrumentation.dspy import DSPyInstrumentor

        DSPyInstrumentor().instrument(tracer_provider=captured.provider)
        lm = dspy.LM(f"openai/{MODEL}", api_base=model.base_url, api_key="sk-scripted", cache=False)
        dspy.configure(lm=lm)
        signature = dspy.Signature("question -> answer", SYSTEM_PROMPT)
        for sc in scenarios():
            agent = dspy.ReAct(signature, tools=list(TOOLS))
            text = str(agent(question=sc.question).answer).strip()
            if text != sc.answer:
                raise SystemExit(f"dspy {sc.name}: unexpected answer {text!r}")
        path = out / "react.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
