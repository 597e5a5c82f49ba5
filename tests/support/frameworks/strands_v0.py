"""Strands Agents 0.1 series fixtures (``strands_v0.requirements.txt``): the loop of ``strands.py``
with the early tracer, which writes ``gen_ai.prompt`` / ``gen_ai.completion`` as span attributes
(Bedrock-style content blocks as JSON on model and tool spans, plain text on the agent span) and
the system prompt in a plain ``system_prompt`` attribute. It had no convention opt-in: one file.

    scripts/framework-fixtures strands_v0
"""

from __future__ import annotations

from tests.support.frameworks.strands import main

if __name__ == "__main__":
    main({"agent": ""})
