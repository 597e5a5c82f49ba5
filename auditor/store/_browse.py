"""Stored answers across runs, filtered and paged, for the server's JSON API.

Answers come back newest first (by when they were generated, then run and answer id) in the
public contract's shape (:class:`~auditor.results.AnswerOut`). Paging is by keyset: ``next`` is
an opaque cursor naming the last answer of the page, so answers saved meanwhile neither repeat
nor shift a page.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import Select, and_, or_, select
from sqlalchemy.orm import Session, selectinload

from auditor.errors import UsageError
from auditor.results import AnswerOut
from auditor.store._convert import answer_out
from auditor.store._schema import AnswerRecord, ClaimRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors

#: ``grounded``: every claim supported; ``ungrounded``: not; ``contradicted``: a claim
#: contradicted; ``refusal``: the answer declined.
Verdict = Literal["grounded", "ungrounded", "contradicted", "refusal"]
VERDICTS: tuple[Verdict, ...] = ("grounded", "ungrounded", "contradicted", "refusal")


@dataclass(frozen=True)
class AnswerFilter:
    """Which stored answers to list (every field optional)."""

    trace_id: str | None = None
    run_id: str | None = None
    verdict: Verdict | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class AnswerPage:
    """One page of answers and the cursor of the next (None on the last page)."""

    answers: list[AnswerOut]
    next: str | None


def _cursor(row: AnswerRecord) -> str:
    raw = json.dumps([row.generated_at.isoformat(), row.run_id, row.answer_id]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _after(cursor: str) -> tuple[datetime, str, str]:
    try:
        stamp, run_id, answer_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return datetime.fromisoformat(stamp), str(run_id), str(answer_id)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise UsageError(
            f"next={cursor!r} is not a cursor this server gave: pass the `next` value of the previous page."
        ) from exc


def _where(query: Select[AnswerRecord], wanted: AnswerFilter) -> Select[AnswerRecord]:
    if wanted.trace_id:
        query = query.where(AnswerRecord.trace_id.startswith(wanted.trace_id, autoescape=True))
    if wanted.run_id:
        query = query.where(AnswerRecord.run_id.startswith(wanted.run_id, autoescape=True))
    if wanted.since is not None:
        query = query.where(AnswerRecord.generated_at >= wanted.since)
    if wanted.until is not None:
        query = query.where(AnswerRecord.generated_at < wanted.until)
    if wanted.verdict == "grounded":
        query = query.where(AnswerRecord.grounded.is_(True))
    elif wanted.verdict == "ungrounded":
        query = query.where(AnswerRecord.grounded.is_(False))
    elif wanted.verdict == "contradicted":
        query = query.where(AnswerRecord.contradicted > 0)
    elif wanted.verdict == "refusal":
        query = query.where(AnswerRecord.refusal.is_(True))
    return query


def list_answers(
    store: Store, wanted: AnswerFilter, *, limit: int = 50, after: str | None = None
) -> AnswerPage:
    """A page of stored answers matching ``wanted``, newest first.

    Raises:
        UsageError: ``after`` is not a cursor from an earlier page.
    """
    query = _where(
        select(AnswerRecord).options(
            selectinload(AnswerRecord.evidence),
            selectinload(AnswerRecord.claims).selectinload(ClaimRecord.verdict),
        ),
        wanted,
    )
    if after is not None:
        stamp, run_id, answer_id = _after(after)
        query = query.where(
            or_(
                AnswerRecord.generated_at < stamp,
                and_(AnswerRecord.generated_at == stamp, AnswerRecord.run_id > run_id),
                and_(
                    AnswerRecord.generated_at == stamp,
                    AnswerRecord.run_id == run_id,
                    AnswerRecord.answer_id > answer_id,
                ),
            )
        )
    query = query.order_by(
        AnswerRecord.generated_at.desc(), AnswerRecord.run_id, AnswerRecord.answer_id
    ).limit(limit + 1)
    with store_errors(store.url), Session(store.engine) as session:
        rows = list(session.scalars(query))
        page = rows[:limit]
        return AnswerPage([answer_out(r) for r in page], _cursor(page[-1]) if len(rows) > limit else None)


def get_answer(store: Store, answer_id: str, run_id: str | None = None) -> AnswerOut | None:
    """The latest stored audit of ``answer_id`` (in ``run_id`` when given), or None."""
    query = select(AnswerRecord).where(AnswerRecord.answer_id == answer_id)
    if run_id:
        query = query.where(AnswerRecord.run_id == run_id)
    query = query.order_by(AnswerRecord.saved_at.desc()).limit(1)
    with store_errors(store.url), Session(store.engine) as session:
        row = session.scalars(query).first()
        return answer_out(row) if row is not None else None
