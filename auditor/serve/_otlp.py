"""The OTLP/HTTP wire rules that do not depend on a web framework: bodies in, responses out.

Follows the OTLP/HTTP specification (``opentelemetry-proto`` ``docs/specification.md``): a
request body is protobuf or JSON, optionally gzip-compressed; the response to an accepted request
is an ``ExportTraceServiceResponse`` in the request's encoding, with ``partial_success`` set when
some spans were rejected; a refused request carries a ``google.rpc.Status``. Both messages are
tiny and are encoded here by hand, so the core needs no protobuf runtime (the OTel adapter, which
parses the requests, brings its own).

Sizes are bounded before work is done: a body is read up to the limit and no further, and gzip
output is inflated at most one byte past the limit, so a small "zip bomb" costs nothing. A gzip
body may hold several members (RFC 1952; ``cat a.gz b.gz``): all are read, their output together
held to the limit.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
#: The adapter (``auditor.adapters`` entry point) that reads each accepted content type.
ADAPTERS = {PROTOBUF: "otlp-proto", JSON: "otlp-json"}

# google.rpc.Code values used in Status bodies.
INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAVAILABLE, UNAUTHENTICATED = 3, 8, 14, 16


@dataclass(frozen=True)
class Refusal(Exception):
    """A request the server will not take: the HTTP status and what to tell the client."""

    status: int
    code: int
    message: str


def media_type(content_type: str | None) -> str:
    """``application/json; charset=utf-8`` -> ``application/json``."""
    return (content_type or "").split(";", 1)[0].strip().lower()


async def read_body(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """The request body, refused (413) as soon as it grows past ``limit`` bytes."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise Refusal(
                413, RESOURCE_EXHAUSTED, f"the request body is over {limit} bytes: send smaller batches"
            )
        parts.append(chunk)
    return b"".join(parts)


def decode(body: bytes, encoding: str | None, limit: int) -> bytes:
    """``body`` after its ``Content-Encoding`` (none or gzip), at most ``limit`` bytes of it."""
    name = (encoding or "identity").strip().lower()
    if name == "identity":
        return body
    if name != "gzip":
        raise Refusal(415, INVALID_ARGUMENT, f"Content-Encoding {name!r} is not supported: send gzip or none")
    return _gunzip(body, limit)


#: Compressed bytes fed to the inflater at a time: what is left over at the end of a member is
#: copied once per member, so a body of many tiny members costs at most this per member.
_FEED = 1024


def _gunzip(body: bytes, limit: int) -> bytes:
    """Every member of a gzip body, one after the other (RFC 1952 allows several), within ``limit``."""
    out = bytearray()
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending, at = b"", 0
    while pending or at < len(body):
        if not pending:
            pending, at = body[at : at + _FEED], at + _FEED
        if inflater.eof:  # the previous member ended: what follows is the next one
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(pending, limit + 1 - len(out))
        except zlib.error as exc:
            raise Refusal(400, INVALID_ARGUMENT, f"the gzip body does not decompress ({exc})") from exc
        if len(out) > limit:
            raise Refusal(
                413,
                RESOURCE_EXHAUSTED,
                f"the request body is over {limit} bytes once decompressed: send smaller batches",
            )
        pending = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
    if not inflater.eof:
        raise Refusal(400, INVALID_ARGUMENT, "the gzip body is truncated")
    return bytes(out)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def export_response(media: str, rejected: int, message: str) -> bytes:
    """An ``ExportTraceServiceResponse``; ``partial_success`` set when spans were rejected."""
    if media == JSON:
        if not rejected and not message:
            return b"{}"
        partial = {"rejectedSpans": str(rejected), "errorMessage": message}
        return json.dumps({"partialSuccess": partial}).encode()
    if not rejected and not message:
        return b""
    inner = (_varint(1 << 3) + _varint(rejected) if rejected else b"") + (
        _field(2, message.encode()) if message else b""
    )
    return _field(1, inner)


def status_body(media: str, code: int, message: str) -> tuple[bytes, str]:
    """A ``google.rpc.Status`` body and its content type (JSON unless the request was protobuf)."""
    if media == PROTOBUF:
        return _varint(1 << 3) + _varint(code) + _field(2, message.encode()), PROTOBUF
    return json.dumps({"code": code, "message": message}).encode(), JSON
