"""Stored answers across runs, filtered and paged, for the server's JSON API and web pages.

Answers come back newest first (by when they were generated, then run and answer id) in the
public contract's shape (:class:`~auditor.results.AnswerOut`). Every filter is a SQL condition
(:mod:`._filters`), so a page costs one query however many answers the store holds. Paging is by
keyset: ``next`` is an opaque cursor naming the last answer of the page, so answers saved
meanwhile neither repeat nor shift a page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session, subqueryload

from auditor.results import AnswerOut, RunInfo
from auditor.store._convert import answer_out, run_info
from auditor.store._cursor import make_cursor, read_cursor
from auditor.store._filters import AnswerFilter, where
from auditor.store._schema import AnswerRecord, ClaimRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors

#: Answers read per query when every match is wanted (:func:`iter_answers`).
BATCH = 500


@dataclass(frozen=True)
class StoredAnswer:
    """One stored answer and the run that audited it."""

    run: RunInfo
    answer: AnswerOut


@dataclass(frozen=True)
class AnswerPage:
    """One page of answers, the run each was audited in, and the cursor of the next (None on the last page)."""

    answers: list[AnswerOut]
    next: str | None
    run_ids: tuple[str, ...] = ()


def _cursor(row: AnswerRecord) -> str:
    return make_cursor(row.generated_at, row.run_id, row.answer_id)


def list_answers(
    store: Store, wanted: AnswerFilter, *, limit: int = 50, after: str | None = None
) -> AnswerPage:
    """A page of stored answers matching ``wanted``, newest first.

    Raises:
        UsageError: ``after`` is not a cursor from an earlier page.
    """
    query = where(
        # Children by a join on the page's query, not ``(run_id, answer_id) IN (VALUES ...)``: SQLite
        # answers that with a scan of the whole child table (seconds at a million answers).
        select(AnswerRecord).options(
            subqueryload(AnswerRecord.evidence),
            subqueryload(AnswerRecord.claims).subqueryload(ClaimRecord.verdict),
        ),
        wanted,
    )
    if after is not None:
        stamp, run_id, answer_id = read_cursor(after, str, str)
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
        return AnswerPage(
            [answer_out(r) for r in page],
            _cursor(page[-1]) if len(rows) > limit else None,
            tuple(r.run_id for r in page),
        )


def iter_answers(store: Store, wanted: AnswerFilter) -> Iterator[AnswerOut]:
    """Every stored answer matching ``wanted``, newest first, read :data:`BATCH` at a time."""
    after: str | None = None
    while True:
        page = list_answers(store, wanted, limit=BATCH, after=after)
        yield from page.answers
        if page.next is None:
            return
        after = page.next


def get_answer(store: Store, answer_id: str, run_id: str | None = None) -> AnswerOut | None:
    """The latest stored audit of ``answer_id`` (in ``run_id`` when given), or None."""
    found = find_answer(store, answer_id, run_id)
    return found.answer if found is not None else None


def find_answer(store: Store, answer_id: str, run_id: str | None = None) -> StoredAnswer | None:
    """The latest stored audit of ``answer_id`` (in ``run_id`` when given) and its run, or None."""
    query = select(AnswerRecord).where(AnswerRecord.answer_id == answer_id)
    if run_id:
        query = query.where(AnswerRecord.run_id == run_id)
    query = query.order_by(AnswerRecord.saved_at.desc()).limit(1)
    with store_errors(store.url), Session(store.engine) as session:
        row = session.scalars(query).first()
        return StoredAnswer(run_info(row.run), answer_out(row)) if row is not None else None
