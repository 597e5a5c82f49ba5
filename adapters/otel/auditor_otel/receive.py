"""One OTLP/HTTP export request split into spans, for ``auditor serve`` (:class:`auditor.trace.SpanReceiver`).

Each span becomes a self-contained one-span request (its resource and scope beside it), so the
server can store spans as they arrive and later write a trace's spans as one OTLP JSON Lines file
that :class:`~auditor_otel.otlp_json.OtlpJsonAdapter` reads like any other. A JSON body's spans
are kept as one-span OTLP JSON text. A protobuf body's spans are kept as one-span protobuf
requests (the span's bytes between its resource's and scope's, encoded once per scope): turning
each span into JSON took three quarters of the reader's time, so it is done when a trace is
audited (:func:`record_json`, once per span of an audited trace), by the hand-written
:mod:`~auditor_otel.proto_dict` (the JSON ``google.protobuf.json_format`` would make, ids
rewritten as hex, as the OTLP JSON encoding requires). A protobuf span also carries its resource's
``service.name``, which the server's ``service`` filter reads without decoding it. A span without
a valid trace or span id is rejected and counted; a body that is not a request at all is
``unreadable``. ``check_json`` / ``check_proto`` apply the same rules without building the
records: the server answers on the check and splits the stored body later, and both count the
same spans.

In OTLP/JSON, a ``scopeSpans`` or ``spans`` that is not a list, or an item of one that is not an
object, is rejected and counted as one span (the spans it should have held cannot be counted), so
the client's partial success says something was lost; a ``resourceSpans`` that is not a list makes
the body unreadable. Text holding a lone UTF-16 surrogate (JSON's ``"\\ud800"``) is kept as that
escape, so the stored record is valid UTF-8 and the audit repairs it, and records the repair, as it
does for a file. A time past a signed 64-bit integer (valid in OTLP's ``fixed64``) is kept as given
in the record; only the store's index of ended spans holds it at the largest signed value.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from auditor.trace import BodyCheck, ReceivedBatch, ReceivedSpan, repair_text

from . import ids
from .proto_dict import resource_dict, scope_dict, span_dict

#: At most this many distinct rejection reasons are kept per request (the count is exact).
MAX_ERRORS = 5
#: The largest end time a store's signed 64-bit column holds; a later one is held at it.
MAX_END_NS = 2**63 - 1


def _get(obj: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    return None


def _end_ns(value: Any) -> int | None:
    try:
        end = int(value)
    except (TypeError, ValueError):
        return None
    return min(end, MAX_END_NS) if end > 0 else None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "null" if value is None else "an object"


def _record(request: dict[str, Any]) -> str:
    """One line of OTLP JSON; a lone surrogate stays an escape (``\\ud800``), so the line is UTF-8."""
    record = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
    if repair_text(record) is not record:
        record = json.dumps(request, separators=(",", ":"))
    return record


#: Compact JSON at C speed (the record of every audited protobuf span; ``json.dumps`` took two
#: thirds of the time to make it). Its text reads back as ``json.dumps`` would write it, but for
#: exponents (``1e16``, not ``1e+16``).
_ENCODE = msgspec.json.Encoder().encode


class _Wrapping:
    """The JSON text around one span of a resource and scope in its one-span request: the record is
    ``head + span + tail``, keys in the order :meth:`_Batch.add` writes them."""

    def __init__(self, resource: dict[str, Any] | None, scope: dict[str, Any] | None) -> None:
        self.head = b'{"resourceSpans":[{"scopeSpans":[{"spans":['
        tail = b"]"
        if scope is not None:
            tail += b',"scope":' + _ENCODE(scope)
        tail += b"}]"
        if resource is not None:
            tail += b',"resource":' + _ENCODE(resource)
        self.tail = tail + b"}]}"

    def record(self, span: dict[str, Any]) -> str:
        return (self.head + _ENCODE(span) + self.tail).decode("utf-8")


class _Batch:
    """The spans of one request; with ``keep=False`` only counted (the check before acknowledging)."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.spans: list[ReceivedSpan] = []
        self.counted = 0
        self.rejected = 0
        self.errors: list[str] = []

    def reject(self, reason: str) -> None:
        self.rejected += 1
        if reason not in self.errors and len(self.errors) < MAX_ERRORS:
            self.errors.append(reason)

    def add(self, resource: Any, scope: Any, span: dict[str, Any]) -> None:
        trace_id, trace_ok = ids.from_text(_get(span, "traceId", "trace_id"), 16)
        span_id, span_ok = ids.from_text(_get(span, "spanId", "span_id"), 8)
        if trace_id is None or not trace_ok:
            self.reject("a span has no valid traceId (16 bytes, hex)")
            return
        if span_id is None or not span_ok:
            self.reject("a span has no valid spanId (8 bytes, hex)")
            return
        self.counted += 1
        if not self.keep:
            return
        parent_id, _ = ids.from_text(_get(span, "parentSpanId", "parent_span_id"), 8)
        span = {**span, "traceId": trace_id, "spanId": span_id}
        span.pop("trace_id", None)
        span.pop("span_id", None)
        if parent_id is not None:
            span["parentSpanId"] = parent_id
        scope_spans: dict[str, Any] = {"spans": [span]}
        if scope is not None:
            scope_spans["scope"] = scope
        resource_spans: dict[str, Any] = {"scopeSpans": [scope_spans]}
        if resource is not None:
            resource_spans["resource"] = resource
        record = _record({"resourceSpans": [resource_spans]})
        end = _end_ns(_get(span, "endTimeUnixNano", "end_time_unix_nano"))
        self.spans.append(ReceivedSpan(trace_id, span_id, parent_id, end, record))

    def add_proto(self, span: Any, wrapping: _ProtoWrapping) -> None:
        """:meth:`add` for a protobuf span: the same checks, the span kept as a one-span protobuf
        request (:func:`record_json` turns it into the record :meth:`add` would have made)."""
        trace_id = ids.from_bytes(bytes(span.trace_id), 16)
        if trace_id is None:
            self.reject("a span has no valid traceId (16 bytes, hex)")
            return
        span_id = ids.from_bytes(bytes(span.span_id), 8)
        if span_id is None:
            self.reject("a span has no valid spanId (8 bytes, hex)")
            return
        self.counted += 1
        if not self.keep:
            return
        parent_id = ids.from_bytes(bytes(span.parent_span_id), 8) if span.parent_span_id else None
        end = _end_ns(span.end_time_unix_nano)
        record = wrapping.record(span.SerializeToString())
        self.spans.append(ReceivedSpan(trace_id, span_id, parent_id, end, record, wrapping.service))

    def items(self, value: Any, where: str) -> list[dict[str, Any]]:
        """The objects of the list ``value``; a value that is not a list, or an item that is not an
        object, is rejected as one span (null and a missing list mean "none", as in protobuf)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.reject(f"{where} is {_json_type(value)}, not a list; its spans are rejected")
            return []
        out = []
        for item in value:
            if isinstance(item, dict):
                out.append(item)
            else:
                self.reject(f"an item of {where} is {_json_type(item)}, not an object; rejected")
        return out

    def walk(self, resources: list[Any]) -> None:
        for resource_spans in self.items(resources, "resourceSpans"):
            resource = _get(resource_spans, "resource")
            for scope_spans in self.items(_get(resource_spans, "scopeSpans", "scope_spans"), "scopeSpans"):
                scope = _get(scope_spans, "scope")
                for span in self.items(_get(scope_spans, "spans"), "spans"):
                    self.add(resource, scope, span)

    def done(self) -> ReceivedBatch:
        return ReceivedBatch(tuple(self.spans), self.rejected, tuple(self.errors))

    def checked(self) -> BodyCheck:
        return BodyCheck(self.counted, self.rejected, tuple(self.errors))


def _json_request(body: bytes) -> tuple[list[Any], str | None]:
    """The ``resourceSpans`` of an OTLP JSON request body, or why the body is not one."""
    try:
        request = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        return [], f"the body is not JSON ({exc})"
    except RecursionError:
        return [], "the body nests JSON too deeply to be an export request"
    if not isinstance(request, dict):
        return [], "the body is not an ExportTraceServiceRequest object"
    resources = _get(request, "resourceSpans", "resource_spans")
    if resources is not None and not isinstance(resources, list):
        return [], f"resourceSpans is {_json_type(resources)}, not a list: the body is not an export request"
    return resources or [], None


def receive_json(body: bytes) -> ReceivedBatch:
    """The spans of one OTLP JSON ``ExportTraceServiceRequest`` body."""
    resources, unreadable = _json_request(body)
    if unreadable is not None:
        return ReceivedBatch(unreadable=unreadable)
    batch = _Batch()
    batch.walk(resources)
    return batch.done()


def check_json(body: bytes) -> BodyCheck:
    """What :func:`receive_json` would find in ``body``, counted, not built (fast enough to answer on)."""
    resources, unreadable = _json_request(body)
    if unreadable is not None:
        return BodyCheck(unreadable=unreadable)
    batch = _Batch(keep=False)
    batch.walk(resources)
    return batch.checked()


def _proto_request(body: bytes) -> tuple[Any, str | None]:
    request = trace_service_pb2.ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        return None, f"the body is not a protobuf ExportTraceServiceRequest ({exc})"
    return request, None


def receive_proto(body: bytes) -> ReceivedBatch:
    """The spans of one protobuf ``ExportTraceServiceRequest`` body."""
    request, unreadable = _proto_request(body)
    if unreadable is not None:
        return ReceivedBatch(unreadable=unreadable)
    batch = _Batch()
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            wrapping = _ProtoWrapping(resource_spans, scope_spans)
            for span in scope_spans.spans:
                batch.add_proto(span, wrapping)
    return batch.done()


def check_proto(body: bytes) -> BodyCheck:
    """What :func:`receive_proto` would find in ``body``: the message parsed, its span ids checked
    by the same rule, nothing kept."""
    request, unreadable = _proto_request(body)
    if unreadable is not None:
        return BodyCheck(unreadable=unreadable)
    batch = _Batch(keep=False)
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                batch.add_proto(span, _NO_WRAPPING)
    return batch.checked()


def record_json(record: bytes) -> str:
    """The one-span OTLP JSON request of a span :func:`receive_proto` kept as protobuf: the very
    record an OTLP JSON body holding that span would have been stored as.

    Raises:
        ValueError: ``record`` is not a one-span request (not one :func:`receive_proto` made).
    """
    request, unreadable = _proto_request(record)
    try:
        if unreadable is not None:
            raise ValueError(unreadable)
        (resource_spans,) = request.resource_spans
        (scope_spans,) = resource_spans.scope_spans
        (span,) = scope_spans.spans
    except ValueError as exc:
        raise ValueError(f"a stored span is not a one-span protobuf request: {exc}") from None
    wrapping = _Wrapping(
        resource_dict(resource_spans.resource) or None, scope_dict(scope_spans.scope) or None
    )
    return wrapping.record(_span_json(span))


def _span_json(span: Any) -> dict[str, Any]:
    """A protobuf span as OTLP JSON: ``json_format``'s dict with the ids in hex (it writes base64).
    The span's trace and span ids are valid (:meth:`_Batch.add_proto` kept only such spans)."""
    data = span_dict(span)
    data["traceId"] = ids.from_bytes(bytes(span.trace_id), 16)
    data["spanId"] = ids.from_bytes(bytes(span.span_id), 8)
    data.pop("parentSpanId", None)
    parent_id = ids.from_bytes(bytes(span.parent_span_id), 8) if span.parent_span_id else None
    if parent_id is not None:
        data["parentSpanId"] = parent_id
    return data


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, data: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _service(resource: Any) -> str | None:
    """The resource's ``service.name``, when it is a string."""
    for pair in resource.attributes:
        if pair.key == "service.name" and pair.value.WhichOneof("value") == "string_value":
            return str(pair.value.string_value)
    return None


class _ProtoWrapping:
    """The protobuf around one span of a resource and scope in its one-span request, encoded once
    per scope: ``ExportTraceServiceRequest.resource_spans`` (field 1) holding the resource and one
    ``ScopeSpans`` (field 2) with the scope and the span (field 2 of each)."""

    def __init__(self, resource_spans: Any = None, scope_spans: Any = None) -> None:
        self.resource = b""
        self.scope = b""
        self.service: str | None = None
        if resource_spans is not None and resource_spans.HasField("resource"):
            self.resource = _field(1, resource_spans.resource.SerializeToString())
            self.service = _service(resource_spans.resource)
        if scope_spans is not None and scope_spans.HasField("scope"):
            self.scope = _field(1, scope_spans.scope.SerializeToString())

    def record(self, span: bytes) -> bytes:
        return _field(1, self.resource + _field(2, self.scope + _field(2, span)))


#: What :func:`check_proto` passes for the records it never builds.
_NO_WRAPPING = _ProtoWrapping()
