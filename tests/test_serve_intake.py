"""The server's intake in the store, on SQLite and PostgreSQL: spans stored once, the readiness rule,
one owner per trace under a lease, and a generation per batch of new spans."""

from __future__ import annotations

import re
import time

import pytest

from auditor.store import Claim, Intake, Store
from auditor.trace import ReceivedSpan
from tests.test_store import db_url, fresh_pg_url, pg_url, store  # noqa: F401  (the shared store fixtures)

T = "ab" * 16


def span(span_id: str, parent: str | None = None, end: int | None = 2, trace_id: str = T) -> ReceivedSpan:
    return ReceivedSpan(trace_id, span_id, parent, end, f'{{"span": "{span_id}"}}')


def claim(
    intake: Intake, owner: str, quiet: float = 0.0, root_wait: float = 600.0, lease: float = 30.0
) -> Claim | None:
    return intake.claim(owner, quiet=quiet, root_wait=root_wait, lease=lease)


def test_spans_are_stored_once_and_a_trace_waits_for_its_root(store: Store) -> None:  # noqa: F811
    intake = Intake(store)
    assert intake.receive([span("01" * 8, parent="02" * 8)]) == 1
    assert intake.receive([span("01" * 8, parent="02" * 8)]) == 0  # re-sent: nothing new
    assert intake.pending() == 1
    assert claim(intake, "a") is None  # no ended root yet
    assert claim(intake, "a", root_wait=0.0) is not None  # unless it has been quiet for root_wait


def test_a_ready_trace_goes_to_one_owner_and_a_late_span_makes_a_new_generation(store: Store) -> None:  # noqa: F811
    intake = Intake(store)
    intake.receive([span("02" * 8), span("01" * 8, parent="02" * 8)])
    assert claim(intake, "a", quiet=60.0) is None  # the quiet window has not passed
    held = claim(intake, "a")
    assert held is not None and held.generation == 1 and len(held.records) == 2
    assert claim(intake, "b") is None  # held by a
    assert intake.heartbeat(T, "a") and not intake.heartbeat(T, "b")
    assert not intake.finish(held, "b", "run-x")  # only the owner records the pass
    assert intake.finish(held, "a", "run-1")
    assert intake.pending() == 0 and claim(intake, "b") is None

    intake.receive([span("03" * 8, parent="02" * 8)])
    again = claim(intake, "b")
    assert again is not None and again.generation == 2 and len(again.records) == 3
    assert intake.finish(again, "b", "run-2")
    assert [(a.generation, a.run_id, a.spans) for a in intake.audits(T)] == [(1, "run-1", 2), (2, "run-2", 3)]


def test_a_worker_that_stops_renewing_loses_the_trace_to_the_next(store: Store) -> None:  # noqa: F811
    intake = Intake(store)
    intake.receive([span("02" * 8)])
    assert claim(intake, "dead", lease=0.2) is not None
    assert claim(intake, "next", lease=0.2) is None
    time.sleep(0.3)
    taken = claim(intake, "next", lease=0.2)
    assert taken is not None and intake.finish(taken, "next", "run-1")
    assert [a.run_id for a in intake.audits()] == ["run-1"]


@pytest.mark.parametrize(
    ("variable", "dialect", "readers"),
    [(None, "sqlite", 1), (None, "postgresql", 2), ("3", "sqlite", 3), ("1", "postgresql", 1)],
)
def test_the_readers_are_the_setting_else_chosen_by_the_store(
    monkeypatch: pytest.MonkeyPatch, variable: str | None, dialect: str, readers: int
) -> None:
    from auditor.serve._config import readers_for, serve_config

    if variable is None:
        monkeypatch.delenv("AUDITOR_SERVE_READERS", raising=False)
    else:
        monkeypatch.setenv("AUDITOR_SERVE_READERS", variable)
    assert readers_for(serve_config(), dialect) == readers


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_a_reader_count_that_is_not_a_whole_number_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    from auditor.errors import UsageError
    from auditor.serve._config import serve_config

    monkeypatch.setenv("AUDITOR_SERVE_READERS", value)
    with pytest.raises(UsageError, match=f"AUDITOR_SERVE_READERS='{re.escape(value)}' is not a whole number"):
        serve_config()
