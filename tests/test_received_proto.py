"""Spans of protobuf bodies are kept as protobuf (migration 0024) and audited from the same JSON.

The receiver keeps each span of a protobuf body as a one-span protobuf request with its
resource's ``service.name`` beside it; the audit turns it into the OTLP JSON line the JSON path
stores for the same span. Expected values come from the request itself: the same request sent
as OTLP JSON (``json_format``'s rendering, ids in base64 as that module writes them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic import command
from auditor_otel.receive import receive_json, receive_proto, record_json
from google.protobuf import json_format  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from sqlalchemy import create_engine, text

import tests.test_store
from auditor.serve._workers import binary_records, json_lines
from auditor.store import Intake, Store, upgrade
from auditor.store.migrations import alembic_config
from auditor.trace import ReceivedSpan
from tests.conftest import FIXTURES

db_url, pg_url, fresh_pg_url = tests.test_store.db_url, tests.test_store.pg_url, tests.test_store.fresh_pg_url
PB = FIXTURES / "single_retrieval" / "openinference.otlp.pb"
SERVICE = "support-agent-demo"  # the fixture's resource service.name


def _fixture_bodies() -> list[bytes]:
    files = sorted(FIXTURES.glob("**/*.otlp.pb"))
    assert len(files) >= 13
    bodies = []
    for file in files:
        data = file.read_bytes()
        if data[:2] != b"\0\0":
            bodies.append(data)
            continue
        pos = 0  # the Collector file exporter's stream: 4-byte big-endian lengths
        while pos < len(data):
            size = int.from_bytes(data[pos : pos + 4], "big")
            bodies.append(data[pos + 4 : pos + 4 + size])
            pos += 4 + size
    return bodies


def test_a_protobuf_span_audits_as_the_json_record_of_the_same_span() -> None:
    compared = 0
    for body in _fixture_bodies():
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        as_json = json_format.MessageToJson(request, use_integers_for_enums=True).encode("utf-8")
        kept, written = receive_proto(body), receive_json(as_json)
        assert [s.span_id for s in kept.spans] == [s.span_id for s in written.spans]
        for proto_span, json_span in zip(kept.spans, written.spans, strict=True):
            assert isinstance(proto_span.record, bytes) and isinstance(json_span.record, str)
            assert (proto_span.trace_id, proto_span.parent_id, proto_span.end_ns) == (
                json_span.trace_id,
                json_span.parent_id,
                json_span.end_ns,
            )
            assert json.loads(record_json(proto_span.record)) == json.loads(json_span.record)
            compared += 1
    assert compared > 100


def test_a_protobuf_span_carries_its_resource_service_name() -> None:
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(PB.read_bytes())
    spans = receive_proto(PB.read_bytes()).spans
    assert spans and {s.service for s in spans} == {SERVICE}
    # Without a service.name, or with one that is not a string: none.
    resource = request.resource_spans[0].resource
    for pair in resource.attributes:
        if pair.key == "service.name":
            pair.value.int_value = 7
    assert {s.service for s in receive_proto(request.SerializeToString()).spans} == {None}
    request.resource_spans[0].ClearField("resource")
    assert {s.service for s in receive_proto(request.SerializeToString()).spans} == {None}
    # A JSON body's spans keep their text, which the filter matches.
    assert {s.service for s in receive_json(json_format.MessageToJson(request).encode()).spans} == {None}


def test_record_json_refuses_bytes_that_are_not_a_one_span_request() -> None:
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(PB.read_bytes())
    for bad in (b"\xff\xff\xff", b"", request.SerializeToString()):  # not a request, none, many spans
        with pytest.raises(ValueError, match="not a one-span protobuf request"):
            record_json(bad)


def test_a_trace_of_both_forms_is_written_as_json_lines(db_url: str) -> None:
    upgrade(db_url)
    spans = receive_proto(PB.read_bytes()).spans
    first = spans[0]
    as_text = ReceivedSpan(
        first.trace_id, first.span_id, first.parent_id, first.end_ns, record_json(first.record)
    )
    with Store(db_url) as store:
        intake = Intake(store)
        intake.receive([as_text])
        intake.receive(spans[1:])
        held = intake.claim("w", quiet=0.0, root_wait=0.0, lease=30.0)
        assert held is not None
        assert isinstance(held.records[0], str) and all(isinstance(r, bytes) for r in held.records[1:])
        lines = json_lines(held.records, binary_records())
    # In the order received, then by span id.
    expected = [spans[0], *sorted(spans[1:], key=lambda s: s.span_id)]
    assert [json.loads(line) for line in lines] == [
        json.loads(record_json(bytes(s.record))) for s in expected
    ]
    with pytest.raises(ValueError, match="otlp-proto adapter is not installed"):
        json_lines(held.records, None)


def test_the_service_filter_reads_the_service_of_a_protobuf_span(db_url: str) -> None:
    upgrade(db_url)
    spans = receive_proto(PB.read_bytes()).spans
    with Store(db_url) as store:
        Intake(store).receive(spans)
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT record, service, proto FROM received_spans")).all()
    finally:
        engine.dispose()
    assert len(rows) == len(spans)
    assert all(
        record == "" and service == SERVICE and isinstance(proto, bytes) for record, service, proto in rows
    )


def _downgrade(url: str, revision: str) -> None:
    with Store(url) as store, store.engine.begin() as conn:
        config = alembic_config(store.url)
        config.attributes["connection"] = conn
        command.downgrade(config, revision)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_the_downgrade_writes_protobuf_spans_back_as_their_json_records(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'store.db'}" if kind == "sqlite" else request.getfixturevalue("fresh_pg_url")
    )
    upgrade(url)
    spans = receive_proto(PB.read_bytes()).spans
    with Store(url) as store:
        Intake(store).receive(spans)
    _downgrade(url, "0023")
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            result = conn.execute(text("SELECT span_id, record FROM received_spans"))
            columns, rows = list(result.keys()), result.all()
    finally:
        engine.dispose()
    assert "proto" not in columns and "service" not in columns
    assert dict(rows) == {s.span_id: record_json(bytes(s.record)) for s in spans}
    upgrade(url)  # and up again: the JSON records stay as they are
    with Store(url) as store:
        held = Intake(store).claim("w", quiet=0.0, root_wait=0.0, lease=30.0)
    assert held is not None and all(isinstance(r, str) for r in held.records)
