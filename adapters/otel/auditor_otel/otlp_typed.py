"""Read one OTLP JSON line straight into typed structs, when it has the standard shape.

The general reader (:mod:`auditor_otel.otlp_json`) decodes a line into dicts and lists, then walks
them looking each field up under its camelCase and snake_case names. Nearly every file is written
by the Collector or an SDK in the standard shape: lowerCamelCase keys only, attributes as
``{"key", "value": AnyValue}`` lists. For such a line, :func:`typed_spans` decodes straight into
``msgspec`` structs (one decode, no dict per span or attribute, fields read as attributes) and builds
the same :class:`~auditor_otel.spans.RawSpan` objects the general reader builds.

The schema only accepts what it reads exactly as the general reader does, and refuses the rest:
an unknown key (a snake_case spelling, ``instrumentationLibrarySpans``, a field of a later OTLP
version), a value of a shape the general reader would repair or complain about (a span or an
attribute that is not an object, a key that is not a string, a list that is not a list), and
whatever the fast JSON reader refuses (see :mod:`auditor.trace`'s ``loads_fast``: the same margin of
nesting is kept). A refused line raises :class:`ValueError` before anything is built, and the
caller reads it with the general reader, so every line reads, repairs and reports exactly as it did
before this path existed. An attribute's ``AnyValue`` is decoded as the dict it is (a dict is as
cheap to decode as a struct, and keeps its keys' order): one string value is read inline, any other
by the general reader's own function (an ``intValue`` as a string, a ``bytesValue``, nested arrays
and key-value lists, two value keys, an unknown or snake_case key), as are the other unusual values
(a bad id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import Struct

from . import ids
from .anyvalue import as_int, decode_json_anyvalue
from .spans import STATUS_NAMES as _STATUS_NAMES
from .spans import RawEvent, RawSpan

#: Levels of one-item arrays put around the line, as the fast JSON reader does
#: (``auditor.trace._json._MARGIN``), so that this reader gives up on deep nesting no later than
#: the general one; a line too deep for either is the general reader's problem to report.
_MARGIN = 16
_OPEN, _CLOSE = b"[" * _MARGIN, b"]" * _MARGIN


class _KeyValue(Struct, forbid_unknown_fields=True):
    key: str
    # A bare scalar is kept as it stands (hand-written exporters), as the general reader does.
    value: dict[str, Any] | str | bool | int | float | None = None


class _Event(Struct, forbid_unknown_fields=True):
    name: Any = None
    timeUnixNano: Any = None
    attributes: list[_KeyValue] | None = None
    droppedAttributesCount: Any = None


class _Status(Struct):
    # Other keys are ignored, as the general reader ignores them.
    code: Any = 0
    message: Any = None


class _Span(Struct, forbid_unknown_fields=True):
    traceId: Any = None
    spanId: Any = None
    parentSpanId: Any = None
    name: Any = None
    startTimeUnixNano: Any = None
    endTimeUnixNano: Any = None
    attributes: list[_KeyValue] | None = None
    events: list[_Event] | None = None
    status: _Status | None = None
    # Fields the general reader does not read either.
    traceState: Any = None
    flags: Any = None
    kind: Any = None
    droppedAttributesCount: Any = None
    droppedEventsCount: Any = None
    links: Any = None
    droppedLinksCount: Any = None


class _ScopeSpans(Struct, forbid_unknown_fields=True):
    scope: Any = None
    spans: list[_Span] | None = None
    schemaUrl: Any = None


class _ResourceSpans(Struct, forbid_unknown_fields=True):
    resource: Any = None
    scopeSpans: list[_ScopeSpans] | None = None
    schemaUrl: Any = None


class _Request(Struct, forbid_unknown_fields=True):
    resourceSpans: list[_ResourceSpans]


_decode: Callable[[bytes], Any] | None = None


def _decoder() -> Callable[[bytes], Any]:
    global _decode
    if _decode is None:
        shape: Any = _Request
        for _ in range(_MARGIN):
            shape = tuple[shape]
        _decode = msgspec.json.Decoder(shape).decode
    return _decode


def _attributes(items: list[_KeyValue] | None, notes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not items:
        return out
    for entry in items:
        value = entry.value
        if type(value) is dict:
            if len(value) == 1:  # the common case: one string value
                item = value.get("stringValue")
                if type(item) is str:
                    out[entry.key] = item
                    continue
            out[entry.key] = decode_json_anyvalue(value, notes, entry.key)
        else:
            out[entry.key] = value
    return out


def _status(status: _Status | None) -> tuple[int, str | None]:
    # otlp_json._status, on the struct.
    if status is None:
        return 0, None
    code = status.code
    number = _STATUS_NAMES.get(code.upper(), as_int(code)) if isinstance(code, str) else as_int(code)
    message = status.message
    return (number if number in (0, 1, 2) else 0), (message if isinstance(message, str) else None)


def _raw_span(span: _Span, scope: str, line: int | None) -> RawSpan:
    # otlp_json.raw_span, on the struct: the same fields, notes and order.
    notes: list[str] = []
    trace_id, _ = ids.from_text(span.traceId, 16)
    span_id, _ = ids.from_text(span.spanId, 8)
    parent_id, parent_ok = ids.from_text(span.parentSpanId, 8)
    if not parent_ok:
        notes.append("parentSpanId is not a valid id; span treated as a root")
    name = span.name
    if not isinstance(name, str):
        name = ""
    attributes = _attributes(span.attributes, notes)
    events = []
    for event in span.events or ():
        event_name = event.name
        events.append(
            RawEvent(
                name=event_name if isinstance(event_name, str) else "",
                time_ns=as_int(event.timeUnixNano),
                attributes=_attributes(event.attributes, notes),
            )
        )
    code, message = _status(span.status)
    return RawSpan(
        trace_id=trace_id or "",
        span_id=span_id or "",
        parent_id=parent_id,
        name=name,
        start_ns=as_int(span.startTimeUnixNano),
        end_ns=as_int(span.endTimeUnixNano),
        status_code=code,
        status_message=message,
        attributes=attributes,
        events=events,
        scope=scope,
        line=line,
        notes=notes,
    )


def typed_spans(data: bytes, line: int | None) -> list[RawSpan]:
    """The spans of one JSON line holding one ``ExportTraceServiceRequest`` in the standard shape,
    exactly as :func:`auditor_otel.otlp_json.raw_spans` gives them for the same line.

    Raises:
        ValueError: the line is not surely read so here (see the module docstring); read it with
            the general reader.
    """
    try:
        request = _decoder()(b"".join((_OPEN, data, _CLOSE)))
    except Exception as exc:  # any refusal (not JSON, not this shape, too deep): the general reader
        raise ValueError(f"not read by the typed reader: {exc}") from None
    for _ in range(_MARGIN):
        request = request[0]
    out: list[RawSpan] = []
    for resource in request.resourceSpans:
        for scope_spans in resource.scopeSpans or ():
            scope = scope_spans.scope
            scope_name = scope.get("name") if isinstance(scope, dict) else None
            name = scope_name if isinstance(scope_name, str) else ""
            for span in scope_spans.spans or ():
                out.append(_raw_span(span, name, line))
    return out
