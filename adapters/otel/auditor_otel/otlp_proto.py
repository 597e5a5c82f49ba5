"""Read binary OTLP trace files: one protobuf ``ExportTraceServiceRequest``, or the Collector
file exporter's ``format: proto`` stream (each request prefixed by its 4-byte big-endian length).

Follows ``opentelemetry-proto`` v1.11.0 (``collector/trace/v1/trace_service.proto``), decoded with
the generated ``opentelemetry.proto.collector.trace.v1.trace_service_pb2`` module. The body of an
OTLP/HTTP ``application/x-protobuf`` request saved to a file is exactly this.

A file that does not decode whole (truncated, or a string field with invalid UTF-8, which the
protobuf runtime rejects) is walked by hand, field 1 (``ResourceSpans``) by field 1, then
``ScopeSpans`` and ``Span`` within a bad one, so every span that does decode is kept and the rest
are reported. Problems carry no line number (a binary file has none).

A single request is parsed whole by protobuf (the file is one message; fine for an export request).
The length-prefixed stream is read record by record, and after each record the traces that are
complete are yielded and freed (:mod:`auditor_otel.collect` has the rule), so memory does not grow
with the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from auditor.trace import BodyCheck, Problem, ReceivedBatch, Trace

from . import ids
from .anyvalue import decode_proto_attributes
from .collect import MAX_OPEN_SPANS, QUIET_BATCHES, TraceCollector
from .spans import RawEvent, RawSpan

FORMAT = "otlp-proto"
_MAX_FIELD = 1 << 31


def _varint(data: bytes, pos: int) -> tuple[int, int] | None:
    result = shift = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    return None


def fields(data: bytes) -> Iterator[tuple[int, int, bytes | int] | None]:
    """Top-level ``(field, wire_type, value)`` records; None once the data stops making sense."""
    pos = 0
    while pos < len(data):
        tag = _varint(data, pos)
        if tag is None:
            yield None
            return
        key, pos = tag
        number, wire = key >> 3, key & 7
        if number == 0:
            yield None
            return
        if wire == 0:
            value = _varint(data, pos)
            if value is None:
                yield None
                return
            yield number, wire, value[0]
            pos = value[1]
        elif wire == 2:
            length = _varint(data, pos)
            if length is None or length[1] + length[0] > len(data):
                yield None
                return
            pos = length[1] + length[0]
            yield number, wire, data[length[1] : pos]
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > len(data):
                yield None
                return
            yield number, wire, int.from_bytes(data[pos : pos + size], "little")
            pos += size
        else:
            yield None
            return


def looks_like_request(head: bytes) -> bool:
    """A cheap structural check of the first bytes: field 1, length-delimited, a plausible length,
    and inside it a ``ResourceSpans`` whose fields, as far as the head shows them, are all its own
    length-delimited fields (1 resource, 2 scope_spans, 3 schema_url) and fit inside it.

    The last check keeps text out: a newline is byte 0x0A, the tag of field 1, so a text file that
    starts with blank lines passes the first checks.
    """
    if len(head) < 4 or head[0] != 0x0A:
        return False
    length = _varint(head, 1)
    if length is None or length[0] == 0 or length[0] > _MAX_FIELD:
        return False
    inner = length[1]
    if not (inner < len(head) and head[inner] in (0x0A, 0x12)):
        return False
    end = inner + length[0]
    return _fields_fit(head[inner:end], cut=end > len(head))


def _fields_fit(body: bytes, cut: bool) -> bool:
    """Whether ``body`` is a run of length-delimited fields 1-3; ``cut`` when the head ends inside it."""
    pos = 0
    while pos < len(body):
        tag = _varint(body, pos)
        if tag is None:
            return cut
        key, pos = tag
        if key >> 3 not in (1, 2, 3) or key & 7 != 2:
            return False
        size = _varint(body, pos)
        if size is None:
            return cut
        pos = size[1] + size[0]
        if pos > len(body):
            return cut
    return True


def looks_length_prefixed(head: bytes) -> bool:
    """The Collector file exporter's proto layout: a 4-byte big-endian length, then a request."""
    if len(head) < 8:
        return False
    size = int.from_bytes(head[:4], "big")
    return 0 < size < _MAX_FIELD and looks_like_request(head[4:])


def _raw_span(span: Any, scope: str) -> RawSpan:
    notes: list[str] = []
    parent_bytes = bytes(span.parent_span_id)
    parent_id = ids.from_bytes(parent_bytes, 8) if parent_bytes else None
    if parent_bytes and parent_id is None:
        notes.append("parent_span_id is not a valid id; span treated as a root")
    return RawSpan(
        trace_id=ids.from_bytes(bytes(span.trace_id), 16) or "",
        span_id=ids.from_bytes(bytes(span.span_id), 8) or "",
        parent_id=parent_id,
        name=str(span.name),
        start_ns=int(span.start_time_unix_nano) or None,
        end_ns=int(span.end_time_unix_nano) or None,
        status_code=int(span.status.code),
        status_message=str(span.status.message) or None,
        attributes=decode_proto_attributes(span.attributes),
        events=[
            RawEvent(
                name=str(e.name),
                time_ns=int(e.time_unix_nano) or None,
                attributes=decode_proto_attributes(e.attributes),
            )
            for e in span.events
        ],
        scope=scope,
        notes=notes,
    )


class OtlpProtoAdapter:
    """OTLP/protobuf: a binary ``ExportTraceServiceRequest`` (an OTLP/HTTP body saved to a file)."""

    name = "otlp-proto"
    description = (
        "OTLP/protobuf traces (a binary ExportTraceServiceRequest, or Collector length-prefixed records)"
    )

    def sniff(self, first_bytes: bytes) -> bool:
        try:
            return looks_like_request(first_bytes) or looks_length_prefixed(first_bytes)
        except Exception:
            return False

    #: Streaming limits (see :mod:`auditor_otel.collect`); instance attributes may be changed.
    quiet_batches = QUIET_BATCHES
    max_open_spans = MAX_OPEN_SPANS

    def receive(self, body: bytes) -> ReceivedBatch:
        """One OTLP/HTTP protobuf request body split into spans (:mod:`auditor_otel.receive`)."""
        from .receive import receive_proto

        return receive_proto(body)

    def check(self, body: bytes) -> BodyCheck:
        """What :meth:`receive` would find in ``body``, counted before the server answers."""
        from .receive import check_proto

        return check_proto(body)

    def record_json(self, record: bytes) -> str:
        """A span :meth:`receive` kept as protobuf, as the one-span OTLP JSON line it is audited from."""
        from .receive import record_json

        return record_json(record)

    def evaluation_exporter(self, endpoint: str, headers: dict[str, str] | None = None) -> Any:
        """An :class:`~auditor_otel.evaluations.OtlpEvaluationExporter` sending verdicts to ``endpoint``
        as ``gen_ai.evaluation.result`` events (``auditor serve``'s events endpoint).

        Raises:
            ImportError: the ``events`` extra (the OpenTelemetry SDK and OTLP/HTTP exporter) is missing.
        """
        from .evaluations import OtlpEvaluationExporter

        return OtlpEvaluationExporter(endpoint, headers)

    def parse(self, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]:
        collector = TraceCollector(
            source, FORMAT, quiet_batches=self.quiet_batches, max_open_spans=self.max_open_spans
        )
        head = stream.read(64)
        if not looks_like_request(head) and looks_length_prefixed(head):
            yield from self._length_prefixed(head, stream, source, collector)
            yield from collector.finish()
            return
        # One ExportTraceServiceRequest: protobuf parses a message whole, so the file is read
        # whole (it is one export request, typically a few MB at most).
        data = head + stream.read()
        request = trace_service_pb2.ExportTraceServiceRequest()
        try:
            request.ParseFromString(data)
        except DecodeError as exc:
            yield Problem(
                file=source,
                reason=f"the file does not decode as one ExportTraceServiceRequest ({exc}); "
                "reading it record by record",
            )
            yield from self._salvage(data, source, collector)
        else:
            del data
            for resource in request.resource_spans:
                yield from self._resource(resource, source, collector)
        yield from collector.finish()

    def _length_prefixed(
        self, head: bytes, stream: BinaryIO, source: str, collector: TraceCollector
    ) -> Iterator[Trace | Problem]:
        """Stream the records one at a time; complete traces are yielded after each record."""
        pending = head
        record = 0
        while True:
            if len(pending) < 4:
                pending += stream.read(4 - len(pending))
            if not pending:
                return
            record += 1
            if len(pending) < 4:
                yield Problem(file=source, reason=f"record {record} is truncated; skipped")
                return
            size = int.from_bytes(pending[:4], "big")
            body = pending[4 : 4 + size]
            pending = pending[4 + size :]
            if len(body) < size:
                body += stream.read(size - len(body))
            if len(body) < size:
                yield Problem(file=source, reason=f"record {record} is truncated; skipped")
                return
            request = trace_service_pb2.ExportTraceServiceRequest()
            try:
                request.ParseFromString(body)
            except DecodeError as exc:
                yield Problem(
                    file=source, reason=f"record {record} does not decode ({exc}); reading it field by field"
                )
                yield from self._salvage(body, source, collector)
            else:
                for resource in request.resource_spans:
                    yield from self._resource(resource, source, collector)
            del request, body
            yield from collector.complete()

    def _resource(self, resource: Any, source: str, collector: TraceCollector) -> Iterator[Problem]:
        for scope_spans in resource.scope_spans:
            for span in scope_spans.spans:
                yield from collector.add(_raw_span(span, str(scope_spans.scope.name)))

    def _salvage(self, data: bytes, source: str, collector: TraceCollector) -> Iterator[Problem]:
        for index, record in enumerate(fields(data)):
            if record is None:
                yield Problem(
                    file=source,
                    reason=f"resource_spans record {index + 1} is truncated or corrupt; "
                    "the rest of the file is skipped",
                )
                return
            number, wire, value = record
            if number != 1 or wire != 2 or not isinstance(value, bytes):
                continue
            resource = trace_pb2.ResourceSpans()
            try:
                resource.ParseFromString(value)
            except DecodeError:
                yield from self._salvage_resource(value, index + 1, source, collector)
                continue
            yield from self._resource(resource, source, collector)

    def _salvage_resource(
        self, data: bytes, index: int, source: str, collector: TraceCollector
    ) -> Iterator[Problem]:
        for record in fields(data):
            if record is None or record[0] != 2 or not isinstance(record[2], bytes):
                continue
            scope_name = ""
            for inner in fields(record[2]):
                if inner is None:
                    break
                number, _, value = inner
                if number == 1 and isinstance(value, bytes):
                    scope = trace_pb2.ScopeSpans()
                    try:
                        scope.ParseFromString(b"\x0a" + _length(value) + value)
                        scope_name = str(scope.scope.name)
                    except DecodeError:
                        scope_name = ""
                elif number == 2 and isinstance(value, bytes):
                    span = trace_pb2.Span()
                    try:
                        span.ParseFromString(value)
                    except DecodeError as exc:
                        yield Problem(
                            file=source,
                            reason=f"a span in resource_spans record {index} does not decode "
                            f"({exc}); skipped",
                        )
                        continue
                    yield from collector.add(_raw_span(span, scope_name))


def _length(value: bytes) -> bytes:
    size = len(value)
    out = bytearray()
    while True:
        byte = size & 0x7F
        size >>= 7
        if size:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
