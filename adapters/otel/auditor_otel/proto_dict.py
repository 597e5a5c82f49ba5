"""OTLP trace protobuf messages as the dicts ``google.protobuf.json_format.MessageToDict`` makes.

:func:`resource_dict`, :func:`scope_dict` and :func:`span_dict` return exactly what
``MessageToDict(message, use_integers_for_enums=True)`` returns for a ``Resource``, an
``InstrumentationScope`` and a ``Span`` (same keys, values and key order), by reading the
message's fields directly instead of through ``ListFields`` and descriptors, which took most of
the receiver's time. The rules kept: camelCase (JSON) names; a field without presence only when
it differs from its default; a message field or a oneof member whenever it is set (an empty
``status`` is ``{}``, an ``intValue`` of 0 is ``"0"``); 64-bit integers as decimal strings;
bytes (ids too) as standard base64; enums as their numbers (an unknown one too); a double that
is not finite as ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``; unknown fields dropped; keys in
field-number order (``Span.flags``, field 16, last).

The converter knows the fields of the installed ``opentelemetry-proto``: :data:`FIELDS` lists
them, and if the installed messages differ (another version added a field) :data:`FAST` is
false and every call goes through ``MessageToDict``, so nothing is silently dropped.
"""

from __future__ import annotations

import math
from base64 import b64encode
from typing import Any

from google.protobuf import json_format  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

#: The fields this module converts, by message, as (number, name) in field-number order.
FIELDS: dict[str, tuple[tuple[int, str], ...]] = {
    "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest": ((1, "resource_spans"),),
    "opentelemetry.proto.trace.v1.ResourceSpans": ((1, "resource"), (2, "scope_spans"), (3, "schema_url")),
    "opentelemetry.proto.resource.v1.Resource": (
        (1, "attributes"),
        (2, "dropped_attributes_count"),
        (3, "entity_refs"),
    ),
    "opentelemetry.proto.common.v1.KeyValue": ((1, "key"), (2, "value"), (3, "key_strindex")),
    "opentelemetry.proto.common.v1.AnyValue": (
        (1, "string_value"),
        (2, "bool_value"),
        (3, "int_value"),
        (4, "double_value"),
        (5, "array_value"),
        (6, "kvlist_value"),
        (7, "bytes_value"),
        (8, "string_value_strindex"),
    ),
    "opentelemetry.proto.common.v1.ArrayValue": ((1, "values"),),
    "opentelemetry.proto.common.v1.KeyValueList": ((1, "values"),),
    "opentelemetry.proto.common.v1.EntityRef": (
        (1, "schema_url"),
        (2, "type"),
        (3, "id_keys"),
        (4, "description_keys"),
    ),
    "opentelemetry.proto.trace.v1.ScopeSpans": ((1, "scope"), (2, "spans"), (3, "schema_url")),
    "opentelemetry.proto.common.v1.InstrumentationScope": (
        (1, "name"),
        (2, "version"),
        (3, "attributes"),
        (4, "dropped_attributes_count"),
    ),
    "opentelemetry.proto.trace.v1.Span": (
        (1, "trace_id"),
        (2, "span_id"),
        (3, "trace_state"),
        (4, "parent_span_id"),
        (5, "name"),
        (6, "kind"),
        (7, "start_time_unix_nano"),
        (8, "end_time_unix_nano"),
        (9, "attributes"),
        (10, "dropped_attributes_count"),
        (11, "events"),
        (12, "dropped_events_count"),
        (13, "links"),
        (14, "dropped_links_count"),
        (15, "status"),
        (16, "flags"),
    ),
    "opentelemetry.proto.trace.v1.Span.Event": (
        (1, "time_unix_nano"),
        (2, "name"),
        (3, "attributes"),
        (4, "dropped_attributes_count"),
    ),
    "opentelemetry.proto.trace.v1.Span.Link": (
        (1, "trace_id"),
        (2, "span_id"),
        (3, "trace_state"),
        (4, "attributes"),
        (5, "dropped_attributes_count"),
        (6, "flags"),
    ),
    "opentelemetry.proto.trace.v1.Status": ((2, "message"), (3, "code")),
}


def installed_fields() -> dict[str, tuple[tuple[int, str], ...]]:
    """The fields of the installed messages reachable from ``ExportTraceServiceRequest``, as :data:`FIELDS`."""
    found: dict[str, tuple[tuple[int, str], ...]] = {}
    pending = [trace_service_pb2.ExportTraceServiceRequest.DESCRIPTOR]
    while pending:
        descriptor = pending.pop()
        if descriptor.full_name in found:
            continue
        fields = sorted(descriptor.fields, key=lambda f: f.number)
        found[descriptor.full_name] = tuple((f.number, f.name) for f in fields)
        pending.extend(f.message_type for f in fields if f.message_type is not None)
    return found


#: Whether the installed messages have exactly the fields in :data:`FIELDS` (else ``MessageToDict``).
FAST = installed_fields() == FIELDS


def _b64(value: bytes) -> str:
    return b64encode(value).decode("ascii")


def _double(value: float) -> float | str:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _any(value: Any) -> dict[str, Any]:
    kind = value.WhichOneof("value")
    if kind is None:
        return {}
    if kind == "string_value":
        return {"stringValue": value.string_value}
    if kind == "int_value":
        return {"intValue": str(value.int_value)}
    if kind == "bool_value":
        return {"boolValue": value.bool_value}
    if kind == "double_value":
        return {"doubleValue": _double(value.double_value)}
    if kind == "array_value":
        values = value.array_value.values
        return {"arrayValue": {"values": [_any(v) for v in values]} if values else {}}
    if kind == "kvlist_value":
        pairs = value.kvlist_value.values
        return {"kvlistValue": {"values": _attributes(pairs)} if pairs else {}}
    if kind == "bytes_value":
        return {"bytesValue": _b64(value.bytes_value)}
    return {"stringValueStrindex": value.string_value_strindex}


def _attributes(pairs: Any) -> list[dict[str, Any]]:
    out = []
    for pair in pairs:
        item: dict[str, Any] = {}
        if pair.key:
            item["key"] = pair.key
        if pair.HasField("value"):
            value = pair.value
            # A string is most attributes' value: read here rather than through _any's dispatch.
            if value.WhichOneof("value") == "string_value":
                item["value"] = {"stringValue": value.string_value}
            else:
                item["value"] = _any(value)
        if pair.key_strindex:
            item["keyStrindex"] = pair.key_strindex
        out.append(item)
    return out


def _entity_ref(ref: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ref.schema_url:
        out["schemaUrl"] = ref.schema_url
    if ref.type:
        out["type"] = ref.type
    if ref.id_keys:
        out["idKeys"] = list(ref.id_keys)
    if ref.description_keys:
        out["descriptionKeys"] = list(ref.description_keys)
    return out


def _event(event: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if event.time_unix_nano:
        out["timeUnixNano"] = str(event.time_unix_nano)
    if event.name:
        out["name"] = event.name
    if event.attributes:
        out["attributes"] = _attributes(event.attributes)
    if event.dropped_attributes_count:
        out["droppedAttributesCount"] = event.dropped_attributes_count
    return out


def _link(link: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if link.trace_id:
        out["traceId"] = _b64(link.trace_id)
    if link.span_id:
        out["spanId"] = _b64(link.span_id)
    if link.trace_state:
        out["traceState"] = link.trace_state
    if link.attributes:
        out["attributes"] = _attributes(link.attributes)
    if link.dropped_attributes_count:
        out["droppedAttributesCount"] = link.dropped_attributes_count
    if link.flags:
        out["flags"] = link.flags
    return out


def resource_dict(resource: Any) -> dict[str, Any]:
    """``MessageToDict(resource, use_integers_for_enums=True)`` for an OTLP ``Resource``."""
    if not FAST:
        return _slow(resource)
    out: dict[str, Any] = {}
    if resource.attributes:
        out["attributes"] = _attributes(resource.attributes)
    if resource.dropped_attributes_count:
        out["droppedAttributesCount"] = resource.dropped_attributes_count
    if resource.entity_refs:
        out["entityRefs"] = [_entity_ref(ref) for ref in resource.entity_refs]
    return out


def scope_dict(scope: Any) -> dict[str, Any]:
    """``MessageToDict(scope, use_integers_for_enums=True)`` for an OTLP ``InstrumentationScope``."""
    if not FAST:
        return _slow(scope)
    out: dict[str, Any] = {}
    if scope.name:
        out["name"] = scope.name
    if scope.version:
        out["version"] = scope.version
    if scope.attributes:
        out["attributes"] = _attributes(scope.attributes)
    if scope.dropped_attributes_count:
        out["droppedAttributesCount"] = scope.dropped_attributes_count
    return out


def span_dict(span: Any) -> dict[str, Any]:
    """``MessageToDict(span, use_integers_for_enums=True)`` for an OTLP ``Span``."""
    if not FAST:
        return _slow(span)
    out: dict[str, Any] = {}
    if span.trace_id:
        out["traceId"] = _b64(span.trace_id)
    if span.span_id:
        out["spanId"] = _b64(span.span_id)
    if span.trace_state:
        out["traceState"] = span.trace_state
    if span.parent_span_id:
        out["parentSpanId"] = _b64(span.parent_span_id)
    if span.name:
        out["name"] = span.name
    if span.kind:
        out["kind"] = span.kind
    if span.start_time_unix_nano:
        out["startTimeUnixNano"] = str(span.start_time_unix_nano)
    if span.end_time_unix_nano:
        out["endTimeUnixNano"] = str(span.end_time_unix_nano)
    if span.attributes:
        out["attributes"] = _attributes(span.attributes)
    if span.dropped_attributes_count:
        out["droppedAttributesCount"] = span.dropped_attributes_count
    if span.events:
        out["events"] = [_event(event) for event in span.events]
    if span.dropped_events_count:
        out["droppedEventsCount"] = span.dropped_events_count
    if span.links:
        out["links"] = [_link(link) for link in span.links]
    if span.dropped_links_count:
        out["droppedLinksCount"] = span.dropped_links_count
    if span.HasField("status"):
        status = span.status
        out["status"] = {}
        if status.message:
            out["status"]["message"] = status.message
        if status.code:
            out["status"]["code"] = status.code
    if span.flags:
        out["flags"] = span.flags
    return out


def _slow(message: Any) -> dict[str, Any]:
    result: dict[str, Any] = json_format.MessageToDict(message, use_integers_for_enums=True)
    return result
