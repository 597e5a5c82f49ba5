"""Make a trace safe to keep: no lone surrogates in its text, no value nested without bound.

JSON may spell a lone UTF-16 surrogate (``"\\ud800"``), and a CESU-8 file decodes to surrogates;
such a ``str`` cannot be written as UTF-8, so the JSON output, the store and the report would fail
on it long after ingest. Values nested hundreds of levels deep (a JSON attribute, document
metadata) pass the JSON reader but exceed what the serialisers accept. Every adapter hands its
traces through :func:`repair_trace` (:func:`~auditor.trace.assemble_trace` does it for the
adapters that use it): surrogate pairs are joined into the character they spell, lone surrogates
become U+FFFD, and a container nested deeper than :data:`MAX_DEPTH` is dropped, each recorded as a
warning naming the file, line, span and field.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from auditor.trace._model import (
    Document,
    Message,
    SourceRef,
    Span,
    SpanEvent,
    SpanKind,
    SpanStatus,
    ToolCall,
    ToolInvocation,
    Trace,
)
from auditor.trace._problems import Problem, Severity
from auditor.trace._text import SURROGATE as _SURROGATE
from auditor.trace._text import repair_text

#: How deeply containers (objects, lists, records) may nest inside one span; deeper ones are dropped.
MAX_DEPTH = 64

_M = TypeVar("_M", bound=BaseModel)


#: Types that hold no text to repair and no containers (the enums' values are fixed ASCII).
_ATOMS = frozenset({int, float, bool, type(None), datetime, SpanKind, SpanStatus})
#: The trace model's own types, whose fields are checked like a container's items.
_MODELS = frozenset({Span, Message, ToolCall, Document, ToolInvocation, SpanEvent, SourceRef, Trace})


def _clean(value: Any, depth: int) -> bool:
    """Whether ``value`` needs no repair: the quick check done first, as traces are nearly always
    clean (it allocates nothing; :class:`_Walk` applies the same rules and rebuilds)."""
    return _clean_all((value,), depth)


def _clean_all(values: Iterable[Any], depth: int) -> bool:
    """Whether every value, at ``depth``, needs no repair. Strings, atoms, plain containers and the
    model's types are checked inline (a call per value would be most of the cost); other types by
    the general rules, in the order :meth:`_Walk.value` applies them."""
    for value in values:
        kind = type(value)
        if kind is str:
            if not value.isascii() and _SURROGATE.search(value) is not None:
                return False
        elif kind in _ATOMS:
            continue
        elif kind is dict:
            if depth >= MAX_DEPTH or (value and not _clean_items(value, depth + 1)):
                return False
        elif kind is list or kind is tuple:
            if depth >= MAX_DEPTH or (value and not _clean_all(value, depth + 1)):
                return False
        elif kind in _MODELS:
            if depth >= MAX_DEPTH or not _clean_all(value.__dict__.values(), depth + 1):
                return False
        elif isinstance(value, str):
            if not value.isascii() and _SURROGATE.search(value) is not None:
                return False
        elif isinstance(value, dict):
            if depth >= MAX_DEPTH or not (
                _clean_all(value.keys(), depth + 1) and _clean_all(value.values(), depth + 1)
            ):
                return False
        elif isinstance(value, list | tuple | BaseModel):
            if depth >= MAX_DEPTH:
                return False
            if not _clean_all(value.__dict__.values() if isinstance(value, BaseModel) else value, depth + 1):
                return False
    return True


def _clean_items(mapping: dict[Any, Any], depth: int) -> bool:
    """Whether every key and value of a plain dict, at ``depth``, needs no repair: the rules of
    :func:`_clean_all`, with the common kinds of value checked here rather than by a call each."""
    for key, item in mapping.items():
        if type(key) is str:
            if not key.isascii() and _SURROGATE.search(key) is not None:
                return False
        elif not _clean_all((key,), depth):
            return False
        kind = type(item)
        if kind is str:
            if not item.isascii() and _SURROGATE.search(item) is not None:
                return False
        elif kind in _ATOMS:
            continue
        elif kind is dict:
            if depth >= MAX_DEPTH or (item and not _clean_items(item, depth + 1)):
                return False
        elif kind is list:
            if depth >= MAX_DEPTH or (item and not _clean_all(item, depth + 1)):
                return False
        elif not _clean_all((item,), depth):
            return False
    return True


class _Walk:
    """One span's walk, remembering which fields were repaired so the problem can name them."""

    def __init__(self) -> None:
        self.text: set[str] = set()
        self.deep: set[str] = set()

    def value(self, value: Any, field: str, depth: int) -> Any:
        """``value`` repaired; the very same object when nothing needed repair."""
        if isinstance(value, str):
            fixed = repair_text(value)
            if fixed is not value:
                self.text.add(field)
            return fixed
        if not isinstance(value, dict | list | tuple | BaseModel):
            return value
        if depth >= MAX_DEPTH:
            self.deep.add(field)
            return None
        if isinstance(value, BaseModel):
            return self.model(value, field, depth + 1)
        if isinstance(value, dict):
            pairs = [
                (self.value(k, field, depth + 1), self.value(v, field, depth + 1)) for k, v in value.items()
            ]
            if all(k is a and v is b for (k, v), (a, b) in zip(pairs, value.items(), strict=True)):
                return value
            return dict(pairs)
        items = [self.value(v, field, depth + 1) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items)

    def model(self, model: _M, field: str | None, depth: int, skip: str = "") -> _M:
        changed: dict[str, Any] = {}
        for name, current in model.__dict__.items():
            if name == skip:
                continue
            fixed = self.value(current, field or name, depth)
            if fixed is not current:
                changed[name] = fixed
        return model.model_copy(update=changed) if changed else model

    def reason(self) -> str:
        parts: list[str] = []
        if self.text:
            parts.append(
                f"text in {', '.join(sorted(self.text))} held lone UTF-16 surrogates (not valid "
                "Unicode); repaired with U+FFFD"
            )
        if self.deep:
            parts.append(
                f"a value in {', '.join(sorted(self.deep))} is nested more than {MAX_DEPTH} levels "
                "deep; the deeper part was dropped"
            )
        return "; ".join(parts)


def _clean_trace(trace: Trace, vouched: Container[str] = ()) -> bool:
    """Whether nothing in the trace needs repair. A span's ``source`` is checked too, though the
    walk leaves it alone: a file name that fails the check only sends the trace down the walk,
    which then changes nothing. The spans whose ids are in ``vouched`` are checked only as
    :func:`_bounded_free_form` checks a vouched trace's spans."""
    header = trace.__dict__
    if not _clean_all([header[name] for name in header if name != "spans"], 0):
        return False
    if not vouched:
        return all(_clean_all(span.__dict__.values(), 0) for span in trace.spans)
    return all(
        _span_bounded_free_form(span) if span.span_id in vouched else _clean_all(span.__dict__.values(), 0)
        for span in trace.spans
    )


def _bounded_free_form(trace: Trace) -> bool:
    """Whether the free-form values the convention readers parse (tool and tool-call arguments,
    document metadata) nest within :data:`MAX_DEPTH`, counted as :func:`_clean_trace` counts them.
    Every other field holds text, atoms or the model's own fixed shapes, nested at most four levels
    (``tests/test_repair_vouched.py`` pins the model's free-form fields)."""
    return all(_span_bounded_free_form(span) for span in trace.spans)


def _span_bounded_free_form(span: Span) -> bool:
    """:func:`_bounded_free_form` for one span."""
    tool = span.tool
    if tool is not None and not _clean_all((tool.arguments,), 1):
        return False
    for messages in (span.input_messages, span.output_messages):
        for message in messages:
            for call in message.tool_calls:
                if not _clean_all((call.arguments,), 4):
                    return False
    for document in span.documents:
        if document.metadata and not _clean_all((document.metadata,), 2):
            return False
    return True


def repair_trace(
    trace: Trace, source: str, *, valid_text: bool = False, vouched: Container[str] = ()
) -> tuple[Trace, list[Problem]]:
    """``trace`` with its text repaired and its values bounded, and a warning per span changed.

    Args:
        trace: a trace as an adapter built it.
        source: the file name for problems about spans that carry no :class:`~auditor.trace.SourceRef`.
        valid_text: the caller vouches that no string in the trace holds a surrogate and that
            nothing in the spans' ``attributes`` and ``events`` nests deeper than :data:`MAX_DEPTH`
            allows; only the free-form values the readers parse (tool and tool-call arguments,
            document metadata) are then checked, and a trace they pass is returned as it stands.
            A trace they fail goes through the same repair as without it.
        vouched: the same, for the spans with these ids only (the trace's own fields and every
            other span are checked in full); ignored when ``valid_text`` is given.
    """
    if _bounded_free_form(trace) if valid_text else _clean_trace(trace, vouched):
        return trace, []
    problems: list[Problem] = []
    spans = []
    for span in trace.spans:
        walk = _Walk()
        # A span's source is where the user's file is, not trace content: a file name that is
        # not valid UTF-8 is the file system's business, and stays as the run records it.
        fixed = walk.model(span, None, 0, skip="source")
        if fixed is not span:
            problems.append(
                Problem(
                    file=fixed.source.file if fixed.source else source,
                    line=fixed.source.line if fixed.source else None,
                    reason=walk.reason(),
                    severity=Severity.WARNING,
                    trace_id=fixed.trace_id,
                    span_id=fixed.span_id,
                )
            )
        spans.append(fixed)
    walk = _Walk()
    header = {k: walk.value(v, k, 0) for k, v in trace.__dict__.items() if k != "spans"}
    if walk.text and not problems:
        problems.append(
            Problem(file=source, reason=walk.reason(), severity=Severity.WARNING, trace_id=header["trace_id"])
        )
    if not problems:
        return trace, problems
    return trace.model_copy(update={**header, "spans": tuple(spans)}), problems
