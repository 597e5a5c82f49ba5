"""The read side of the JSON API: answers, one answer, runs and the summary of a filter.

Answers are in the public JSON contract's shape (``README.md``, "The JSON result"), each with the
``run_id`` of the run that audited it, paged as ``{"answers": [...], "next": cursor}``. Every
filter runs in SQL (:class:`auditor.store.AnswerFilter`). With a token configured, every route
here needs ``Authorization: Bearer <token>``. An answer whose only doubt is an unjudged claim says
so (``undecided: true``, ``status: "undecided"``, and each such claim's ``unjudged_text``), and the
summary names every unjudged reason it counts in a sentence (``unjudged_reasons``), and the samples
its answers were audited under (``sample``: each live server's share of traces and filter, with its
answers, and the answers judged offline because the LLM spending cap was reached).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query
from starlette.concurrency import run_in_threadpool

from auditor.errors import UsageError
from auditor.judges import describe_unjudged
from auditor.policy import Thresholds
from auditor.results import AnswerOut
from auditor.serve._auth import Access
from auditor.serve._figures import summary_of
from auditor.serve._filters import filter_params, utc_time
from auditor.store import (
    AnswerFilter,
    PolicyOutcome,
    Store,
    Verdict,
    find_answer,
    list_answers,
    sample_json,
    samples_of,
)


def answer_json(answer: AnswerOut, run_id: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = answer.model_dump(mode="json")
    if data.get("claims") is None:
        data.pop("claims", None)  # as in the JSON contract: left out for evidence-only answers
    if run_id is not None:
        data["run_id"] = run_id
    return data


def answer_query(
    trace_id: Annotated[str | None, Query(description="a trace id, or a prefix of one")] = None,
    run_id: Annotated[str | None, Query(description="a run id, or a prefix of one")] = None,
    verdict: Verdict | None = None,
    since: Annotated[datetime | None, Query(description="generated at or after (ISO 8601)")] = None,
    until: Annotated[datetime | None, Query(description="generated before (ISO 8601)")] = None,
    q: Annotated[str | None, Query(max_length=500, description="text in the question or answer")] = None,
    policy: Annotated[str | None, Query(description="policy name, or a prefix of its SHA-256")] = None,
    source_class: Annotated[str | None, Query(description="an evidence item of this source class")] = None,
    question_type: str | None = None,
    outcome: Annotated[PolicyOutcome | None, Query(description="what the policy did to the evidence")] = None,
    service: Annotated[str | None, Query(description="service.name of a trace received over OTLP")] = None,
    conversation_id: Annotated[str | None, Query(description="a session / conversation id (exact)")] = None,
) -> AnswerFilter:
    """The answers filter of a request's query parameters (typed, so they appear in the OpenAPI docs)."""
    try:
        since, until = (utc_time(n, t) if t else None for n, t in (("since", since), ("until", until)))
    except UsageError as err:
        raise HTTPException(400, str(err)) from err
    return AnswerFilter(
        trace_id=trace_id,
        run_id=run_id,
        verdict=verdict,
        since=since,
        until=until,
        q=q,
        policy=policy,
        source_class=source_class,
        question_type=question_type,
        outcome=outcome,
        service=service,
        conversation_id=conversation_id,
    )


def add_api(app: FastAPI, store: Store, access: Access, thresholds: Thresholds | None = None) -> None:
    """Route ``/api/answers``, ``/api/answers/{answer_id}``, ``/api/runs`` and ``/api/summary``."""
    guarded = [Depends(access.api)]

    @app.get("/api/answers", dependencies=guarded, summary="Audited answers, newest first, filtered, paged")
    async def answers(
        chosen: Annotated[AnswerFilter, Depends(answer_query)],
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        next: Annotated[str | None, Query(description="the `next` cursor of the previous page")] = None,
    ) -> dict[str, Any]:
        try:
            page = await run_in_threadpool(lambda: list_answers(store, chosen, limit=limit, after=next))
        except UsageError as err:
            raise HTTPException(400, str(err)) from err
        return {
            "answers": [answer_json(a, r) for a, r in zip(page.answers, page.run_ids, strict=True)],
            "next": page.next,
        }

    @app.get("/api/answers/{answer_id}", dependencies=guarded, summary="One answer's latest audit")
    async def answer(answer_id: str, run_id: str | None = None) -> dict[str, Any]:
        found = await run_in_threadpool(find_answer, store, answer_id, run_id)
        if found is None:
            raise HTTPException(404, f"no audited answer {answer_id[:80]!r}: GET /api/answers lists them")
        return answer_json(found.answer, found.run.id)

    @app.get("/api/runs", dependencies=guarded, summary="Stored runs, newest first")
    async def runs(limit: Annotated[int, Query(ge=1, le=500)] = 50) -> dict[str, Any]:
        rows = await run_in_threadpool(store.list_runs, limit)
        return {"runs": [row.model_dump(mode="json") for row in rows]}

    @app.get(
        "/api/summary",
        dependencies=guarded,
        summary="Headline figures over the answers a filter selects, with denominators and intervals",
    )
    async def summary(chosen: Annotated[AnswerFilter, Depends(answer_query)]) -> dict[str, Any]:
        figures = await run_in_threadpool(summary_of, store, chosen, thresholds)
        shares, capped = await run_in_threadpool(samples_of, store, chosen, figures.answers)
        return {
            "filter": filter_params(chosen),
            "summary": figures.model_dump(mode="json"),
            # The samples the figures were measured on: a rate is never quoted without its sample.
            "sample": sample_json(shares, capped),
            "unjudged_reasons": {
                code: describe_unjudged(code) for code in sorted(figures.unjudged_by_reason)
            },
        }
