"""Google ADK (PyPI ``google-adk``) fixtures: its real runner, agent loop and built-in tracer.

Each scenario runs through ``google.adk.runners.InMemoryRunner`` with an ``LlmAgent`` whose model
is ADK's ``LiteLlm`` pointed at the scripted model (``openai/`` provider: Chat Completions) and
whose tools are the scenario's tools as plain Python functions; the spans ADK's own tracer
(``google.adk.telemetry``) writes are captured (``capture.py``), one file per telemetry mode:

- ``no_content.otlp.jsonl``: ADK 2's default: the GenAI conventions (``invoke_workflow`` >
  ``invoke_agent`` > ``generate_content`` / ``execute_tool``) **without message content**, so
  nothing can be audited: the auditor must say so (a ``no_answer`` problem per trace);
- ``content.otlp.jsonl``: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``: the
  same spans with ``gen_ai.input.messages`` / ``output.messages`` / ``system_instructions`` and
  the tool calls' arguments and results.

ADK reads these settings from the environment once, so each mode runs in a process of its own.

    scripts/framework-fixtures google_adk     # google_adk.requirements.txt, pinned
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.frameworks.capture import capture
from tests.support.frameworks.scenarios import MODEL, SYSTEM_PROMPT, scenarios
from tests.support.frameworks.scripted_model import ScriptedModel
from tests.support.frameworks.tools import TOOLS

#: file stem -> environment of its process
VARIANTS: dict[str, dict[str, str]] = {
    "no_content": {},
    "content": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
}


async def _ask(runner: Any, question: str, index: int) -> str:
    from google.genai import types

    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u1")
    text = ""
    async for event in runner.run_async(
        user_id="u1",
        session_id=session.id,
        new_message=types.Content(role="user", parts=[types.Part(text=question)]),
    ):
        if event.is_final_response() and event.content and event.content.parts:
            text = "".join(p.text or "" for p in event.content.parts)
    return text.strip()


def run(out: Path, stem: str) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of LiteLLM's price list
    with ScriptedModel() as model, capture() as captured:
        from google.adk.agents import LlmAgent
        from google.adk.models.lite_llm import LiteLlm
        from google.adk.runners import InMemoryRunner

        llm = LiteLlm(model=f"openai/{MODEL}", api_base=model.base_url, api_key="sk-scripted")
        for index, scenario in enumerate(scenarios()):
            agent = LlmAgent(name="support_agent", model=llm, instruction=SYSTEM_PROMPT, tools=TOOLS)
            runner = InMemoryRunner(agent=agent, app_name="support")
            text = asyncio.run(_ask(runner, scenario.question, index))
            if text != scenario.answer:
                raise SystemExit(f"{stem} {scenario.name}: unexpected answer {text!r}")
        path = out / f"{stem}.otlp.jsonl"
        print(f"{path}: {captured.write(path)} spans")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--variant", choices=sorted(VARIANTS), help="run one variant in this process")
    args = parser.parse_args()
    if args.variant:
        run(args.out, args.variant)
        return
    for stem, extra in VARIANTS.items():
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        module = sys.modules["__main__"].__spec__.name  # type: ignore[union-attr]
        subprocess.run(
            [sys.executable, "-m", module, "--out", str(args.out), "--variant", stem],
            env={**env, **extra},
            check=True,
        )


if __name__ == "__main__":
    main()
