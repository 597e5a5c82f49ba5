"""The store's write path: batched cache lookups and writes, one transaction per answer at most,
the run's writer thread, and SQLite in WAL mode. On SQLite and PostgreSQL, like the store tests."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, event, func, select, text

import tests.test_store
from auditor.claims import Claim, Decomposition
from auditor.errors import LeaseLostError
from auditor.evidence import Answer, Evidence
from auditor.judges import CachingJudge, ClaimVerdict, JudgeIdentity, Label
from auditor.policy import load_policy
from auditor.run import Progress, audit
from auditor.store import Intake, SqlDecompositionCache, SqlVerdictCache, Store, StoreWriter, trace_digest
from auditor.store import _cache as cache_module
from auditor.store import _write as write_module
from auditor.store import _writer as writer_module
from auditor.store._lookup import driver_rows, driver_select
from auditor.store._migrate import json_text
from auditor.store._schema import AnswerRecord
from auditor.store._writer import _Save
from auditor.trace import ReceivedSpan
from tests.conftest import FIXTURES
from tests.test_audit_runs import INPUTS
from tests.test_store import answer, run_info

pg_url = tests.test_store.pg_url  # the PostgreSQL fixtures, shared with the store tests
fresh_pg_url = tests.test_store.fresh_pg_url
db_url = tests.test_store.db_url
store = tests.test_store.store


class Statements:
    """Counts the statements and commits an engine runs, by the table they name: those SQLAlchemy
    executes, and the cache lookups run at the driver on SQLite (:mod:`auditor.store._lookup`)."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
        self.sql: list[str] = []
        self.commits = 0
        self._lock = threading.Lock()
        event.listen(store.engine, "before_cursor_execute", self._statement)
        event.listen(store.engine, "commit", self._commit)
        if monkeypatch is not None:
            driver_rows = cache_module.driver_rows

            def counted(engine: Any, plan: Any, keys: Any) -> Any:
                self._statement(None, None, plan.sql)
                return driver_rows(engine, plan, keys)

            monkeypatch.setattr(cache_module, "driver_rows", counted)

    def _statement(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        with self._lock:
            self.sql.append(" ".join(statement.split()).lower())

    def _commit(self, _conn: Any) -> None:
        with self._lock:
            self.commits += 1

    def on(self, table: str, verb: str) -> int:
        return sum(1 for s in self.sql if s.startswith(verb) and f" {table}" in s)


class Scripted:
    """A judge that says ``supported`` to every claim it is asked about, and counts them."""

    identity = JudgeIdentity(kind="openai", model="scripted", prompt_version="p1")

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        self.asked += [c.text for c in claims]
        return [ClaimVerdict(claim_id=c.claim_id, label=Label.SUPPORTED, settled_by="llm") for c in claims]


def claims_of(answer_id: str, n: int) -> list[Claim]:
    return [
        Claim(claim_id=f"{answer_id}:c{i}", answer_id=answer_id, text=f"Claim {i}.", start=0, end=1)
        for i in range(n)
    ]


def an_answer(answer_id: str) -> Answer:
    return Answer(
        answer_id=answer_id,
        trace_id="t1",
        span_id="s1",
        text="x",
        generated_at=tests.test_store.T0,
    )


def test_a_judged_answer_costs_one_cache_lookup_and_one_cache_write(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements = Statements(store, monkeypatch)
    inner = Scripted()
    judge = CachingJudge(inner, SqlVerdictCache(store, inner.identity))
    first = asyncio.run(judge.judge(an_answer("a1"), claims_of("a1", 6), [], []))
    assert [v.label for v in first] == [Label.SUPPORTED] * 6 and len(inner.asked) == 6
    assert statements.on("verdict_cache", "select") == 1  # every claim of the answer in one query
    assert statements.on("verdict_cache", "insert") == 1 and statements.commits == 1
    again = asyncio.run(judge.judge(an_answer("a2"), claims_of("a2", 6), [], []))
    assert len(inner.asked) == 6 and {v.settled_by for v in again} == {"cache"}
    assert [v.claim_id for v in again] == [f"a2:c{i}" for i in range(6)]
    assert statements.on("verdict_cache", "select") == 2 and statements.commits == 1


def test_cache_writes_queued_to_the_writer_are_hits_before_and_after_their_commit(store: Store) -> None:
    inner = Scripted()
    with StoreWriter(store) as writer:
        judge = CachingJudge(inner, SqlVerdictCache(store, inner.identity, writer=writer))
        asyncio.run(judge.judge(an_answer("a1"), claims_of("a1", 3), [], []))
        asyncio.run(judge.judge(an_answer("a2"), claims_of("a2", 3), [], []))  # queued or committed
    assert len(inner.asked) == 3 and judge.hits == 3
    fresh = CachingJudge(inner, SqlVerdictCache(store, inner.identity))  # from the database alone
    asyncio.run(fresh.judge(an_answer("a3"), claims_of("a3", 3), [], []))
    assert len(inner.asked) == 3 and fresh.hits == 3


def test_sqlite_cache_lookups_at_the_driver_read_the_rows_sqlalchemy_reads(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'a.db'}", upgrade=True)
    verdicts = SqlVerdictCache(store, Scripted.identity)
    stored = {
        f"k{i}": ClaimVerdict(
            claim_id=f"c{i}", label=Label.SUPPORTED, rationale="caf\u00e9 \u2014 ok", settled_by="llm"
        )
        for i in range(3)
    }
    verdicts.put_many(stored)
    decompositions = SqlDecompositionCache(store)
    decompositions.put_many(
        {"d1": Decomposition(answer_id="a1", claims=tuple(claims_of("a1", 2)), extractor="llm:m")}
    )
    for cache in (verdicts, decompositions):
        statement = cache._statement()
        keys = ["k0", "k2", "missing", "d1"]
        plan = driver_select(statement, store.engine.dialect, len(keys))
        assert plan is not None
        with store.engine.connect() as conn:
            expected = sorted(tuple(row) for row in conn.execute(statement, {"keys": keys}))
        assert expected  # each cache finds its own rows
        assert sorted(tuple(row) for row in driver_rows(store.engine, plan, keys)) == expected
    assert verdicts.get_many(["k0", "k1", "nope"]) == {"k0": stored["k0"], "k1": stored["k1"]}
    store.close()


def test_the_writer_saves_answers_in_at_most_one_transaction_each(store: Store) -> None:
    run_id = store.begin_run(run_info(), owner="me", lease_seconds=60)
    statements = Statements(store)

    async def save_all() -> None:
        with StoreWriter(store) as writer:
            await asyncio.gather(
                *(writer.save_answer(run_id, answer(f"a{i}"), owner="me") for i in range(20))
            )

    asyncio.run(save_all())
    assert statements.commits <= 20  # batched when answers arrive together
    assert statements.on("answers", "insert") == statements.on("evidence", "insert") == statements.commits
    loaded = store.load_run(run_id)
    assert [a.answer_id for a in loaded.answers] == [f"a{i}" for i in range(20)]  # in the order handed over
    assert loaded.answers[3] == answer("a3")


def test_a_failed_write_fails_its_save_every_later_one_and_the_close(store: Store) -> None:
    run_id = store.begin_run(run_info(), owner="me", lease_seconds=60)
    writer = StoreWriter(store).start()

    async def saves() -> list[BaseException | None]:
        await writer.save_answer(run_id, answer("a1"), owner="me")
        outcomes: list[BaseException | None] = []
        for owner in ("someone else", "me"):
            try:
                await writer.save_answer(run_id, answer(f"a-{owner}"), owner=owner)
                outcomes.append(None)
            except LeaseLostError as err:
                outcomes.append(err)
        return outcomes

    lost, after = asyncio.run(saves())
    assert isinstance(lost, LeaseLostError) and after is lost  # nothing is written past a failure
    with pytest.raises(LeaseLostError):
        writer.close()
    assert [a.answer_id for a in store.load_run(run_id).answers] == ["a1"]


def test_a_file_store_runs_in_wal_mode_with_a_patient_lock_wait(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'w.db'}") as opened, opened.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    with Store(f"sqlite:///{tmp_path / 'w.db'}?timeout=5") as opened, opened.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5_000


@pytest.fixture
def slow_writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each write of answers takes a while: a report made before the commit would run ahead of it."""
    original = Store.write_answers

    def slow(self: Store, *args: Any, **kwargs: Any) -> None:
        threading.Event().wait(0.05)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Store, "write_answers", slow)
    yield


@pytest.mark.slow
def test_progress_never_counts_an_answer_a_kill_would_lose(db_url: str, slow_writes: None) -> None:
    Store(db_url, upgrade=True).close()
    reader = create_engine(db_url)  # another connection: sees only what is committed
    seen: list[tuple[int, int]] = []

    def committed(progress: Progress) -> None:
        with reader.connect() as conn:
            rows = int(conn.scalar(select(func.count()).select_from(AnswerRecord)) or 0)
        seen.append((progress.answers_done, rows))

    try:
        result = audit(INPUTS, policy=load_policy("strict"), db_url=db_url, on_progress=committed)
    finally:
        reader.dispose()
    assert len(seen) == len(result.answers) == 13
    assert all(rows >= done for done, rows in seen), seen  # reported as saved = committed


def test_recording_a_run_s_traces_is_one_transaction(store: Store) -> None:
    from auditor.trace import read_traces

    traces = read_traces(sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))).traces
    run_id = store.begin_run(run_info())
    statements = Statements(store)
    store.record_traces(run_id, traces)
    assert statements.commits == 1 and len(traces) > 3
    with store.engine.connect() as conn:
        linked = conn.execute(text("select count(*) from run_traces")).scalar()
    assert linked == len({(t.trace_id, trace_digest(t)) for t in traces})


def test_the_writer_records_a_run_s_traces_in_the_transaction_of_its_first_answers(store: Store) -> None:
    from auditor.trace import read_traces

    traces = read_traces(sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))).traces
    digests = [trace_digest(t) for t in traces]
    run_id = store.begin_run(run_info(), owner="me", lease_seconds=60)
    statements = Statements(store)

    async def save() -> None:
        with StoreWriter(store) as writer:
            recorded = writer.record_traces(run_id, traces, digests)
            first = answer("a1").model_copy(update={"trace_id": traces[0].trace_id})
            await writer.save_answer(run_id, first, digests[0], owner="me", last=True)
            assert recorded.done() and recorded.exception() is None
            with pytest.raises(ValueError, match="digests for"):
                writer.record_traces(run_id, traces, digests[:-1])

    asyncio.run(save())
    assert statements.commits == 1
    assert [t.model_dump() for t in store.load_traces(run_id)] == [t.model_dump() for t in traces]


def test_an_answer_s_rows_name_every_column_of_their_tables() -> None:
    # The rows are plain dicts (no ORM records): a column added to a table must be written too.
    from datetime import UTC, datetime

    from auditor.store._convert import answer_record
    from auditor.store._schema import ClaimRecord, EvidenceRecord, VerdictRecord

    rows = answer_record("run-1", answer("a1"), 0, "trace-key", datetime.now(UTC))
    assert rows.claims and rows.verdicts and rows.evidence
    for model, values in (
        (AnswerRecord, [rows.answer]),
        (EvidenceRecord, rows.evidence),
        (ClaimRecord, rows.claims),
        (VerdictRecord, rows.verdicts),
    ):
        columns = {c.key for c in model.__table__.columns}
        assert all(set(v) == columns for v in values), model.__name__
    assert {(v["run_id"], v["answer_id"]) for v in rows.claims} == {("run-1", "a1")}


def record_lingers(writer: StoreWriter, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The writer's lingers, in order: True for one cut short (a job, a flush or a close woke it)."""
    woken: list[bool] = []
    original = writer._hurry.wait
    monkeypatch.setattr(writer._hurry, "wait", lambda timeout: woken.append(original(timeout)) or True)
    return woken


def test_a_whole_batch_is_committed_at_once_without_lingering(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "LINGER", 60.0)  # a wait that ran out would fail the test below
    monkeypatch.setattr(writer_module, "BATCH", 8)
    run_id = store.begin_run(run_info(), owner="me", lease_seconds=60)
    statements = Statements(store)
    woken: list[bool] = []

    async def save_all() -> None:
        nonlocal woken
        with StoreWriter(store) as writer:
            woken = record_lingers(writer, monkeypatch)
            await asyncio.gather(*(writer.save_answer(run_id, answer(f"a{i}"), owner="me") for i in range(8)))

    asyncio.run(save_all())
    assert all(woken), woken  # the eighth job queued woke the thread: it never waited its linger out
    assert statements.commits == 1 and statements.on("answers", "insert") == 1
    assert [a.answer_id for a in store.load_run(run_id).answers] == [f"a{i}" for i in range(8)]


def test_closing_the_writer_commits_what_is_queued_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "LINGER", 60.0)
    run_id = store.begin_run(run_info(), owner="me", lease_seconds=60)
    writer = StoreWriter(store)
    woken = record_lingers(writer, monkeypatch)
    writer.start()
    saved = writer.submit(_Save(run_id, "me", answer("a1"), None))
    writer.close()
    assert saved.done() and saved.exception() is None
    assert woken in ([], [True])  # either it had not begun to linger, or the close cut it short
    assert [a.answer_id for a in store.load_run(run_id).answers] == ["a1"]


def test_the_last_answer_of_a_run_is_committed_without_lingering(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "LINGER", 60.0)  # a wait that ran out would fail the test below
    run_id = store.begin_run(run_info(), owner="me", lease_seconds=60)
    waits: list[bool] = []

    async def save_two() -> None:
        nonlocal waits
        with StoreWriter(store) as writer:
            waits = record_lingers(writer, monkeypatch)
            first = asyncio.ensure_future(writer.save_answer(run_id, answer("a1"), owner="me"))
            await asyncio.sleep(0)  # handed over; the thread lingers for more
            await asyncio.wait_for(writer.save_answer(run_id, answer("a2"), owner="me", last=True), 30)
            await first

    asyncio.run(save_two())
    assert waits in ([], [True]), waits  # a linger, if begun, was cut short by the last answer
    assert [a.answer_id for a in store.load_run(run_id).answers] == ["a1", "a2"]


def test_a_run_hands_its_last_answer_over_as_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_HOME", str(tmp_path))
    monkeypatch.setattr(writer_module, "LINGER", 60.0)  # a run still lingering at its end would take a minute
    flushed: list[int] = []
    original = StoreWriter.flush
    monkeypatch.setattr(StoreWriter, "flush", lambda self: flushed.append(self._submitted) or original(self))
    result = audit(INPUTS)
    assert len(flushed) == 1 and flushed[0] >= len(result.answers)
    assert Store().load_run(result.run.id).answers


def test_sqlite_rows_through_the_driver_are_the_rows_sqlalchemy_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def saved_rows(name: str) -> dict[str, list[tuple[Any, ...]]]:
        with Store(f"sqlite:///{tmp_path / name}") as opened:
            run_id = opened.begin_run(run_info(run_id="r1"), owner="me", lease_seconds=60)
            for i, long in ((1, False), (2, True)):
                opened.save_answer(run_id, answer(f"a{i}", long=long), owner="me")
            cache = SqlVerdictCache(opened, Scripted.identity)
            first = ClaimVerdict(claim_id="c1", label=Label.SUPPORTED, rationale="first", settled_by="llm")
            cache.put_many({"k1": first, "k2": first.model_copy(update={"label": Label.ABSENT})})
            cache.put_many({"k1": first.model_copy(update={"rationale": "overwritten"})})  # the upsert
            spans = [
                ReceivedSpan("a1" * 16, f"{n:016x}", None, n or None, '{"resourceSpans":[]}')
                for n in range(3)
            ]
            Intake(opened).receive(spans)
            Intake(opened).receive(spans[1:])  # rows that are there already are left alone
            with opened.engine.connect() as conn:
                return {
                    table: [
                        tuple(
                            v
                            for k, v in row._mapping.items()
                            if k not in ("saved_at", "created_at", "received_at")
                        )
                        for row in conn.exec_driver_sql(f"SELECT * FROM {table} ORDER BY rowid")
                    ]
                    for table in (
                        "answers",
                        "evidence",
                        "claims",
                        "verdicts",
                        "verdict_cache",
                        "received_spans",
                    )
                }

    direct = saved_rows("direct.db")
    monkeypatch.setattr(
        write_module, "_driver_insert", lambda table, dialect, upsert=False, missing=False: None
    )  # SQLAlchemy's executemany
    through_sqlalchemy = saved_rows("orm.db")
    assert direct == through_sqlalchemy
    assert all(direct[table] for table in direct)  # every table holds rows: the comparison compares something


@pytest.mark.parametrize(
    "value",
    [
        [],
        (),
        {},
        None,
        [1, "two", None],
        {"a": [], "é": "✅ 退款"},
        {"nested": {"x": [{}]}},
        "text",
        0.1,
        True,
    ],
)
def test_json_columns_hold_json_dumps_text(value: Any) -> None:
    assert json_text(value) == json.dumps(value)


def test_postgresql_rows_inserted_many_to_a_statement_are_the_rows_sqlalchemy_writes(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More spans than one statement holds, a NUL PostgreSQL text cannot keep, and spans sent again.
    spans = [
        ReceivedSpan("b2" * 16, f"{n:016x}", None if n == 0 else f"{0:016x}", n or None, f'{{"n":"{n}\x00"}}')
        for n in range(write_module.VALUES_ROWS * 2 + 7)
    ]

    def received_rows() -> list[tuple[Any, ...]]:
        with tests.test_store.pg_schema(pg_url) as url, Store(url, upgrade=True) as opened:
            Intake(opened).receive(spans[:5])
            Intake(opened).receive(spans)  # the first five are there already: left as they are
            with opened.engine.connect() as conn:
                return [
                    tuple(row)
                    for row in conn.exec_driver_sql(
                        "SELECT trace_id, span_id, parent_id, end_ns, record FROM received_spans"
                        " ORDER BY span_id"
                    )
                ]

    many = received_rows()
    monkeypatch.setattr(write_module, "_insert_values_missing", lambda *_: False)  # SQLAlchemy's
    through_sqlalchemy = received_rows()
    assert many == through_sqlalchemy
    assert len(many) == len(spans) and many[1][4] == '{"n":"1\ufffd"}'
