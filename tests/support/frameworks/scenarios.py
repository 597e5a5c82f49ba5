"""The shared agent scenarios of the framework fixtures: questions, scripted steps, tools and data.

``scenarios.json`` beside this module is the one source: the scripted model replays its steps and
every framework's generator (Python here, Node through the JSON itself) runs the same tools over
the same data. Standard library only, so a generator's own virtual environment needs nothing of
the auditor to import it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SCENARIOS_FILE = Path(__file__).with_name("scenarios.json")


@dataclass(frozen=True)
class Scenario:
    name: str
    question: str
    steps: tuple[dict[str, Any], ...]

    @property
    def answer(self) -> str:
        """The scripted final text (the last step's)."""
        return str(self.steps[-1]["text"])

    @property
    def tool_names(self) -> list[str]:
        """The tools the script calls, in first-call order."""
        names: list[str] = []
        for step in self.steps:
            for call in step.get("tool_calls", []):
                if call["name"] not in names:
                    names.append(call["name"])
        return names


@cache
def spec() -> dict[str, Any]:
    """The whole ``scenarios.json``."""
    data: dict[str, Any] = json.loads(SCENARIOS_FILE.read_text(encoding="utf-8"))
    return data


def scenarios() -> list[Scenario]:
    return [Scenario(s["name"], s["question"], tuple(s["steps"])) for s in spec()["scenarios"]]


def scenario(name: str) -> Scenario:
    for found in scenarios():
        if found.name == name:
            return found
    raise KeyError(f"no scenario {name!r}; known: {', '.join(s.name for s in scenarios())}")


MODEL: str = spec()["model"]
SYSTEM_PROMPT: str = spec()["system_prompt"]
TOOLS: dict[str, dict[str, Any]] = spec()["tools"]


def _key(arguments: dict[str, Any]) -> str:
    return ",".join(f"{k}={arguments[k]}" for k in sorted(arguments))


def tool_result(name: str, **arguments: Any) -> Any:
    """What tool ``name`` returns for these arguments (a dict, or a text for ``search_kb``).

    An unknown tool or argument set returns an error object, as a real tool would, so a framework
    that calls a tool with arguments of its own making still gets an answer to record.
    """
    table = spec()["data"].get(name)
    if table is None:
        return {"error": f"unknown tool {name}"}
    return table.get(_key(arguments), {"error": f"nothing found for {_key(arguments)}"})


def tool_text(name: str, **arguments: Any) -> str:
    """The tool's result as the text a tool function returns (JSON for objects)."""
    value = tool_result(name, **arguments)
    return value if isinstance(value, str) else json.dumps(value)
