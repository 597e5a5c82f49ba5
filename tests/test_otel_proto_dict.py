"""The hand-written protobuf-to-dict converter of the receiver equals ``MessageToDict`` (same
values, same key order) on every OTLP protobuf body the tests hold and on hand-built messages of
every field shape; the receiver's stored records are byte for byte what they were."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auditor_otel import proto_dict
from auditor_otel.receive import receive_proto, record_json
from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.support.serve_faults import BodyCase, serve_corpus

FIXTURES = Path(__file__).parent / "fixtures"


def _requests(data: bytes) -> Iterator[bytes]:
    """A body, or each request of the Collector file exporter's stream (4-byte big-endian lengths)."""
    if data[:2] != b"\0\0":
        yield data
        return
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + 4], "big")
        yield data[pos + 4 : pos + 4 + size]
        pos += 4 + size


def _parsed(body: bytes) -> trace_service_pb2.ExportTraceServiceRequest | None:
    request = trace_service_pb2.ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError:
        return None
    return request


def _expect_same(ours: dict[str, Any], message: Any) -> None:
    theirs = json_format.MessageToDict(message, use_integers_for_enums=True)
    assert ours == theirs
    assert json.dumps(ours) == json.dumps(theirs)  # key order and float spelling too


def _check_request(request: trace_service_pb2.ExportTraceServiceRequest) -> int:
    spans = 0
    for resource_spans in request.resource_spans:
        _expect_same(proto_dict.resource_dict(resource_spans.resource), resource_spans.resource)
        for scope_spans in resource_spans.scope_spans:
            _expect_same(proto_dict.scope_dict(scope_spans.scope), scope_spans.scope)
            for span in scope_spans.spans:
                _expect_same(proto_dict.span_dict(span), span)
                spans += 1
    return spans


def _fixture_bodies() -> list[bytes]:
    files = sorted(FIXTURES.glob("**/*.otlp.pb"))
    assert len(files) >= 13
    return [body for file in files for body in _requests(file.read_bytes())]


def _corpus_bodies() -> list[BodyCase]:
    return [c for c in serve_corpus().values() if isinstance(c, BodyCase) and c.family != "http-json"]


def test_the_installed_messages_are_the_ones_converted() -> None:
    assert proto_dict.installed_fields() == proto_dict.FIELDS
    assert proto_dict.FAST


def test_every_fixture_body_converts_as_message_to_dict() -> None:
    bodies = _fixture_bodies()
    spans = 0
    for body in bodies:
        request = _parsed(body)
        assert request is not None
        spans += _check_request(request)
    assert spans > 50


def test_every_parsing_fault_corpus_body_converts_as_message_to_dict() -> None:
    parsed = 0
    for case in _corpus_bodies():
        request = _parsed(case.body)
        if request is not None:
            _check_request(request)
            parsed += 1
    assert parsed > 40  # the named edits and the flips that still parse


def _value_kinds(span: trace_pb2.Span) -> None:
    """One attribute per AnyValue shape: each kind at its default (set, so written) and not."""
    kinds: list[tuple[str, Any]] = [
        ("s", lambda v: setattr(v, "string_value", "text \u00e9 \U0001f600")),
        ("s0", lambda v: setattr(v, "string_value", "")),
        ("b", lambda v: setattr(v, "bool_value", True)),
        ("b0", lambda v: setattr(v, "bool_value", False)),
        ("i", lambda v: setattr(v, "int_value", -(2**63))),
        ("i0", lambda v: setattr(v, "int_value", 0)),
        ("imax", lambda v: setattr(v, "int_value", 2**63 - 1)),
        ("d", lambda v: setattr(v, "double_value", 0.1)),
        ("d0", lambda v: setattr(v, "double_value", 0.0)),
        ("dneg0", lambda v: setattr(v, "double_value", -0.0)),
        ("dbig", lambda v: setattr(v, "double_value", 1e300)),
        ("dinf", lambda v: setattr(v, "double_value", float("inf"))),
        ("dninf", lambda v: setattr(v, "double_value", float("-inf"))),
        ("dnan", lambda v: setattr(v, "double_value", float("nan"))),
        ("bytes", lambda v: setattr(v, "bytes_value", b"\xff\x00\xfe")),
        ("bytes0", lambda v: setattr(v, "bytes_value", b"")),
        ("strindex", lambda v: setattr(v, "string_value_strindex", 7)),
        ("strindex0", lambda v: setattr(v, "string_value_strindex", 0)),
        ("array0", lambda v: v.array_value.SetInParent()),
        ("kvlist0", lambda v: v.kvlist_value.SetInParent()),
        ("unset", lambda v: v.SetInParent()),
    ]
    for key, put in kinds:
        put(span.attributes.add(key=key).value)
    array = span.attributes.add(key="array").value.array_value
    array.values.add(string_value="a")
    array.values.add(int_value=3)
    array.values.add()  # an empty AnyValue inside an array
    array.values.add().array_value.values.add().kvlist_value.values.add(key="deep").value.bool_value = True
    kvlist = span.attributes.add(key="kvlist").value.kvlist_value
    kvlist.values.add(key="x", value=common_pb2.AnyValue(double_value=2.5))
    kvlist.values.add(key="no-value")
    kvlist.values.add(key_strindex=4)
    kvlist.values.add()
    span.attributes.add()  # no key, no value
    span.attributes.add(key="", key_strindex=3).value.string_value = "by index"


def test_hand_built_messages_of_every_shape() -> None:
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.resource_spans.add()  # no resource, no scopes
    full = request.resource_spans.add(schema_url="https://example/schema")
    full.resource.attributes.add(key="service.name").value.string_value = "svc"
    full.resource.dropped_attributes_count = 2
    full.resource.entity_refs.add(
        schema_url="u", type="service", id_keys=["service.name"], description_keys=["a", "b"]
    )
    full.resource.entity_refs.add()
    empty_scope = full.scope_spans.add()
    empty_scope.scope.SetInParent()
    empty_scope.spans.add()  # a span of nothing but defaults
    scoped = full.scope_spans.add(schema_url="s")
    scoped.scope.name = "lib"
    scoped.scope.version = "1.0"
    scoped.scope.attributes.add(key="k").value.int_value = 1
    scoped.scope.dropped_attributes_count = 1
    span = scoped.spans.add(
        trace_id=bytes(range(1, 17)),
        span_id=bytes(range(1, 9)),
        trace_state="a=b",
        parent_span_id=b"\x09" * 8,
        flags=0x301,
        name="root",
        kind=trace_pb2.Span.SPAN_KIND_SERVER,
        start_time_unix_nano=1,
        end_time_unix_nano=2**64 - 1,
        dropped_attributes_count=3,
        dropped_events_count=4,
        dropped_links_count=5,
    )
    _value_kinds(span)
    span.events.add()
    event = span.events.add(time_unix_nano=2**64 - 1, name="e", dropped_attributes_count=1)
    event.attributes.add(key="k").value.bytes_value = b"\x00"
    span.links.add()
    link = span.links.add(
        trace_id=b"\x01" * 16, span_id=b"\x02", trace_state="t", dropped_attributes_count=6, flags=1
    )
    link.attributes.add(key="k").value.string_value = "v"
    span.status.message = "boom"
    span.status.code = trace_pb2.Status.STATUS_CODE_ERROR
    scoped.spans.add(name="empty status").status.SetInParent()
    scoped.spans.add(name="odd enums", kind=99).status.code = 42
    scoped.spans.add(name="ok status").status.code = trace_pb2.Status.STATUS_CODE_OK
    body = request.SerializeToString()
    assert _check_request(request) == 5
    reparsed = _parsed(body)
    assert reparsed is not None and _check_request(reparsed) == 5
    # the converter reads what was built: a few values written from the message above, by hand
    ours = proto_dict.span_dict(span)
    assert ours["traceId"] == "AQIDBAUGBwgJCgsMDQ4PEA=="
    assert ours["endTimeUnixNano"] == "18446744073709551615"
    assert list(ours)[-2:] == ["status", "flags"] and ours["flags"] == 0x301
    values = {a.get("key"): a.get("value") for a in ours["attributes"]}
    assert values["i0"] == {"intValue": "0"} and values["dnan"] == {"doubleValue": "NaN"}
    assert values["unset"] == {} and values["array0"] == {"arrayValue": {}}
    assert proto_dict.span_dict(scoped.spans[1])["status"] == {}


def test_unknown_fields_are_dropped_as_message_to_dict_drops_them() -> None:
    span = trace_pb2.Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="n")
    span.attributes.add(key="k").value.string_value = "v"
    unknown = b"\xf8\x07\x01"  # field 127, varint 1
    with_unknown = trace_pb2.Span()
    with_unknown.ParseFromString(span.SerializeToString() + unknown)
    assert with_unknown.SerializeToString().endswith(unknown)  # kept by the message, not by the dict
    _expect_same(proto_dict.span_dict(with_unknown), with_unknown)
    assert proto_dict.span_dict(with_unknown) == proto_dict.span_dict(span)
    value = common_pb2.AnyValue()
    value.ParseFromString(b"\x0a\x01x" + unknown)  # string_value "x", then field 127
    holder = trace_pb2.Span()
    holder.attributes.add(key="k").value.CopyFrom(value)
    _expect_same(proto_dict.span_dict(holder), holder)


def test_other_installed_messages_fall_back_to_message_to_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    changed = dict(proto_dict.FIELDS)
    changed["opentelemetry.proto.trace.v1.Status"] = ((2, "message"),)
    assert proto_dict.installed_fields() != changed  # a field the converter did not know is noticed
    # the fallback is taken: a message the hand-written path cannot read (no span fields) converts
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.resource_spans.add(schema_url="s")
    with pytest.raises(AttributeError):
        proto_dict.span_dict(request)
    monkeypatch.setattr(proto_dict, "FAST", False)
    assert proto_dict.span_dict(request) == {"resourceSpans": [{"schemaUrl": "s"}]}


def test_the_receiver_audits_the_same_records_as_with_message_to_dict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bodies = _fixture_bodies() + [c.body for c in _corpus_bodies() if _parsed(c.body) is not None]
    kept = [span.record for body in bodies for span in receive_proto(body).spans]
    assert all(isinstance(record, bytes) for record in kept)
    fast = [record_json(bytes(record)) for record in kept]
    monkeypatch.setattr(proto_dict, "FAST", False)
    slow = [record_json(bytes(record)) for record in kept]
    assert fast == slow
    assert len(fast) > 300
