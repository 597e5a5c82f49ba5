"""What OpenInference-instrumented frameworks put inside the convention's generic attributes.

The OpenInference spec fixes the attribute names (``input.value``, ``output.value``,
``llm.output_messages``); each framework's instrumentation fills them with its own objects. The
shapes read here were seen in captures made by the real packages (``tests/fixtures/frameworks/``):

- **Tool arguments in a call envelope.** ``input.value`` of a TOOL span is the framework's call,
  not the model's arguments: smolagents writes ``{"args": [], "sanitize_inputs_outputs": true,
  "kwargs": {...}}``, LlamaIndex ``{"kwargs": {...}}``, BeeAI ``{"input": {...}, "options": null}``.
  The arguments are the inner object.
- **Tool output objects.** LlamaIndex's ``FunctionTool`` writes its ``ToolOutput``
  (``{"blocks": [{"text": ...}], "tool_name", "raw_input", "raw_output", "is_error"}``): the
  result is the blocks' text.
"""

from __future__ import annotations

from typing import Any

#: Keys of a call envelope besides the arguments object: (the arguments' key, the others allowed).
_ENVELOPES: tuple[tuple[str, frozenset[str]], ...] = (
    ("kwargs", frozenset({"args", "sanitize_inputs_outputs"})),  # smolagents, LlamaIndex
    ("input", frozenset({"options", "context"})),  # BeeAI
)


def unwrap_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """The model's arguments inside a framework's call envelope, or ``args`` as they are."""
    for key, others in _ENVELOPES:
        inner = args.get(key)
        if not isinstance(inner, dict) or not set(args) - {key} <= others:
            continue
        if key == "kwargs" and args.get("args"):
            continue  # positional arguments too: not a plain keyword call
        return inner
    return args


def tool_output_text(output: Any) -> str | None:
    """The result text of a framework's tool output object (LlamaIndex ``ToolOutput``), else None."""
    if (
        not isinstance(output, dict)
        or not isinstance(output.get("blocks"), list)
        or "tool_name" not in output
    ):
        return None
    texts = [b["text"] for b in output["blocks"] if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(texts) if texts else None
