"""The lines of ``auditor runs``: one :class:`RunRow` per stored run, built from its row alone.

A run's headline figures are read from its stored summary; a summary without them (a run still
going, or saved by another version) gives None, never an error. A ``running`` run whose lease has
run out, or whose owner's process on this host is gone, is listed as ``interrupted``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from auditor.results import InputRef, JudgeRef, PolicyRef
from auditor.settings import run_lease
from auditor.store import _convert as convert
from auditor.store._lease import abandoned
from auditor.store._schema import RunRecord


class RunRow(BaseModel):
    """One line of ``auditor runs``: when, on what, under which policy and judge, with what result."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    auditor_version: str
    inputs: list[InputRef]
    policy: PolicyRef | None
    judge: JudgeRef | None
    answers_saved: int
    groundedness_rate: float | None = None
    judged_claims: int | None = None
    answers_with_unsupported_claim: float | None = None
    answers_with_claims: int | None = None  # decided answers: undecided ones are out of that rate
    undecided_answers: int | None = None  # no claim decided unsupported, one or more unjudged
    reaudit_of: str | None = None  # the run this one re-audited (``auditor reaudit``)
    sampling: dict[str, Any] | None = None  # a live server's sample and filter (``runs.sampling``)
    cap: dict[str, Any] | None = None  # set when the spending cap had the run judged offline


def run_row(run: RunRecord, answers_saved: int | None) -> RunRow:
    """The listing line of ``run``; ``answers_saved`` None means none saved."""
    rate, judged = _headline(run.summary, "groundedness_rate")
    unsupported, with_claims = _headline(run.summary, "answers_with_unsupported_claim")
    info = convert.run_info(run)
    # A run left "running" by a process that is gone (killed, or its machine down) is shown as what
    # it is: interrupted, to be resumed by the next audit on the same inputs, policy and judge.
    gone = abandoned(
        run.status, run.heartbeat_at, run.lease_seconds or run_lease(), datetime.now(UTC), run.owner
    )
    return RunRow(
        id=run.id,
        status="interrupted" if gone else run.status,
        started_at=run.started_at,
        finished_at=run.finished_at,
        auditor_version=run.auditor_version,
        inputs=info.inputs,
        policy=info.policy,
        judge=info.judge,
        answers_saved=answers_saved or 0,
        groundedness_rate=rate,
        judged_claims=judged,
        answers_with_unsupported_claim=unsupported,
        answers_with_claims=with_claims,
        undecided_answers=_count(run.summary, "undecided_answers"),
        reaudit_of=run.reaudit_of,
        sampling=run.sampling,
        cap=run.cap,
    )


def _headline(summary: dict[str, Any] | None, name: str) -> tuple[float | None, int | None]:
    figure = (summary or {}).get(name)
    if not isinstance(figure, dict):
        return None, None
    value, denominator = figure.get("value"), figure.get("denominator")
    return (
        float(value) if isinstance(value, int | float) else None,
        int(denominator) if isinstance(denominator, int) else None,
    )


def _count(summary: dict[str, Any] | None, name: str) -> int | None:
    value = (summary or {}).get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
