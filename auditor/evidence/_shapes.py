"""Shapes agent frameworks give answers, questions and tool results, read the same for every convention.

- **Final-answer tools.** pydantic-ai returns structured output through a ``final_result`` tool
  (``final_result_<Type>`` for a union), smolagents, any-agent and BeeAI through ``final_answer``,
  others through ``final_output``, DSPy's ReAct ends with ``finish`` (no arguments: no answer): the call's argument is the answer (its ``answer`` / ``response``
  / ... text, else the whole structured value as JSON), and the call is not a tool result.
- **The question of a run** is the answer span's last user message; when its chat span lacks one
  (Microsoft Agent Framework and Semantic Kernel put it on ``invoke_agent``, OpenInference
  frameworks on the AGENT or CHAIN root's ``input.value``), an earlier chat span of the same run,
  then the enclosing agent or chain spans, give it; OpenLLMetry's decorators write the call as
  ``{"args": [...], "kwargs": {...}}``, whose first text argument is the question. A user turn that
  wraps the enclosing span's input in a template (smolagents' ``New task:``, BeeAI's ``Your task:``,
  a RAG prompt around a pipeline's ``question``) gives that input.
- **A question wrapped in a framework's prompt** (CrewAI's ``Current Task: <task>`` followed by
  the task's expected criteria) is the task's own words.
- **The call is context of its result**: :func:`call_text` renders ``name(arg="value")``, which
  the tool result's text ends with (``(called as name(arg="value"))``), so a result answers the
  question asked of the tool, and the judge sees both.
- **Error payloads**: ``{"error": ...}`` (or MCP's ``isError``, a ``status`` of ``error``) inside
  a result whose span succeeded is still an error result.
"""

from __future__ import annotations

import json
import re
from typing import Any

from auditor.trace import Message, ToolCall, loads_fast

#: Tool names through which frameworks deliver the final answer (``final_result_<Type>`` too).
#: DSPy ReAct's ``finish`` is its "done" signal: no result (its answer comes from the extraction step).
FINAL_TOOLS = frozenset({"final_result", "final_answer", "final_output", "finish"})
#: Argument keys that hold a final answer's text, in the order they are tried.
_ANSWER_KEYS = ("answer", "response", "final_answer", "output", "result", "text", "content")
#: Keys of a root span's JSON input that hold the user's question.
_QUESTION_KEYS = (
    "input",
    "query",
    "query_str",  # LlamaIndex query engines
    "question",
    "task",
    "message",
    "prompt",
    "user_input",
    "user_prompt",
)


def is_final_tool(name: str | None) -> bool:
    """Whether ``name`` is a tool through which a framework delivers its final answer."""
    return bool(name) and (name in FINAL_TOOLS or str(name).startswith("final_result_"))


def final_answer_text(calls: tuple[ToolCall, ...]) -> str | None:
    """The answer a final-answer tool call delivers, or None when no call is one (or it is empty)."""
    for call in calls:
        if not is_final_tool(call.name):
            continue
        arguments = call.arguments
        if isinstance(arguments, str):
            return arguments.strip() or None
        if not arguments:
            return None
        for key in _ANSWER_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value.strip():
                return value
        texts = [v for v in arguments.values() if isinstance(v, str)]
        if len(arguments) == 1 and texts:
            return texts[0]
        return json.dumps(arguments, ensure_ascii=False)
    return None


def _parse(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return loads_fast(stripped.encode())
    except ValueError:
        return None


def question_from_input(text: str | None) -> str | None:
    """The user's question in an agent or chain span's plain input (``input.value``), or None."""
    if not text or not text.strip():
        return None
    parsed = _parse(text)
    if parsed is None:
        return None if text.lstrip().startswith(("{", "[")) else text.strip()
    if isinstance(parsed, dict):
        if isinstance(parsed.get("args"), list) and isinstance(parsed.get("kwargs"), dict):
            # OpenLLMetry's decorators: the call's {"args": [...], "kwargs": {...}}; the first text.
            texts = [a for a in parsed["args"] if isinstance(a, str) and a.strip()]
            if texts:
                return texts[0].strip()
            parsed = parsed["kwargs"]
        for key in _QUESTION_KEYS:
            value = parsed.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def questions_in_input(text: str | None) -> list[str]:
    """Every question-keyed string in a span's JSON input, at any depth (Haystack's pipeline input
    is ``{"data": {component: {"question": ...}}}``), outermost first; [] when it is not JSON."""
    parsed = _parse(text or "")
    found: list[str] = []
    level = [parsed]
    for _ in range(4):  # a pipeline's inputs sit three levels down; deeper is not a question
        deeper: list[Any] = []
        for value in level:
            if isinstance(value, dict):
                found.extend(
                    v.strip()
                    for k, v in value.items()
                    if k in _QUESTION_KEYS and isinstance(v, str) and v.strip()
                )
                deeper.extend(v for v in value.values() if isinstance(v, dict))
        level = deeper
    return found


#: CrewAI's user turn: the task, then its criteria (``crewai/translations/en.json`` ``task``).
_CREWAI_TASK = re.compile(r"\A\s*Current Task: (?P<task>.+?)\n\nThis is the expected criteria", re.DOTALL)


def task_question(text: str | None) -> str | None:
    """The question inside a framework's wrapping of it (CrewAI's ``Current Task: ...``), else ``text``."""
    if text is None:
        return None
    match = _CREWAI_TASK.match(text)
    return match.group("task").strip() if match else text


def last_user_message(messages: tuple[Message, ...]) -> str | None:
    users = [m.content for m in messages if m.role == "user" and m.content.strip()]
    return users[-1] if users else None


def call_text(name: str, arguments: dict[str, Any] | str | None) -> str | None:
    """``name(k="v", ...)`` with every value in full (JSON), or None when there are no arguments."""
    if arguments is None or arguments == {} or (isinstance(arguments, str) and not arguments.strip()):
        return None
    if isinstance(arguments, dict):
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    else:
        inner = arguments.strip()
    return f"{name}({inner})"


_CALL_SUFFIX = "\n(called as "


def without_call(text: str) -> str:
    """An item's text without the ``(called as ...)`` line :func:`with_call` appended: what the
    tool returned. A quote from that line alone is the agent's question, not the tool's answer."""
    at = text.rfind(_CALL_SUFFIX)
    return text[:at] if at >= 0 and text.endswith(")") else text


def with_call(call: str | None, result: str) -> str:
    """The tool result's evidence text: the result, then the call it answers.

    The result comes first so a JSON result is still read as JSON (the offline judge reads its
    key paths) and quotes keep the offsets they have in the result alone.
    """
    return f"{result}{_CALL_SUFFIX}{call})" if call else result


def error_payload(result: str) -> bool:
    """Whether a tool's result is an error report (``{"error": "..."}``, ``isError``, status error)."""
    parsed = _parse(result)
    if not isinstance(parsed, dict):
        return False
    if parsed.get("error") or parsed.get("isError") is True:
        return True
    return str(parsed.get("status", "")).lower() == "error"
