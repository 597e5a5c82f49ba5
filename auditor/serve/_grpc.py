"""OTLP/gRPC: the ``TraceService/Export`` method on ``grpcio``'s server, behind ``--grpc``.

The method is registered as a generic handler that takes and returns raw bytes: a request body
is exactly the protobuf ``ExportTraceServiceRequest`` that OTLP/HTTP carries, so it goes through
the same :class:`Receiver` and the same ``otlp-proto`` adapter as ``POST /v1/traces``, parsed once,
and the reply is the same hand-encoded ``ExportTraceServiceResponse`` (with ``partial_success``).
The service and method names are those of ``opentelemetry-proto``'s ``trace_service.proto``
(a test checks them against the generated descriptor).

Statuses, per the OTLP/gRPC specification: UNAUTHENTICATED without the bearer token (metadata
``authorization: Bearer <token>``); RESOURCE_EXHAUSTED *with* ``RetryInfo`` when the client is over
its rate or the backlog of stored bodies is over ``AUDITOR_SERVE_BACKLOG`` (retryable: the
OTLP specification treats RESOURCE_EXHAUSTED as retryable only with ``RetryInfo``), and
*without* it over the size limit (not retryable; gRPC checks the size, after decompression, from ``grpc.max_receive_message_length``); UNAVAILABLE with ``RetryInfo`` when
the audit queue is full or the store is down; INVALID_ARGUMENT for a body that is not a request.
``RetryInfo`` is sent both as ``grpc-status-details-bin`` (a ``google.rpc.Status``, the standard
place) and as ``google.rpc.retryinfo-bin`` (where the Python SDK's exporter reads it).
"""

from __future__ import annotations

import logging
import math
from concurrent import futures
from typing import Any

import grpc  # type: ignore[import-untyped]

from auditor.errors import UsageError
from auditor.serve._otlp import ADAPTERS, PROTOBUF, Refusal, export_response
from auditor.serve._receiver import Receiver, Throttled
from auditor.trace import SpanReceiver

logger = logging.getLogger(__name__)

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
METHOD = "Export"
#: Requests handled at once; more are refused by gRPC with RESOURCE_EXHAUSTED, so a flood of
#: connections cannot queue unbounded work.
MAX_CONCURRENT = 64
THREADS = 8
RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo"


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | 0x80 if value else byte)
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def retry_info(seconds: float) -> bytes:
    """A ``google.rpc.RetryInfo`` whose ``retry_delay`` is ``seconds``."""
    whole = math.floor(seconds)
    nanos = round((seconds - whole) * 1e9)
    duration = (_varint(1 << 3) + _varint(whole) if whole else b"") + (
        _varint(2 << 3) + _varint(nanos) if nanos else b""
    )
    return _field(1, duration)


def status_details(code: int, message: str, seconds: float) -> bytes:
    """A ``google.rpc.Status`` carrying one ``RetryInfo`` detail (``grpc-status-details-bin``)."""
    detail = _field(1, RETRY_INFO_TYPE.encode()) + _field(2, retry_info(seconds))
    return _varint(1 << 3) + _varint(code) + _field(2, message.encode()) + _field(3, detail)


def _client(peer: str) -> str:
    """``ipv4:127.0.0.1:5555`` / ``ipv6:[::1]:5555`` -> the address without the port."""
    _, _, address = peer.partition(":")
    host = address.rsplit(":", 1)[0] if address.count(":") >= 1 else address
    return host.strip("[]") or "unknown"


class _Export:
    def __init__(self, receiver: Receiver, reader: SpanReceiver) -> None:
        self.receiver, self.reader = receiver, reader

    def __call__(self, body: bytes, context: Any) -> bytes:
        metadata = dict(context.invocation_metadata() or ())
        try:
            self.receiver.authorise(metadata.get("authorization"))
            self.receiver.admit(_client(context.peer()))
            batch = self.receiver.store(ADAPTERS[PROTOBUF], self.reader, body)
        except Refusal as refusal:
            if isinstance(refusal, Throttled):
                context.set_trailing_metadata(
                    (
                        (
                            "grpc-status-details-bin",
                            status_details(refusal.code, refusal.message, refusal.retry_after),
                        ),
                        ("google.rpc.retryinfo-bin", retry_info(refusal.retry_after)),
                    )
                )
            context.abort(_CODES[refusal.code], refusal.message)
            raise  # unreachable: abort raises
        return export_response(PROTOBUF, batch.rejected, "; ".join(batch.errors))


_CODES = {code.value[0]: code for code in grpc.StatusCode}


def start_grpc(receiver: Receiver, reader: SpanReceiver, host: str, port: int) -> Any:
    """A started ``grpc.Server`` answering OTLP/gRPC on ``host:port``; stop it with ``.stop(grace)``.

    Raises:
        UsageError: the port cannot be bound.
    """
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="otlp-grpc"),
        maximum_concurrent_rpcs=MAX_CONCURRENT,
        options=[
            ("grpc.max_receive_message_length", receiver.config.max_body),
            ("grpc.so_reuseport", 0),  # a second server on the same port must fail, not share it
        ],
    )
    handler = grpc.unary_unary_rpc_method_handler(_Export(receiver, reader))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {METHOD: handler}),))
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as err:
        bound = 0
        logger.debug("gRPC bind failed: %s", err)
    if not bound:
        raise UsageError(
            f"Cannot listen for OTLP/gRPC on {host}:{port}: pass another --grpc-port, or stop the process using it."
        )
    server.start()
    return server
