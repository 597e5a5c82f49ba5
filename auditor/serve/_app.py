"""The HTTP application: the OTLP/HTTP receiver and the JSON API over the store, on FastAPI.

``POST /v1/traces`` stores a request's spans before it answers (a 200 means they are committed);
``GET /api/...`` reads the store. With a token configured, both need ``Authorization: Bearer``;
``/healthz`` and the OpenAPI schema (``/openapi.json``) do not, so a load balancer can probe the
server. There is no ``/docs`` or ``/redoc`` page: FastAPI's load Swagger UI and ReDoc from a CDN,
which fails offline and would need the pages' Content-Security-Policy opened to another host; any
OpenAPI tool reads the schema instead.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from auditor import __version__
from auditor.errors import AuditorError, UsageError
from auditor.policy import load_policy
from auditor.serve._api import add_api
from auditor.serve._auth import Access
from auditor.serve._budget import CapGuard
from auditor.serve._config import ServeConfig
from auditor.serve._guard import HostPolicy, RequestGuard
from auditor.serve._http import add_otlp_http
from auditor.serve._pages import add_pages
from auditor.serve._receiver import RETRY_AFTER, Receiver
from auditor.store import BodyQueue, Intake, SignIns, Store
from auditor.trace import SpanReceiver


def create_app(
    config: ServeConfig,
    store: Store,
    intake: Intake,
    receivers: dict[str, SpanReceiver],
    receiver: Receiver | None = None,
) -> FastAPI:
    """The application over an open store; ``receivers`` maps a media type to the adapter reading it.

    ``receiver`` is shared with the gRPC service when there is one (one rate limit per client).
    """
    app = FastAPI(
        title="trace-auditor",
        version=__version__,
        description="OTLP/HTTP trace receiver and the audits of the answers it received.",
        docs_url=None,  # Swagger UI and ReDoc come from a CDN (module docstring)
        redoc_url=None,
    )

    # Host names and cross-site posts are checked before any route (DNS rebinding, CSRF): _guard.py.
    app.add_middleware(RequestGuard, hosts=HostPolicy.build(config.host, config.hosts))
    receiver = receiver or Receiver(config, intake, BodyQueue(store))
    add_otlp_http(app, receiver, receivers)

    @app.get(
        "/healthz",
        summary="Liveness, with the traces waiting for an audit and the bodies waiting to be read",
    )
    async def healthz() -> dict[str, Any]:
        bodies, spans = await run_in_threadpool(receiver.bodies.backlog)
        pending = await run_in_threadpool(intake.pending)
        return {
            "status": "ok",
            "version": __version__,
            "pending": pending,
            "backlog": {"bodies": bodies, "spans": spans},
        }

    # The pages and the read API (answers, runs, summary): _pages.py and _api.py.
    access = Access(config.token, SignIns(store))
    guarded = [Depends(access.api)]
    policy = load_policy(config.policy)
    add_api(app, store, access, policy.thresholds)
    add_pages(app, store, access, policy)

    @app.get(
        "/api/audits", dependencies=guarded, summary="Audit passes of received traces, oldest first, paged"
    )
    async def audits(
        trace_id: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        next: Annotated[str | None, Query(description="the `next` cursor of the previous page")] = None,
    ) -> dict[str, Any]:
        try:
            page = await run_in_threadpool(lambda: intake.audit_page(trace_id, limit=limit, after=next))
        except UsageError as err:
            raise HTTPException(400, str(err)) from err
        return {
            "audits": [
                {
                    "trace_id": p.trace_id,
                    "generation": p.generation,
                    "run_id": p.run_id,
                    "spans": p.spans,
                    "error": p.error,
                }
                for p in page.audits
            ],
            "next": page.next,
        }

    cap = CapGuard(config.cap, config.cap_then, store) if config.cap and config.judge != "offline" else None

    @app.get("/api/budget", dependencies=guarded, summary="The live sample, filter and LLM spending cap")
    async def budget() -> dict[str, Any]:
        state = await run_in_threadpool(cap.check) if cap is not None else None
        return {
            "sampling": config.sampling.recorded(),
            "judge": config.judge,
            "cap": state.as_json() if state is not None else None,
        }

    @app.exception_handler(ClientDisconnect)  # gone mid-body (or cut off by _timeouts.py): no one to tell
    async def client_gone(_request: Request, _err: ClientDisconnect) -> Response:
        return Response(status_code=408)

    @app.exception_handler(UsageError)  # what the request asked cannot work: the client's to fix
    async def bad_request(_request: Request, err: UsageError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=400)

    @app.exception_handler(AuditorError)
    async def store_unavailable(_request: Request, err: AuditorError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=503, headers={"Retry-After": str(RETRY_AFTER)})

    return app
