"""The receiving hook: one OTLP export request split into spans, for a server that stores them.

A file adapter parses a whole stream into traces; a server must instead acknowledge each request
once its spans are stored, and assemble a trace later from spans that may arrive in many requests.
An adapter that can read export requests also implements :class:`SpanReceiver`: ``receive`` turns
one request body into :class:`ReceivedSpan` records (``check`` counts them first, cheaply), each a
self-contained one-span OTLP request: JSON text that the ``otlp-json`` adapter reads back, or
protobuf bytes that a :class:`BinaryRecords` adapter turns into that text when the trace is
audited. So a stored trace is audited by the same file adapter as ``auditor audit`` (``auditor
serve`` writes a trace's records as one JSONL file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class ReceivedSpan:
    """One received span: its ids, when it ended, and the span as a one-span OTLP request.

    ``record`` holds this span with its resource and scope: as text, one line of an OTLP JSON file
    (``{"resourceSpans": [...]}``); as bytes, a protobuf ``ExportTraceServiceRequest``, which
    :meth:`BinaryRecords.record_json` turns into that line. ``end_ns`` is None for a span that has
    not ended. ``service`` is the resource's ``service.name`` where the adapter read it (the
    server's ``service`` filter matches it; a text record is also matched by its text).
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    end_ns: int | None
    record: str | bytes
    service: str | None = None


@dataclass(frozen=True)
class ReceivedBatch:
    """What one request held: the readable spans, how many were rejected and why.

    ``unreadable`` is set (and nothing else counts) when the body is not a request at all.
    """

    spans: tuple[ReceivedSpan, ...] = ()
    rejected: int = 0
    errors: tuple[str, ...] = field(default_factory=tuple)
    unreadable: str | None = None


@dataclass(frozen=True)
class BodyCheck:
    """What one request holds, counted without building the spans: ``spans`` readable ones, the
    ``rejected`` ones and why; ``unreadable`` set when the body is not a request at all."""

    spans: int = 0
    rejected: int = 0
    errors: tuple[str, ...] = ()
    unreadable: str | None = None


@runtime_checkable
class SpanReceiver(Protocol):
    """An adapter that reads one export request body.

    Contract: neither method raises for bad input; an unreadable body has ``unreadable`` set, a
    bad span is counted in ``rejected`` with a short reason in ``errors``. ``check`` is the fast
    half the server answers on (the body is stored, then split by ``receive`` later): for the
    same body it counts exactly the spans ``receive`` returns and rejects, for the same reasons.
    """

    def check(self, body: bytes) -> BodyCheck: ...

    def receive(self, body: bytes) -> ReceivedBatch: ...


@runtime_checkable
class BinaryRecords(Protocol):
    """An adapter whose :meth:`SpanReceiver.receive` keeps spans as protobuf bytes: it reads one
    back as the OTLP JSON line a stored trace is audited from.

    Contract: raises ``ValueError`` for bytes that are not such a record.
    """

    def record_json(self, record: bytes) -> str: ...
