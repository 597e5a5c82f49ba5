"""Hop paths: how a piece of evidence was reached from the user's question.

A tool call is a *hop* from an earlier one when one of its argument values appears in that earlier
tool's result (``get_refund(order_id="10042")`` after ``search_orders`` returned order 10042). A
call made inside another tool (a sub-agent, or a tool that wraps a retriever) is reached through
that tool. The path is the chain of labels ``name(arg=value)`` from the first hop to the item.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from auditor.text import clip, normalise

_MIN_VALUE_CHARS = 3


@dataclass
class ToolHop:
    """One tool call as hop matching sees it, from a tool span or from chat messages."""

    key: str
    name: str
    arguments: dict[str, Any] | str | None
    result: str
    started: datetime
    ended: datetime
    enclosing: tuple[str, ...] = ()  # keys of the tool calls this one ran inside, outermost first
    path: tuple[str, ...] | None = field(default=None, repr=False)


def label(name: str, arguments: dict[str, Any] | str | None) -> str:
    """``name(k=v, ...)`` with values clipped, or the bare name when there are no arguments."""
    if arguments is None or arguments == {} or arguments == "":
        return name
    if isinstance(arguments, dict):
        inner = ", ".join(f"{k}={_render(v)}" for k, v in arguments.items())
    else:
        inner = _render(arguments)
    return f"{name}({clip(inner, 80)})"


def _render(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return clip(text, 40)


def _scalar_values(arguments: dict[str, Any] | str | None) -> list[str]:
    """Argument values worth matching: scalars of at least three characters, nested ones too."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, bool) or value is None:
            return
        else:
            text = normalise(str(value))
            if len(text) >= _MIN_VALUE_CHARS:
                found.append(text)

    walk(arguments)
    return found


def _predecessor(hop: ToolHop, earlier: Sequence[ToolHop]) -> ToolHop | None:
    """The most recent earlier tool call whose result contains one of ``hop``'s argument values."""
    values = _scalar_values(hop.arguments)
    if not values:
        return None
    for candidate in sorted(earlier, key=lambda h: h.ended, reverse=True):
        if candidate.key == hop.key or candidate.key in hop.enclosing or candidate.ended > hop.started:
            continue
        result = normalise(candidate.result)
        if any(value in result for value in values):
            return candidate
    return None


def assign_paths(hops: Sequence[ToolHop]) -> dict[str, tuple[str, ...]]:
    """The hop path of every tool call, keyed by :attr:`ToolHop.key`."""
    by_key = {h.key: h for h in hops}
    ordered = sorted(hops, key=lambda h: (h.started, h.ended))
    paths: dict[str, tuple[str, ...]] = {}
    for hop in ordered:  # predecessors end before a hop starts, so they are already done
        own = label(hop.name, hop.arguments)
        before = _predecessor(hop, [h for h in ordered if h.key in paths])
        if before is not None:
            paths[hop.key] = (*paths[before.key], own)
        elif hop.enclosing and hop.enclosing[-1] in paths:
            paths[hop.key] = (*paths[hop.enclosing[-1]], own)
        else:
            outer = tuple(label(by_key[k].name, by_key[k].arguments) for k in hop.enclosing if k in by_key)
            paths[hop.key] = (*outer, own)
    return paths
