"""``POST /v1/traces``: the OTLP/HTTP receiver, on the application :func:`create_app` builds.

A 200 means the request's body is committed (:meth:`Receiver.store`): its spans are read into the
store right after the answer. Refusals follow the
OTLP/HTTP retry contract: 429 (this client is over ``AUDITOR_SERVE_RATE``, or more than
``AUDITOR_SERVE_BACKLOG`` bodies wait to be read) and 503 (the audit
queue is full, or the store is down) carry ``Retry-After``; 400, 401, 413 and 415 are not
retryable. Each answer is a ``google.rpc.Status`` in the request's encoding.
"""

from __future__ import annotations

from fastapi import FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool

from auditor.serve._otlp import (
    ADAPTERS,
    JSON,
    Refusal,
    decode,
    export_response,
    media_type,
    read_body,
    status_body,
)
from auditor.serve._receiver import Receiver, Throttled
from auditor.trace import SpanReceiver


def add_otlp_http(app: FastAPI, receiver: Receiver, readers: dict[str, SpanReceiver]) -> None:
    """Route ``POST /v1/traces`` to ``receiver``; ``readers`` maps a media type to its adapter."""
    limit = receiver.config.max_body

    def refused(media: str, refusal: Refusal) -> Response:
        body, kind = status_body(media, refusal.code, refusal.message)
        headers: dict[str, str] = {}
        if isinstance(refusal, Throttled):
            headers["Retry-After"] = refusal.retry_after_header
        if refusal.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        return Response(body, status_code=refusal.status, media_type=kind, headers=headers)

    @app.post("/v1/traces", summary="OTLP/HTTP trace export (protobuf or JSON, optionally gzip)")
    async def export_traces(request: Request) -> Response:
        media = media_type(request.headers.get("content-type"))
        try:
            receiver.authorise(request.headers.get("authorization"))
        except Refusal as refusal:
            return refused(media, refusal)
        reader = readers.get(media)
        if reader is None:
            accepted = " or ".join(ADAPTERS)
            detail = f"Content-Type {media or '(none)'!r} is not OTLP: send {accepted}"
            if media in ADAPTERS:
                detail = f"the {ADAPTERS[media]} adapter is not installed: pip install auditor-otel"
            return refused(JSON, Refusal(415, 3, detail))
        try:
            client = request.client.host if request.client is not None else "unknown"
            await run_in_threadpool(receiver.admit, client)
            declared = request.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > limit:
                raise Refusal(413, 8, f"the request body is over {limit} bytes: send smaller batches")
            raw = await read_body(request.stream(), limit)
            body = decode(raw, request.headers.get("content-encoding"), limit)
            batch = await run_in_threadpool(receiver.store, ADAPTERS[media], reader, body)
        except Refusal as refusal:
            return refused(media, refusal)
        return Response(export_response(media, batch.rejected, "; ".join(batch.errors)), media_type=media)
