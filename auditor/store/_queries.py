"""The statements :class:`~auditor.store.Store` runs, built by pure functions.

Building a statement touches no connection, so :class:`~auditor.store.Store` keeps only sessions
and commits; "latest" always breaks ties on the id, so the same rows give the same answer. The run
lease's writes are conditional UPDATEs whose row count says whether they won (:mod:`._lease`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Select, Update, and_, func, or_, select, update
from sqlalchemy.orm import selectinload

from auditor.store import _convert as convert
from auditor.store._schema import (
    AnswerRecord,
    CalibrationRecord,
    ClaimRecord,
    RunRecord,
    RunTraceRecord,
    TraceRecord,
)


class JudgeLike(Protocol):
    """A judge identity: :class:`~auditor.judges.JudgeIdentity` or :class:`~auditor.results.JudgeRef`."""

    @property
    def kind(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def prompt_version(self) -> str | None: ...


def run_with_answers(run_id: str) -> Select[RunRecord]:
    """The run with its answers, their evidence, claims and verdicts loaded eagerly."""
    return (
        select(RunRecord)
        .where(RunRecord.id == run_id)
        .options(
            selectinload(RunRecord.answers).selectinload(AnswerRecord.evidence),
            selectinload(RunRecord.answers)
            .selectinload(AnswerRecord.claims)
            .selectinload(ClaimRecord.verdict),
        )
    )


def trace_key_in_run(run_id: str, trace_id: str) -> Select[str]:
    """The key of a trace with this id already linked to the run."""
    return (
        select(TraceRecord.key)
        .join(RunTraceRecord, RunTraceRecord.trace_key == TraceRecord.key)
        .where(RunTraceRecord.run_id == run_id, TraceRecord.trace_id == trace_id)
        .limit(1)
    )


def inputs_digest(run_id: str) -> Select[str]:
    """The digest of the run's input files (what identifies a trace recorded without its spans)."""
    return select(RunRecord.inputs_digest).where(RunRecord.id == run_id)


def run_exists(run_id: str) -> Select[str]:
    """The run's id, if there is such a run."""
    return select(RunRecord.id).where(RunRecord.id == run_id)


def last_answer_position(run_id: str) -> Select[int]:
    """The highest answer position in the run (None: no answer yet)."""
    return select(func.max(AnswerRecord.position)).where(AnswerRecord.run_id == run_id)


def answer_ids(run_id: str) -> Select[str]:
    """The ids of the answers saved in the run."""
    return select(AnswerRecord.answer_id).where(AnswerRecord.run_id == run_id)


def answer_usages(run_id: str) -> Select[dict[str, Any] | None]:
    """The judge usage kept with each answer of the run (None where none was kept)."""
    return select(AnswerRecord.usage).where(AnswerRecord.run_id == run_id)


def runs_with_answer_counts(limit: int | None) -> Select[RunRecord, Any]:
    """Runs, newest first, each with its number of saved answers.

    Counted per listed run (the answers' primary key), not grouped over every answer first.
    """
    saved = select(func.count()).where(AnswerRecord.run_id == RunRecord.id).scalar_subquery()
    return select(RunRecord, saved).order_by(RunRecord.started_at.desc(), RunRecord.id.desc()).limit(limit)


def resumable_runs(
    input_digests: Iterable[str], policy_sha256: str | None, judge: JudgeLike | None
) -> Select[str, str, datetime | None, float | None, str | None]:
    """Runs on the same inputs, policy and judge that may be resumed, latest first: interrupted
    ones, and running ones (abandoned if their lease ran out). Id, status, heartbeat, lease, owner."""
    return (
        select(
            RunRecord.id, RunRecord.status, RunRecord.heartbeat_at, RunRecord.lease_seconds, RunRecord.owner
        )
        .where(
            RunRecord.status.in_(("interrupted", "running")),
            RunRecord.inputs_digest == convert.inputs_digest(sorted(input_digests)),
            RunRecord.policy_sha256 == policy_sha256,
            RunRecord.judge_kind == (judge.kind if judge else None),
            RunRecord.judge_model == (judge.model if judge else None),
            RunRecord.judge_prompt_version == (judge.prompt_version if judge else None),
        )
        .order_by(RunRecord.started_at.desc(), RunRecord.id.desc())
    )


def claim_run(
    run_id: str,
    previous_owner: str | None,
    previous_status: str,
    cutoff: datetime,
    owner: str,
    lease_seconds: float,
    now: datetime,
) -> Update:
    """Hand the run to ``owner`` if it is still as read: same owner, and still interrupted, or
    still running with a heartbeat older than ``cutoff``. Of claimers racing, one matches."""
    unchanged = (
        RunRecord.status == "interrupted"
        if previous_status == "interrupted"
        else and_(
            RunRecord.status == "running",
            or_(RunRecord.heartbeat_at.is_(None), RunRecord.heartbeat_at < cutoff),
        )
    )
    return (
        update(RunRecord)
        .where(RunRecord.id == run_id, RunRecord.owner.is_not_distinct_from(previous_owner), unchanged)
        .values(
            owner=owner, heartbeat_at=now, lease_seconds=lease_seconds, status="running", finished_at=None
        )
    )


def supersede_run(run_id: str, owner: str | None, cutoff: datetime, now: datetime) -> Update:
    """Mark an abandoned run ``superseded`` if it is still as read: same owner, running, its
    heartbeat older than ``cutoff``."""
    return (
        update(RunRecord)
        .where(
            RunRecord.id == run_id,
            RunRecord.owner.is_not_distinct_from(owner),
            RunRecord.status == "running",
            or_(RunRecord.heartbeat_at.is_(None), RunRecord.heartbeat_at < cutoff),
        )
        .values(status="superseded", finished_at=now)
    )


def renew_lease(run_id: str, owner: str, now: datetime) -> Update:
    """Renew ``owner``'s lease; matches no row once the run is another's (or no longer running)."""
    return (
        update(RunRecord)
        .where(RunRecord.id == run_id, RunRecord.owner == owner, RunRecord.status == "running")
        .values(heartbeat_at=now)
    )


def interrupt_run(run_id: str, owner: str, now: datetime) -> Update:
    """Mark ``owner``'s running run interrupted; matches no row once another process holds it."""
    return (
        update(RunRecord)
        .where(RunRecord.id == run_id, RunRecord.owner == owner, RunRecord.status == "running")
        .values(status="interrupted", finished_at=now)
    )


def calibration_bodies() -> Select[dict[str, Any]]:
    """The stored body of every calibration, newest first."""
    return select(CalibrationRecord.body).order_by(
        CalibrationRecord.created_at.desc(), CalibrationRecord.id.desc()
    )


def latest_calibration_body(judge: JudgeLike) -> Select[dict[str, Any]]:
    """The stored body of the newest calibration of this judge (same kind, model, prompt version)."""
    return (
        select(CalibrationRecord.body)
        .where(
            CalibrationRecord.judge_kind == judge.kind,
            CalibrationRecord.judge_model.is_(None)
            if judge.model is None
            else CalibrationRecord.judge_model == judge.model,
            CalibrationRecord.judge_prompt_version.is_(None)
            if judge.prompt_version is None
            else CalibrationRecord.judge_prompt_version == judge.prompt_version,
        )
        .order_by(CalibrationRecord.created_at.desc(), CalibrationRecord.id.desc())
        .limit(1)
    )
