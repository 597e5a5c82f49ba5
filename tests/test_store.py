"""The SQL store, on SQLite and on PostgreSQL: the same tests on both.

PostgreSQL: ``AUDITOR_TEST_PG_URL`` (default: the local server on 127.0.0.1:5432, database
``test``). Each test gets a fresh schema (selected through ``search_path``) that is dropped
afterwards, so runs never collide. Without a server the PostgreSQL variants skip locally; with
``CI=true`` an unreachable server fails them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner
from sqlalchemy import create_engine, func, inspect, make_url, select, text, update

from auditor.claims import Claim, Decomposition, ScreenReason
from auditor.cli.db import db_group
from auditor.evidence import Answer, EvidenceKind
from auditor.judges import Citation, ClaimVerdict, FusedResult, JudgeIdentity, Label
from auditor.judges.cache._cache import cache_key, decomposition_key, fused_key
from auditor.results import (
    AnswerOut,
    AuditResult,
    CitationOut,
    ClaimOut,
    EvidenceOut,
    InputRef,
    JudgeRef,
    PolicyRef,
    ProblemOut,
    RunInfo,
)
from auditor.run import audit
from auditor.store import (
    LeaseLostError,
    RunLease,
    SqlDecompositionCache,
    SqlFusedCache,
    SqlVerdictCache,
    Store,
    StoreError,
    trace_digest,
)
from auditor.store._migrate import head_revision
from auditor.store._schema import (
    AnswerRecord,
    Base,
    ClaimRecord,
    EvidenceRecord,
    RunRecord,
    TraceRecord,
    VerdictRecord,
)
from tests.conftest import FIXTURES

PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


# -- databases -----------------------------------------------------------------------------------


def require_postgres(url: str) -> None:
    """Skip (locally) or fail (``CI=true``) when no PostgreSQL server answers at ``url``."""
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(text("select 1"))
    except Exception as err:
        message = f"PostgreSQL not reachable at {make_url(url).render_as_string(hide_password=True)}: {err}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: the PostgreSQL store tests must run)")
        pytest.skip(message)
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def pg_url() -> str:
    url = os.environ.get("AUDITOR_TEST_PG_URL", PG_DEFAULT)
    require_postgres(url)
    return url


@contextmanager
def pg_schema(base_url: str) -> Iterator[str]:
    """A URL whose connections see only a new, empty schema of their own, dropped afterwards."""
    schema = f"auditor_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base_url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(base_url).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def fresh_pg_url(pg_url: str) -> Iterator[str]:
    """A URL whose connections see only a new, empty schema of their own."""
    with pg_schema(pg_url) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("fresh_pg_url"))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url, upgrade=True) as opened:
        yield opened


def count(store: Store, model: type[Base]) -> int:
    with store.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(model)) or 0)


# -- data ----------------------------------------------------------------------------------------


def evidence(
    i: int, admitted: bool | None = True, text_: str = "Refund R-77 of $120.00 was approved."
) -> EvidenceOut:
    return EvidenceOut(
        evidence_id=f"ev{i}",
        kind=EvidenceKind.TOOL_RESULT,
        name="get_refund",
        text=text_,
        metadata={"order_id": 10042, "tags": ["a", "ü"], "nested": {"x": None, "y": 1.5}},
        document_id=None,
        url="https://example.com/é",
        trace_id="t1",
        span_id=f"s{i}",
        available_at=T0 + timedelta(seconds=i),
        hop_path=["search_orders(customer=ACME)", "get_refund(10042)"],
        error=False,
        current_question=False,
        source_class="crm" if admitted else "user_message",
        admitted=admitted,
        reason="rule crm admits tool get_refund" if admitted else "user messages are excluded",
    )


def claims_for(answer_text: str) -> list[ClaimOut]:
    first = answer_text.index(".") + 1
    return [
        ClaimOut(
            claim_id="c1",
            text=answer_text[:first],
            start=0,
            end=first,
            screened=False,
            screen_reason=None,
            verdict="supported",
            citations=[CitationOut(evidence_id="ev0", quote="$120.00 was approved")],
            rationale="quoted",
            settled_by="offline",
        ),
        ClaimOut(
            claim_id="c2",
            text=answer_text[first:].strip(),
            start=first + 1,
            end=len(answer_text),
            screened=False,
            screen_reason=None,
            verdict="absent",
            inadmissible_support=["ev1"],
            judge_errors=["quote not found in ev0: 'x'"],
            common_knowledge=False,
        ),
        ClaimOut(
            claim_id="c3",
            text="Happy to help!",
            start=0,
            end=0,
            screened=True,
            screen_reason="pleasantry",
            verdict=None,
        ),
        ClaimOut(
            claim_id="c4",
            text="Unjudgeable.",
            start=0,
            end=0,
            screened=False,
            screen_reason=None,
            verdict="unjudged",
            unjudged_reason="timeout",
        ),
    ]


def answer(answer_id: str, trace_id: str = "t1", with_claims: bool = True, long: bool = False) -> AnswerOut:
    body = "Le remboursement de 120,00 $ a été approuvé ✅. 退款已批准，订单 10042。"  # noqa: RUF001
    if long:
        body += " " + ("Long text with émoji 🧾 and more. " * 4000)
    return AnswerOut(
        answer_id=answer_id,
        trace_id=trace_id,
        span_id=f"span-{answer_id}",
        conversation_id="conv-1",
        question="Was my refund approved? «R-77»",
        question_type="status",
        text=body,
        generated_at=T0.astimezone(timezone(timedelta(hours=2))),
        evidence=[evidence(0), evidence(1, admitted=False, text_="I was told it's approved — user")],
        claims=claims_for(body) if with_claims else None,
        refusal=False if with_claims else None,
        groundedness=0.5 if with_claims else None,
        contradicted=0 if with_claims else None,
        unjudged=1 if with_claims else None,
        grounded=False if with_claims else None,
    )


def run_info(
    run_id: str | None = None,
    started: datetime = T0,
    inputs: tuple[str, ...] = ("a" * 64,),
    judge: JudgeRef | None = None,
    policy_sha: str = "f" * 64,
) -> RunInfo:
    return RunInfo(
        id=run_id or uuid.uuid4().hex,
        started_at=started,
        policy=PolicyRef(name="strict", version="2", sha256=policy_sha),
        judge=judge or JudgeRef(kind="openai", model="gpt-4o-mini", prompt_version="judge-3"),
        inputs=[
            InputRef(path=f"in{i}.jsonl", sha256=d, format="otlp-json", traces=1)
            for i, d in enumerate(inputs)
        ],
        problems=[
            ProblemOut(
                file="in0.jsonl",
                line=3,
                severity="warning",
                reason="span without end",
                trace_id="t1",
                span_id="s9",
            )
        ],
    )


def result(answers: list[AnswerOut], run: RunInfo | None = None) -> AuditResult:
    return AuditResult(
        run=run or run_info(),
        answers=answers,
        summary={
            "groundedness_rate": {"value": 0.5, "numerator": 1, "denominator": 2},
            "answers_with_unsupported_claim": {"value": 1.0, "numerator": 1, "denominator": 1},
            "answers": len(answers),
            "note": "ünïcode",
        },
    )


# -- schema and migrations ---------------------------------------------------------------------------


def test_migrations_create_the_schema_matching_the_models(db_url: str) -> None:
    with Store(db_url, upgrade=True) as store:
        assert store.revision() == head_revision()
        tables = set(inspect(store.engine).get_table_names())
        assert {
            "runs",
            "traces",
            "run_traces",
            "answers",
            "evidence",
            "claims",
            "verdicts",
            "verdict_cache",
            "alembic_version",
        } <= tables
        dialect = store.engine.dialect.name

        def made_here(obj: object, name: str | None, kind: str, reflected: bool, compared: object) -> bool:
            # An index the models make on one store only (``Index.ddl_if``): alembic ignores that.
            only = getattr(obj, "_ddl_if", None)
            return only is None or only.dialect in (None, dialect)

        with store.engine.connect() as conn:
            diff = compare_metadata(
                MigrationContext.configure(conn, opts={"compare_type": True, "include_object": made_here}),
                Base.metadata,
            )
        assert diff == []
        if dialect == "postgresql":  # the run_id prefix range's operator class (migration 0022)
            indexes = {i["name"]: i for i in inspect(store.engine).get_indexes("answers")}
            assert indexes["ix_answers_run_id_pattern"]["dialect_options"]["postgresql_ops"] == {
                "run_id": "text_pattern_ops"
            }


def test_sqlite_is_migrated_on_open(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'sub' / 'auto.db'}") as store:
        assert store.revision() == head_revision()


def test_unmigrated_postgres_says_how_to_upgrade(fresh_pg_url: str) -> None:
    with pytest.raises(StoreError, match="auditor db upgrade"):
        Store(fresh_pg_url)
    with Store(fresh_pg_url, upgrade=True) as store:
        assert store.revision() == head_revision()
    with Store(fresh_pg_url) as store:  # now at head: opens without upgrading
        assert store.list_runs() == []


def test_default_url_is_in_the_app_directory_and_env_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDITOR_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AUDITOR_DB_URL", raising=False)
    assert Store.default_url() == f"sqlite:///{tmp_path / 'home' / 'auditor.db'}"
    with Store() as store:
        assert store.revision() == head_revision()
    assert (tmp_path / "home" / "auditor.db").is_file()
    monkeypatch.setenv("AUDITOR_DB_URL", "sqlite:///elsewhere.db")
    assert Store.default_url() == "sqlite:///elsewhere.db"


def test_db_upgrade_command_prints_the_revision(db_url: str) -> None:
    runner = CliRunner()
    before = runner.invoke(db_group, ["current", "--db", db_url])
    assert before.exit_code == 0 and "none" in before.output
    upgraded = runner.invoke(db_group, ["upgrade", "--db", db_url])
    assert upgraded.exit_code == 0, upgraded.output
    assert head_revision() in upgraded.output
    after = runner.invoke(db_group, ["current", "--db", db_url])
    assert after.output.strip() == f"{head_revision()} (head)"


def test_ci_makes_an_unreachable_postgres_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    dead = "postgresql+psycopg://postgres@127.0.0.1:1/test"
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_postgres(dead)
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        require_postgres(dead)


# -- round trip ---------------------------------------------------------------------------------------


def test_round_trip_rebuilds_the_result_exactly(store: Store) -> None:
    original = result([answer("a1"), answer("a2", trace_id="t2", long=True), answer("a3", with_claims=False)])
    run_id = store.save_result(original, policy_text='name = "strict"  # ✓\n')
    loaded = store.load_run(run_id)
    assert loaded == original
    # Times are stored in UTC: the same instant comes back, with a UTC offset.
    assert loaded.answers[0].generated_at.utcoffset() == timedelta(0)
    assert original.answers[0].generated_at.utcoffset() == timedelta(hours=2)
    assert "claims" not in loaded.to_json().split('"answer_id": "a3"')[1]
    assert store.policy_text(run_id) == 'name = "strict"  # ✓\n'
    assert store.run_status(run_id) == "finished"


def test_the_json_document_is_the_result_indented_with_no_claims_key_for_an_unclaimed_answer() -> None:
    import json

    original = result([answer("a1"), answer("a3", with_claims=False)])
    text = original.to_json()
    expected = original.model_dump(mode="json")
    del expected["answers"][1]["claims"]
    assert json.loads(text) == expected
    assert text == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"  # the layout json.dumps gives


def test_round_trip_of_a_real_offline_audit(store: Store) -> None:
    original = audit([FIXTURES / "multi_hop" / "runtree.json", FIXTURES / "multi_turn" / "runtree.json"])
    assert any(c.verdict for a in original.answers for c in a.claims or [])
    run_id = store.save_result(original)
    loaded = store.load_run(run_id)
    assert loaded == original
    assert loaded.to_json() == original.to_json()  # the very same document, byte for byte


def test_round_trip_of_an_evidence_only_run(store: Store) -> None:
    original = AuditResult(
        run=run_info().model_copy(update={"judge": None, "policy": None}),
        answers=[answer("a1", with_claims=False)],
    )
    assert store.load_run(store.save_result(original)) == original


def test_unknown_run_is_a_store_error(store: Store) -> None:
    with pytest.raises(StoreError, match="auditor runs"):
        store.load_run("nope")
    with pytest.raises(StoreError):
        store.save_answer("nope", answer("a1"))


# -- idempotency ---------------------------------------------------------------------------------------


def test_saving_the_same_answer_again_replaces_it(store: Store) -> None:
    run_id = store.begin_run(run_info())
    store.save_answer(run_id, answer("a1"))
    store.save_answer(run_id, answer("a2"))
    changed = answer("a1").model_copy(update={"question": "changed?"})
    store.save_answer(run_id, changed)
    store.save_answer(run_id, changed)
    assert count(store, AnswerRecord) == 2
    assert count(store, EvidenceRecord) == 4
    assert count(store, ClaimRecord) == 8
    assert count(store, VerdictRecord) == 6  # the screened claim carries no verdict
    loaded = store.load_run(run_id)
    assert [a.answer_id for a in loaded.answers] == ["a1", "a2"]  # keeps its place
    assert loaded.answers[0].question == "changed?"


def test_reingesting_a_trace_does_not_duplicate_it(store: Store) -> None:
    from auditor.trace import read_traces

    traces = read_traces([FIXTURES / "multi_hop" / "runtree.json"]).traces
    first, second = store.begin_run(run_info()), store.begin_run(run_info())
    store.record_traces(first, traces)
    store.record_traces(second, traces)
    store.record_traces(second, traces)
    assert count(store, TraceRecord) == len(traces)
    # Answers of a run that did not record its traces are keyed by the run's inputs: still one row.
    third, fourth = store.begin_run(run_info()), store.begin_run(run_info())
    store.save_answer(third, answer("a1", trace_id="tx"))
    store.save_answer(fourth, answer("a1", trace_id="tx"))
    store.save_answer(fourth, answer("a2", trace_id="tx"))
    assert count(store, TraceRecord) == len(traces) + 1
    # An answer of a recorded trace links to that trace's row.
    store.save_answer(first, answer("a9", trace_id=traces[0].trace_id))
    with store.engine.connect() as conn:
        key = conn.scalar(select(AnswerRecord.trace_key).where(AnswerRecord.answer_id == "a9"))
        digest = conn.scalar(select(TraceRecord.digest).where(TraceRecord.key == key))
    assert digest == trace_digest(traces[0])


# -- interruption and resume -------------------------------------------------------------------------


def test_an_interrupted_run_can_be_found_and_resumed(store: Store) -> None:
    judge = JudgeRef(kind="openai", model="gpt-4o-mini", prompt_version="judge-3")
    older = store.begin_run(run_info(started=T0, inputs=("b" * 64, "a" * 64), judge=judge))
    store.mark_interrupted(older)
    run_id = store.begin_run(
        run_info(started=T0 + timedelta(minutes=5), inputs=("a" * 64, "b" * 64), judge=judge)
    )
    store.save_answer(run_id, answer("a1"))
    store.save_answer(run_id, answer("a2"))
    store.mark_interrupted(run_id)  # Ctrl-C before a3
    assert store.run_status(run_id) == "interrupted"

    identity = JudgeIdentity(kind="openai", model="gpt-4o-mini", prompt_version="judge-3")
    assert store.find_resumable(["b" * 64, "a" * 64], "f" * 64, identity) == run_id  # latest, any input order
    assert store.find_resumable(["a" * 64], "f" * 64, identity) is None  # other inputs
    assert store.find_resumable(["a" * 64, "b" * 64], "e" * 64, identity) is None  # other policy
    other_judge = JudgeIdentity(kind="openai", model="gpt-4o", prompt_version="judge-3")
    assert store.find_resumable(["a" * 64, "b" * 64], "f" * 64, other_judge) is None
    assert store.find_resumable(["a" * 64, "b" * 64], "f" * 64, None) is None

    done = store.finished_answer_ids(run_id)
    assert done == {"a1", "a2"}
    assert store.claim_run(run_id, "host:1:resumer")
    assert store.run_status(run_id) == "running"
    for item in [answer("a1"), answer("a2"), answer("a3")]:
        if item.answer_id not in done:
            store.save_answer(run_id, item, owner="host:1:resumer")
    store.finish_run(
        run_id, {"answers": 3}, usage={"input_tokens": 1200, "output_tokens": 80}, owner="host:1:resumer"
    )
    loaded = store.load_run(run_id)
    assert [a.answer_id for a in loaded.answers] == ["a1", "a2", "a3"]
    assert loaded.summary == {"answers": 3}
    assert store.find_resumable(["a" * 64, "b" * 64], "f" * 64, identity) == older
    with pytest.raises(ValueError, match="status"):
        store.finish_run(run_id, {}, status="running")


# -- the run lease ---------------------------------------------------------------------------------

MINI = JudgeIdentity(kind="openai", model="gpt-4o-mini", prompt_version="judge-3")


def age_heartbeat(store: Store, run_id: str, seconds: float) -> None:
    """Make the run's last heartbeat ``seconds`` old: what its owner's death looks like later."""
    with store.engine.begin() as conn:
        conn.execute(
            update(RunRecord)
            .where(RunRecord.id == run_id)
            .values(heartbeat_at=datetime.now(UTC) - timedelta(seconds=seconds))
        )


def test_a_live_run_is_never_claimed_and_an_abandoned_one_by_one_process(store: Store) -> None:
    run_id = store.begin_run(run_info(), owner="host:1:a", lease_seconds=30)
    assert store.find_resumable(["a" * 64], "f" * 64, MINI) is None  # its owner is alive
    assert not store.claim_run(run_id, "host:2:b", lease_seconds=30)
    assert store.heartbeat(run_id, "host:1:a") and not store.heartbeat(run_id, "host:2:b")
    age_heartbeat(store, run_id, 10)
    # The row's own lease (30 s) decides, not a claimer's shorter one.
    assert not store.claim_run(run_id, "host:2:b", lease_seconds=1)
    store.save_answer(run_id, answer("a1"), owner="host:1:a")  # renews the lease too
    age_heartbeat(store, run_id, 31)  # host 1 was killed half a minute ago
    assert store.find_resumable(["a" * 64], "f" * 64, MINI, lease_seconds=30) == run_id
    assert store.claim_run(run_id, "host:2:b", lease_seconds=30)
    assert not store.claim_run(run_id, "host:3:c", lease_seconds=30)  # b holds it now
    # The old owner, back from the dead, may not write beside the new one.
    with pytest.raises(LeaseLostError, match="taken over"):
        store.save_answer(run_id, answer("a2"), owner="host:1:a")
    with pytest.raises(LeaseLostError):
        store.finish_run(run_id, {}, owner="host:1:a")
    store.mark_interrupted(run_id, "host:1:a")
    assert store.run_status(run_id) == "running" and not store.heartbeat(run_id, "host:1:a")
    store.save_answer(run_id, answer("a2"), owner="host:2:b")
    store.finish_run(run_id, {"answers": 2}, owner="host:2:b")
    assert store.finished_answer_ids(run_id) == {"a1", "a2"} and store.run_status(run_id) == "finished"


def test_a_running_run_from_before_leases_is_abandoned(store: Store) -> None:
    run_id = store.begin_run(run_info())
    with store.engine.begin() as conn:
        conn.execute(update(RunRecord).values(heartbeat_at=None, lease_seconds=None, owner=None))
    assert store.find_resumable(["a" * 64], "f" * 64, MINI) == run_id
    assert store.claim_run(run_id, "host:2:b")


def test_of_processes_claiming_an_abandoned_run_at_once_one_wins(store: Store) -> None:
    run_id = store.begin_run(run_info(), owner="host:1:a", lease_seconds=5)
    age_heartbeat(store, run_id, 60)
    start = threading.Barrier(6)

    def claim(n: int) -> bool:
        start.wait(timeout=10)
        return store.claim_run(run_id, f"host:{n}:x", lease_seconds=5)

    with ThreadPoolExecutor(6) as pool:
        won = list(pool.map(claim, range(6)))
    assert won.count(True) == 1


def test_the_lease_is_renewed_while_held_and_stops_when_taken(store: Store) -> None:
    run_id = store.begin_run(run_info(), owner="host:1:a", lease_seconds=0.3)
    age_heartbeat(store, run_id, 60)
    with RunLease(store, run_id, "host:1:a", 0.3) as lease:
        deadline = time.monotonic() + 5
        while (
            store.find_resumable(["a" * 64], "f" * 64, MINI, lease_seconds=0.3)
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        assert store.find_resumable(["a" * 64], "f" * 64, MINI, lease_seconds=0.3) is None  # renewed
        with store.engine.begin() as conn:  # another process takes it (the lease ran out meanwhile)
            conn.execute(update(RunRecord).values(owner="host:2:b"))
        while not lease.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lease.lost


# -- concurrent first use ------------------------------------------------------------------------

OPEN_AT_ONCE = """
import sys, time
from pathlib import Path
from auditor.store import Store
from auditor.cli import cli
go, me, how, urls = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
print("ready", flush=True)
for n, url in enumerate(urls):
    while not Path(f"{go}-{n}").exists():  # everything imported, the last store done: start together
        time.sleep(0.005)
    print(f"-- store {n}", flush=True)
    if how == "open":
        Store(url).close()  # what `auditor audit` does first on SQLite
    else:
        try:
            cli.main(["db", "upgrade", "--db", url], prog_name="auditor")
        except SystemExit as end:  # the command's own exit: a failure ends this child with its code
            if end.code:
                raise
    sys.stdout.flush()
    Path(f"{go}-{n}-{me}").touch()
"""

#: New stores each set of processes races on: the race twice, for the start-up cost of once.
RACES = 2


def open_at_once(
    tmp_path: Path, urls: list[str], how: str, processes: int = 4
) -> list[tuple[int, list[str]]]:
    """Start ``processes`` interpreters that open (or upgrade) each new store of ``urls`` at the same
    instant, one store after another; each child's exit code and its output for each store."""
    go = str(tmp_path / f"go-{uuid.uuid4().hex[:8]}")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AT_ONCE, go, str(me), how, *urls],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for me in range(processes)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            child.stdout.readline()  # "ready" (or nothing, from a child that failed to start)
        for n in range(len(urls)):
            Path(f"{go}-{n}").touch()
            deadline = time.monotonic() + 60
            while not all(
                Path(f"{go}-{n}-{me}").exists() or child.poll() is not None
                for me, child in enumerate(children)
            ):
                if time.monotonic() > deadline:
                    pytest.fail(f"store {n} of {urls} was not opened by every process within 60 s")
                time.sleep(0.01)
        outputs = [child.communicate(timeout=60)[0] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait(10)
    return [
        (child.returncode, out.split("-- store ")[1:]) for child, out in zip(children, outputs, strict=True)
    ]


@pytest.mark.slow
def test_processes_opening_a_new_sqlite_store_at_once_all_succeed(tmp_path: Path) -> None:
    urls = [f"sqlite:///{tmp_path / f'new-{n}' / 'auditor.db'}" for n in range(RACES)]
    outcomes = open_at_once(tmp_path, urls, "open")
    assert [code for code, _ in outcomes] == [0, 0, 0, 0], outcomes
    assert all(len(parts) == RACES for _, parts in outcomes), outcomes
    for url in urls:
        with Store(url) as store:
            assert store.revision() == head_revision() and store.list_runs() == []


@pytest.mark.slow
def test_concurrent_db_upgrades_of_a_new_postgres_schema_all_succeed(tmp_path: Path, pg_url: str) -> None:
    with contextlib.ExitStack() as schemas:
        urls = [schemas.enter_context(pg_schema(pg_url)) for _ in range(RACES)]
        outcomes = open_at_once(tmp_path, urls, "upgrade")
        assert [code for code, _ in outcomes] == [0, 0, 0, 0], outcomes
        assert all(len(parts) == RACES for _, parts in outcomes), outcomes
        assert all("schema revision" in part for _, parts in outcomes for part in parts), outcomes
        for url in urls:
            with Store(url) as store:
                assert store.revision() == head_revision()
                with store.engine.connect() as conn:
                    assert conn.scalar(text("select count(*) from alembic_version")) == 1


# -- listing --------------------------------------------------------------------------------------


def test_list_runs_newest_first_with_headline_figures(store: Store) -> None:
    ids = []
    for minutes in (0, 10, 5):
        run = run_info(started=T0 + timedelta(minutes=minutes))
        ids.append(store.save_result(result([answer("a1"), answer("a2")], run)))
    unfinished = store.begin_run(
        run_info(
            started=T0 + timedelta(minutes=1),
            judge=JudgeRef(kind="offline", prompt_version="offline-1", approximate=True),
        )
    )
    rows = store.list_runs()
    assert [r.id for r in rows] == [ids[1], ids[2], unfinished, ids[0]]
    top = rows[0]
    assert (top.status, top.answers_saved, top.groundedness_rate, top.judged_claims) == (
        "finished",
        2,
        0.5,
        2,
    )
    assert top.answers_with_unsupported_claim == 1.0 and top.answers_with_claims == 1
    assert top.policy == PolicyRef(name="strict", version="2", sha256="f" * 64)
    assert top.judge is not None and top.judge.model == "gpt-4o-mini"
    assert top.inputs[0].sha256 == "a" * 64 and top.started_at == T0 + timedelta(minutes=10)
    row = next(r for r in rows if r.id == unfinished)
    assert (row.status, row.answers_saved, row.groundedness_rate, row.finished_at) == (
        "running",
        0,
        None,
        None,
    )
    assert row.judge is not None and row.judge.approximate
    assert [r.id for r in store.list_runs(limit=2)] == [ids[1], ids[2]]


# -- verdict cache -------------------------------------------------------------------------------


def test_verdict_cache_round_trip_keyed_by_judge_identity(store: Store) -> None:
    mini = JudgeIdentity(kind="openai", model="gpt-4o-mini", prompt_version="judge-3")
    big = JudgeIdentity(kind="openai", model="gpt-4o", prompt_version="judge-3")
    cache = SqlVerdictCache(store, mini)
    verdict = ClaimVerdict(
        claim_id="c1",
        label=Label.SUPPORTED,
        citations=(Citation(evidence_id="ev0", quote="approuvé ✅"),),
        inadmissible_support=("ev1",),
        rationale="ok",
        settled_by="llm",
    )
    key = cache_key("Le remboursement a été approuvé.", "d" * 64, mini)
    assert cache.get(key) is None
    cache.put(key, verdict)
    assert cache.get(key) == verdict
    assert SqlVerdictCache(store).get(key) == verdict  # shared by every user of the store
    assert cache.get(cache_key("Le remboursement a été approuvé.", "d" * 64, big)) is None
    changed = verdict.model_copy(update={"label": Label.CONTRADICTED})
    cache.put(key, changed)
    assert cache.get(key) == changed
    cache.put("k2", ClaimVerdict(claim_id="c2", label=Label.UNJUDGED))
    assert cache.get("k2") is None  # failures are never cached
    with store.engine.connect() as conn:
        rows = conn.execute(text("select judge_model, label from verdict_cache")).all()
    assert [tuple(r) for r in rows] == [("gpt-4o-mini", "contradicted")]


# -- decomposition cache -------------------------------------------------------------------------


def cached_answer(text_: str = "Le remboursement a été approuvé ✅. Autre chose ?") -> Answer:
    return Answer(
        answer_id="a1", trace_id="t1", span_id="s1", text=text_, question="Où en est-il ?", generated_at=T0
    )


def decomposition_of(answer: Answer, errors: tuple[str, ...] = ()) -> Decomposition:
    first = answer.text.index(".") + 1
    return Decomposition(
        answer_id=answer.answer_id,
        extractor="llm:gpt-4o-mini",
        errors=errors,
        claims=(
            Claim(claim_id="a1:c0", answer_id="a1", text=answer.text[:first], start=0, end=first),
            Claim(
                claim_id="a1:c1",
                answer_id="a1",
                text=answer.text[first + 1 :],
                start=first + 1,
                end=len(answer.text),
                screened=True,
                screen_reason=ScreenReason.OFFER_TO_HELP,
            ),
        ),
    )


def test_decomposition_cache_round_trip(store: Store) -> None:
    mini = JudgeIdentity(kind="openai", model="gpt-4o-mini", prompt_version="tva-judge-1")
    cache = SqlDecompositionCache(store)
    answer = cached_answer()
    key = decomposition_key(answer, mini)
    assert cache.get(key) is None
    original = decomposition_of(answer, errors=("claim re-located from 1-2 to 0-1: 'x'",))
    cache.put(key, original)
    assert cache.get(key) == original
    assert SqlDecompositionCache(store).get(key) == original  # shared by every user of the store
    assert cache.get(decomposition_key(answer, mini.model_copy(update={"model": "gpt-4o"}))) is None
    refusal = Decomposition(answer_id="a1", claims=(), refusal=True, extractor="llm:gpt-4o-mini")
    cache.put(key, refusal)
    assert cache.get(key) == refusal
    failed = answer.model_copy(update={"text": "Autre réponse."})
    failed_key = decomposition_key(failed, mini)
    cache.put(
        failed_key,
        Decomposition(
            answer_id="a1",
            claims=(),
            extractor="llm:gpt-4o-mini",
            errors=("decomposition failed (timeout): no answer; whole answer kept as one claim",),
        ),
    )
    assert cache.get(failed_key) is None  # a failed call is never cached
    with store.engine.connect() as conn:
        rows = conn.execute(text("select kind, extractor, verdicts from decomposition_cache")).all()
    assert [tuple(r) for r in rows] == [("decompose", "llm:gpt-4o-mini", None)]


def test_fused_cache_round_trip_beside_decompositions(store: Store, db_url: str) -> None:
    identity = JudgeIdentity(kind="openai", model="gpt-4o-mini", prompt_version="tva-judge-1")
    answer = cached_answer("Refund R-77 was approved\x00. Anything else?")
    decomposition = decomposition_of(answer)
    verdict = ClaimVerdict(
        claim_id="a1:c0",
        label=Label.SUPPORTED,
        settled_by="llm",
        citations=(Citation(evidence_id="ev0", quote="approuvé ✅"),),
        inadmissible_support=("ev1",),
    )
    result = FusedResult(decomposition, [verdict], ["claim re-located from 1-2 to 0-1: 'x'"])
    fused = SqlFusedCache(store)
    key = fused_key(answer, "d" * 64, identity, allow_common_knowledge=True)
    assert key != fused_key(answer, "d" * 64, identity)
    fused.put(key, result)
    assert fused.get(key) == result  # JSON keeps NUL characters on both databases
    assert SqlDecompositionCache(store).get(key) is None  # kinds never cross
    fused.put("unjudged", FusedResult(decomposition, [verdict.model_copy(update={"label": Label.UNJUDGED})]))
    fused.put("failed", FusedResult(decomposition, [], failed=True))
    assert fused.get("unjudged") is None and fused.get("failed") is None
    with store.engine.connect() as conn:
        rows = conn.execute(text("select key, kind from decomposition_cache")).all()
    assert [tuple(r) for r in rows] == [(key, "fused")]


def test_nul_characters_in_trace_content_do_not_fail_a_run(store: Store, db_url: str) -> None:
    item = evidence(0, text_="before\x00after").model_copy(update={"metadata": {"k": "v\x00"}})
    original = result([answer("a1").model_copy(update={"text": "nul\x00here", "evidence": [item]})])
    loaded = store.load_run(store.save_result(original))
    if db_url.startswith("sqlite"):
        assert loaded == original
    else:  # PostgreSQL text cannot hold NUL: it becomes U+FFFD, in text columns only
        assert loaded.answers[0].text == "nul\ufffdhere"
        assert loaded.answers[0].evidence[0].text == "before\ufffdafter"
        assert loaded.answers[0].evidence[0].metadata == {"k": "v\x00"}


def test_migrations_downgrade_to_empty_and_back(store: Store) -> None:
    from alembic import command

    from auditor.store.migrations import alembic_config

    with store.engine.begin() as conn:
        config = alembic_config(store.url)
        config.attributes["connection"] = conn
        command.downgrade(config, "base")
    assert set(inspect(store.engine).get_table_names()) <= {"alembic_version"}
    assert store.revision() is None
    assert store.upgrade() == head_revision()
    assert store.list_runs() == []
