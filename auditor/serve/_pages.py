"""The web app: server-rendered pages over the store (answers, one answer, runs, trend, policy).

Every page is a GET whose state is in its query string (filters, page cursor), so a view can be
bookmarked and shared; filters run in SQL (:func:`auditor.store.list_answers`). A filter value
that cannot be read is shown as one line above an empty list, never a traceback. With a token
configured, pages need the sign-in cookie (:mod:`._auth`) and send the browser to ``/login``.
The answer's attribution view is the report's own (:func:`auditor.report.render_report` on a
one-answer result), so the server and the shared file show a claim's quotes the same way.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from auditor import __version__
from auditor.errors import UsageError
from auditor.metrics import summarise
from auditor.policy import Policy
from auditor.report import render_report
from auditor.results import AuditResult
from auditor.serve._auth import COOKIE, MAX_LOGIN_BODY, Access, local_path, login_url
from auditor.serve._figures import BUCKETS, Bucket, TrendPoint, trend
from auditor.serve._filters import answer_filter
from auditor.serve._templates import PAGE_CSP, REPORT_CSP, SECURITY_HEADERS, render
from auditor.serve._views import (
    AnswerRow,
    ListView,
    RunsView,
    TrendView,
    answer_url,
    answer_verdict,
    detail,
    form,
    page_url,
)
from auditor.store import (
    AnswerFilter,
    Facets,
    Store,
    answer_facets,
    find_answer,
    list_answers,
    received_traces,
    recent_conversations,
    sample_json,
    samples_of,
)

PAGE_SIZE = 50
#: Seconds the filter choices are reused: each is a DISTINCT over a whole table.
FACETS_TTL = 30.0


def _html(body: str, status: int = 200, csp: str = PAGE_CSP) -> HTMLResponse:
    return HTMLResponse(
        body, status_code=status, headers={"Content-Security-Policy": csp, **SECURITY_HEADERS}
    )


def add_pages(app: FastAPI, store: Store, access: Access, policy: Policy) -> None:
    """Route the pages (``/``, ``/answers/{id}``, ``/runs``, ``/trend``, ``/policy``) and the sign-in."""

    def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        # Whether to offer "Sign out": known once ``signed_in`` checked the cookie, else asked here.
        known = getattr(request.state, "cookie_signed_in", None)
        cookie = known if known is not None else access.token is not None and access.cookie_ok(request)
        return _html(render(template, version=__version__, signed_in=cookie, **context), status)

    async def signed_in(request: Request) -> Response | None:
        """None when the request may see the page, else the redirect to sign in. The cookie is
        checked once per page, in the thread pool: it is a query on the store."""
        cookie = access.token is not None and await run_in_threadpool(access.cookie_ok, request)
        request.state.cookie_signed_in = cookie
        if access.token is None or cookie or access.bearer_ok(request.headers.get("authorization")):
            return None
        return RedirectResponse(login_url(request), status_code=303)

    cached: list[tuple[float, Facets]] = []

    async def choices() -> Facets:
        if not cached or time.monotonic() - cached[0][0] > FACETS_TTL:
            cached[:] = [(time.monotonic(), await run_in_threadpool(answer_facets, store))]
        return cached[0][1]

    def filters(request: Request) -> tuple[AnswerFilter, str | None]:
        try:
            return answer_filter(request.query_params), None
        except UsageError as err:
            return AnswerFilter(), str(err)

    @app.get("/", include_in_schema=False)
    async def answers_page(
        request: Request, after: Annotated[str | None, Query(alias="next")] = None
    ) -> Response:
        if (redirect := await signed_in(request)) is not None:
            return redirect
        wanted, error = filters(request)
        facets = await choices()
        rows: list[AnswerRow] = []
        next_url = None
        if error is None:
            try:
                found = await run_in_threadpool(
                    lambda: list_answers(store, wanted, limit=PAGE_SIZE, after=after)
                )
            except UsageError as err:
                error = str(err)
            else:
                rows = [
                    AnswerRow(a, r, answer_verdict(a), answer_url(a.answer_id, r))
                    for a, r in zip(found.answers, found.run_ids, strict=True)
                ]
                next_url = page_url("/", wanted, next=found.next) if found.next else None
        view = ListView(form(wanted, facets), rows, next_url, page_url("/", wanted) if after else None, error)
        return page(request, "answers.html.j2", 400 if error else 200, view=view, title="Answers")

    @app.get("/answers/{answer_id}", include_in_schema=False)
    async def answer_page(request: Request, answer_id: str, run: str | None = None) -> Response:
        if (redirect := await signed_in(request)) is not None:
            return redirect
        found = await run_in_threadpool(find_answer, store, answer_id, run)
        if found is None:
            return page(request, "missing.html.j2", 404, title="No such answer", what=answer_id)
        return page(request, "answer.html.j2", view=detail(found.run.id, found.answer), title="Answer")

    @app.get("/answers/{answer_id}/attribution", include_in_schema=False)
    async def attribution_page(request: Request, answer_id: str, run: str | None = None) -> Response:
        if (redirect := await signed_in(request)) is not None:
            return redirect
        found = await run_in_threadpool(find_answer, store, answer_id, run)
        if found is None:
            return page(request, "missing.html.j2", 404, title="No such answer", what=answer_id)
        summary = summarise([found.answer], thresholds=policy.thresholds).model_dump(mode="json")
        one = AuditResult(run=found.run, answers=[found.answer], summary=summary)
        return _html(await run_in_threadpool(render_report, one), csp=REPORT_CSP)

    @app.get("/runs", include_in_schema=False)
    async def runs_page(request: Request) -> Response:
        if (redirect := await signed_in(request)) is not None:
            return redirect
        runs = await run_in_threadpool(store.list_runs, 100)
        traces = await run_in_threadpool(received_traces, store, 100)
        conversations = await run_in_threadpool(recent_conversations, store, 50)
        view = RunsView(runs, traces, conversations)
        return page(request, "runs.html.j2", view=view, title="Runs, sessions and live traces")

    @app.get("/trend", include_in_schema=False)
    async def trend_page(request: Request, bucket: str = "hour") -> Response:
        if (redirect := await signed_in(request)) is not None:
            return redirect
        wanted, error = filters(request)
        if bucket not in BUCKETS:
            error = f"bucket={bucket!r} is not one of {', '.join(BUCKETS)}."
        facets = await choices()
        points: list[TrendPoint] = []
        sample = None
        if error is None:
            chosen: Bucket = "day" if bucket == "day" else "hour"
            wanted, points = await run_in_threadpool(trend, store, wanted, chosen, policy.thresholds)
            answers = sum(p.summary.answers for p in points)  # the trend's answers, for the sample
            sample = sample_json(*await run_in_threadpool(samples_of, store, wanted, answers))
        view = TrendView(form(wanted, facets), bucket, points, error, sample)
        return page(request, "trend.html.j2", 400 if error else 200, view=view, title="Trend")

    @app.get("/policy", include_in_schema=False)
    async def policy_page(request: Request) -> Response:
        if (redirect := await signed_in(request)) is not None:
            return redirect
        return page(request, "policy.html.j2", policy=policy, title="Policy in force")

    @app.get("/login", include_in_schema=False)
    async def login_form(request: Request, next: str | None = None, failed: bool = False) -> Response:
        return page(
            request,
            "login.html.j2",
            401 if failed else 200,
            target=local_path(next),
            failed=failed,
            title="Sign in",
        )

    @app.post("/login", include_in_schema=False)
    async def login(request: Request, next: str | None = None) -> Response:
        body = b""
        async for chunk in request.stream():  # read no further than a sign-in form can be
            body += chunk
            if len(body) > MAX_LOGIN_BODY:
                raise HTTPException(413, "the sign-in form is too large")
        target = local_path(next)
        if not access.check_login(body):
            return page(request, "login.html.j2", 401, target=target, failed=True, title="Sign in")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            COOKIE,
            await run_in_threadpool(access.session_value),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    @app.post("/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        await run_in_threadpool(access.sign_out, request)  # a copy of the cookie is worth nothing now
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response
