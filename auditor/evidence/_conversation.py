"""The traces of one conversation, as evidence reconstruction walks them: spans with their trace,
and the tree lookups (ancestors, descendants) the rules need."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from auditor.trace import Span, Trace


@dataclass(frozen=True)
class Located:
    span: Span
    trace: Trace


class Conversation:
    """All spans of the traces that share one conversation, with tree lookups."""

    def __init__(self, traces: Sequence[Trace]) -> None:
        self.traces = traces
        self.spans = [Located(s, t) for t in traces for s in t.spans]
        self._index = {(t.trace_id, s.span_id): s for t in traces for s in t.spans}

    def ancestors(self, item: Located) -> list[Span]:
        return item.trace.ancestors(item.span)

    def descendants(self, item: Located) -> list[Span]:
        children: dict[str, list[Span]] = defaultdict(list)
        for span in item.trace.spans:
            if span.parent_id:
                children[span.parent_id].append(span)
        found: list[Span] = []
        stack = [item.span.span_id]
        while stack:
            for child in children.get(stack.pop(), []):
                found.append(child)
                stack.append(child.span_id)
        return found


class _Keyed(Protocol):
    @property
    def trace_id(self) -> str: ...
    @property
    def conversation_id(self) -> str | None: ...


def conversation_key(trace: _Keyed) -> str:
    """The conversation a trace belongs to: its conversation id, else the trace alone.

    Traces with the same key are one conversation (their evidence is pooled, causally); any object
    with the two ids will do, so a planner can group traces it has only indexed.
    """
    return trace.conversation_id or f"trace:{trace.trace_id}"
