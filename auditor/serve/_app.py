"""The HTTP application: the OTLP/HTTP receiver and the JSON API over the store, on FastAPI.

``POST /v1/traces`` stores a request's spans before it answers (a 200 means they are committed);
``GET /api/...`` reads the store. With a token configured, both need ``Authorization: Bearer``;
``/healthz`` and the OpenAPI docs (``/docs``) do not, so a load balancer can probe the server.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from auditor import __version__
from auditor.errors import AuditorError
from auditor.serve._config import ServeConfig
from auditor.serve._otlp import (
    ADAPTERS,
    JSON,
    UNAUTHENTICATED,
    UNAVAILABLE,
    Refusal,
    decode,
    export_response,
    media_type,
    read_body,
    status_body,
)
from auditor.store import AnswerFilter, Intake, Store, Verdict, get_answer, list_answers
from auditor.trace import SpanReceiver

#: Seconds a client is asked to wait before retrying when the audit queue is full.
RETRY_AFTER = 5


def _answer_json(answer: Any) -> dict[str, Any]:
    data: dict[str, Any] = answer.model_dump(mode="json")
    if data.get("claims") is None:
        data.pop("claims", None)  # as in the JSON contract: left out for evidence-only answers
    return data


def create_app(
    config: ServeConfig, store: Store, intake: Intake, receivers: dict[str, SpanReceiver]
) -> FastAPI:
    """The application over an open store; ``receivers`` maps a media type to the adapter reading it."""
    app = FastAPI(
        title="trace-auditor",
        version=__version__,
        description="OTLP/HTTP trace receiver and the audits of the answers it received.",
    )

    def authorised(request: Request) -> None:
        if config.token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(
            value.strip().encode(), config.token.encode()
        ):
            raise HTTPException(
                401,
                "missing or wrong bearer token: send `Authorization: Bearer <AUDITOR_SERVE_TOKEN>`",
                headers={"WWW-Authenticate": "Bearer"},
            )

    def refused(media: str, refusal: Refusal, headers: dict[str, str] | None = None) -> Response:
        body, kind = status_body(media, refusal.code, refusal.message)
        return Response(body, status_code=refusal.status, media_type=kind, headers=headers)

    @app.post("/v1/traces", summary="OTLP/HTTP trace export (protobuf or JSON, optionally gzip)")
    async def export_traces(request: Request) -> Response:
        media = media_type(request.headers.get("content-type"))
        if config.token is not None:
            try:
                authorised(request)
            except HTTPException as exc:
                return refused(
                    media, Refusal(401, UNAUTHENTICATED, str(exc.detail)), {"WWW-Authenticate": "Bearer"}
                )
        receiver = receivers.get(media)
        if receiver is None:
            accepted = " or ".join(ADAPTERS)
            detail = f"Content-Type {media or '(none)'!r} is not OTLP: send {accepted}"
            if media in ADAPTERS:
                detail = f"the {ADAPTERS[media]} adapter is not installed: pip install auditor-otel"
            return refused(JSON, Refusal(415, 3, detail))
        try:
            if await run_in_threadpool(intake.pending) >= config.queue:
                raise Refusal(
                    503, UNAVAILABLE, f"{config.queue} traces are waiting for an audit: retry later"
                )
            declared = request.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > config.max_body:
                raise Refusal(
                    413, 8, f"the request body is over {config.max_body} bytes: send smaller batches"
                )
            raw = await read_body(request.stream(), config.max_body)
            body = decode(raw, request.headers.get("content-encoding"), config.max_body)
            batch = await run_in_threadpool(receiver.receive, body)
            if batch.unreadable is not None:
                raise Refusal(400, 3, batch.unreadable)
            await run_in_threadpool(intake.receive, batch.spans)
        except Refusal as refusal:
            retry = {"Retry-After": str(RETRY_AFTER)} if refusal.status == 503 else None
            return refused(media, refusal, retry)
        except AuditorError as err:  # the store is unavailable: nothing was acknowledged, retry
            return refused(media, Refusal(503, UNAVAILABLE, str(err)), {"Retry-After": str(RETRY_AFTER)})
        message = "; ".join(batch.errors)
        return Response(export_response(media, batch.rejected, message), media_type=media)

    @app.get("/healthz", summary="Liveness, with the number of traces waiting for an audit")
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "version": __version__, "pending": await run_in_threadpool(intake.pending)}

    guarded = [Depends(authorised)]

    @app.get("/api/answers", dependencies=guarded, summary="Audited answers, newest first, paged")
    async def answers(
        trace_id: str | None = None,
        run_id: str | None = None,
        verdict: Verdict | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        next: str | None = None,
    ) -> dict[str, Any]:
        wanted = AnswerFilter(trace_id=trace_id, run_id=run_id, verdict=verdict, since=since, until=until)
        try:
            page = await run_in_threadpool(lambda: list_answers(store, wanted, limit=limit, after=next))
        except AuditorError as err:
            raise HTTPException(400, str(err)) from err
        return {"answers": [_answer_json(a) for a in page.answers], "next": page.next}

    @app.get("/api/answers/{answer_id}", dependencies=guarded, summary="One answer's latest audit")
    async def answer(answer_id: str, run_id: str | None = None) -> dict[str, Any]:
        found = await run_in_threadpool(get_answer, store, answer_id, run_id)
        if found is None:
            raise HTTPException(404, f"no audited answer {answer_id!r}: GET /api/answers lists them")
        return _answer_json(found)

    @app.get("/api/runs", dependencies=guarded, summary="Stored runs, newest first")
    async def runs(limit: Annotated[int, Query(ge=1, le=500)] = 50) -> dict[str, Any]:
        rows = await run_in_threadpool(store.list_runs, limit)
        return {"runs": [row.model_dump(mode="json") for row in rows]}

    @app.get("/api/audits", dependencies=guarded, summary="Audit passes of received traces, oldest first")
    async def audits(trace_id: str | None = None) -> dict[str, Any]:
        passes = await run_in_threadpool(intake.audits, trace_id)
        return {
            "audits": [
                {
                    "trace_id": p.trace_id,
                    "generation": p.generation,
                    "run_id": p.run_id,
                    "spans": p.spans,
                    "error": p.error,
                }
                for p in passes
            ]
        }

    @app.exception_handler(AuditorError)
    async def store_unavailable(_request: Request, err: AuditorError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=503, headers={"Retry-After": str(RETRY_AFTER)})

    return app
