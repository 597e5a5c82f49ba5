"""``auditor reaudit``: a stored run judged again from the traces the store kept, the files gone.

Real parts only: the fixtures' trace files are audited into a real store (SQLite, and PostgreSQL
through ``tests/test_store.py``'s fresh-schema fixture), then deleted; the re-audit must give what
an audit of those files under the same policy gives. The LLM judge runs through the real openai
client against the local fake server, which counts its requests.
"""

from __future__ import annotations

import json
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, delete, func, inspect, select, update

from auditor.cli import cli
from auditor.errors import StoreError
from auditor.policy import load_policy
from auditor.results import AuditResult, RunInfo
from auditor.run import audit, reaudit
from auditor.store import Store, revision, trace_digest
from auditor.store._migrate import head_revision
from auditor.store._schema import RunTraceRecord, TraceContentRecord
from auditor.trace import read_traces
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI
from tests.test_store import db_url, fresh_pg_url, pg_url  # noqa: F401  (SQLite and PostgreSQL stores)

#: Conversations over several traces (multi_turn) and single traces, in three formats.
SCENARIOS = ("multi_turn", "changed_figure", "user_message_support", "multi_hop", "refusal")


def copy_inputs(tmp_path: Path) -> Path:
    """The scenarios' trace files, copied where a test may delete them."""
    inputs = tmp_path / "inputs"
    for name in SCENARIOS:
        target = inputs / name
        target.mkdir(parents=True)
        for path in (FIXTURES / name).iterdir():
            if path.name != "expected.json":
                shutil.copy(path, target / path.name)
    return inputs


def comparable(result: AuditResult) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The answers (every field: evidence, decisions, claims, verdicts) and the summary."""
    return [a.model_dump(mode="json") for a in result.answers], result.summary


def count_rows(url: str, model: type[TraceContentRecord] | type[RunTraceRecord]) -> int:
    with Store(url) as store, store.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(model)) or 0)


@pytest.mark.slow
def test_reaudit_under_another_policy_equals_an_audit_of_the_deleted_files(tmp_path: Path) -> None:
    inputs = copy_inputs(tmp_path)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    strict = load_policy("strict")
    read = read_traces([inputs]).traces
    source = audit([inputs], db_url=url)  # the default policy
    expected = audit([inputs], policy=strict, store=False)
    shutil.rmtree(inputs)

    again = reaudit(source.run.id[:8], policy=strict, db_url=url)

    assert comparable(again) == comparable(expected)
    assert [a.model_dump()["evidence"] for a in again.answers] != [
        a.model_dump()["evidence"] for a in source.answers
    ]  # the other policy decided the evidence: not a copy of the source run
    assert again.run.id != source.run.id
    assert again.run.policy == expected.run.policy != source.run.policy
    assert again.run.inputs == source.run.inputs  # what the re-judged answers came from
    with Store(url) as store:
        assert store.run_status(again.run.id) == "finished"
        assert store.reaudit_of(again.run.id) == source.run.id
        assert store.load_run(again.run.id).answers == again.answers
        rows = {row.id: row for row in store.list_runs()}
        assert rows[again.run.id].reaudit_of == source.run.id and rows[source.run.id].reaudit_of is None
    # Re-auditing read the kept traces and kept nothing twice.
    assert count_rows(url, TraceContentRecord) == len({(t.trace_id, trace_digest(t)) for t in read})


@pytest.mark.slow
def test_cli_reaudit_defaults_to_the_runs_policy_and_judge_and_prints_like_audit(tmp_path: Path) -> None:
    inputs = copy_inputs(tmp_path)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    strict = load_policy("strict")
    source = audit([inputs], policy=strict, db_url=url)
    shutil.rmtree(inputs)
    runner = CliRunner()

    out = runner.invoke(cli, ["reaudit", "--run", source.run.id[:6], "--db", url, "--json", "-"])

    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    assert document["run"]["id"] != source.run.id
    assert document["run"]["policy"] == source.run.policy.model_dump(mode="json")  # type: ignore[union-attr]
    assert document["run"]["judge"] == source.run.judge.model_dump(mode="json")  # type: ignore[union-attr]
    assert document["answers"] == [a.model_dump(mode="json") for a in source.answers]
    assert document["summary"] == source.summary
    listed = runner.invoke(cli, ["runs", "--db", url])
    assert f"(reaudit of {source.run.id[:12]})" in " ".join(listed.stdout.split())  # wrapped at 80 columns
    console = runner.invoke(cli, ["reaudit", "--run", source.run.id[:6], "--db", url, "--policy", "default"])
    assert console.exit_code == 0, console.output
    assert "policy default" in console.stdout and "groundedness rate:" in console.stdout
    assert "stored (auditor show" in console.stderr


@pytest.mark.parametrize("wanted", ["", "0", "ffffffff"])
def test_a_missing_or_ambiguous_run_is_one_line(tmp_path: Path, wanted: str) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with Store(url) as store:
        for _ in range(17):  # 17 hex ids: at least two share a first digit, so "0" or another is ambiguous
            store.begin_run(
                RunInfo(id=uuid.uuid4().hex, started_at=datetime.now(UTC), policy=None, judge=None)
            )
        ids = [row.id for row in store.list_runs()]
    if wanted == "0":
        wanted = next(i[0] for i in ids if sum(j.startswith(i[0]) for j in ids) > 1)
    out = CliRunner().invoke(cli, ["reaudit", "--run", wanted, "--db", url])
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "auditor runs" in lines[0], out.stderr
    assert ("runs with an id" if wanted and wanted != "ffffffff" else "no run with an id") in lines[0]


def test_a_run_stored_without_content_is_one_line_naming_it(tmp_path: Path) -> None:
    inputs = copy_inputs(tmp_path)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    source = audit([inputs], db_url=url)
    with Store(url) as store, store.engine.begin() as conn:  # as a run stored before content was kept
        conn.execute(delete(TraceContentRecord))
    with pytest.raises(StoreError, match=f"Run {source.run.id} has no traces kept.*re-run `auditor audit`"):
        reaudit(source.run.id, db_url=url)
    out = CliRunner().invoke(cli, ["reaudit", "--run", source.run.id[:8], "--db", url])
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and source.run.id in lines[0] and str(inputs) in lines[0], out.stderr


def test_content_is_kept_once_and_read_back_exactly(tmp_path: Path) -> None:
    inputs = copy_inputs(tmp_path)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    read = read_traces([inputs]).traces
    first = audit([inputs], db_url=url)
    kept = count_rows(url, TraceContentRecord)
    assert kept == len({(t.trace_id, trace_digest(t)) for t in read})
    with Store(url) as store, store.engine.begin() as conn:  # mark one kept body
        key = conn.scalar(select(TraceContentRecord.trace_key).limit(1))
        body = conn.scalar(select(TraceContentRecord.body).where(TraceContentRecord.trace_key == key))
        conn.execute(update(TraceContentRecord).where(TraceContentRecord.trace_key == key).values(size=-1))
    second = audit([inputs], db_url=url, resume=False)
    assert count_rows(url, TraceContentRecord) == kept  # a trace already kept is not kept again ...
    with Store(url) as store, store.engine.connect() as conn:
        row = conn.execute(select(TraceContentRecord).where(TraceContentRecord.trace_key == key)).one()
        assert (row.size, row.body) == (-1, body)  # ... nor rewritten
        for run in (first, second):
            loaded = store.load_traces(run.run.id)
            assert [trace_digest(t) for t in loaded] == [trace_digest(t) for t in read]
            assert loaded == read
        wanted = {read[-1].trace_id, read[0].trace_id, "not-in-the-run"}
        subset = store.load_traces(first.run.id, wanted)
        assert subset == [t for t in read if t.trace_id in wanted]  # in the order the run read them


def test_same_policy_and_llm_judge_makes_no_calls(tmp_path: Path) -> None:
    inputs = copy_inputs(tmp_path)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with FakeOpenAI(offline_judge=True) as server:
        source = audit(
            [inputs],
            policy=load_policy("strict"),
            judge="openai:fake-judge",
            base_url=server.base_url,
            db_url=url,
        )
        calls = server.requests
        assert calls > 0
        shutil.rmtree(inputs)
        again = reaudit(source.run.id, base_url=server.base_url, db_url=url)  # the run's policy and judge
        assert server.requests == calls  # every verdict from the store's cache
    assert again.run.judge == source.run.judge and again.run.judge is not None
    assert again.run.judge.kind == "openai" and again.run.judge.model == "fake-judge"
    assert again.run.usage is not None and again.run.usage["llm"]["calls"] == 0
    settled = [c.settled_by for a in again.answers for c in a.claims or [] if c.verdict is not None]
    assert settled and set(settled) == {"cache"}
    assert without_settled_by(again) == without_settled_by(source)


def without_settled_by(result: AuditResult) -> tuple[list[dict[str, object]], dict[str, object]]:
    answers, summary = comparable(result)
    for answer in answers:
        for claim in answer["claims"] or []:  # type: ignore[attr-defined]
            claim.pop("settled_by")
    return answers, summary


@pytest.mark.slow
def test_postgresql_round_trip(fresh_pg_url: str, tmp_path: Path) -> None:  # noqa: F811
    inputs = copy_inputs(tmp_path)
    Store(fresh_pg_url, upgrade=True).close()
    read = read_traces([inputs]).traces
    strict = load_policy("strict")
    source = audit([inputs], db_url=fresh_pg_url)
    expected = audit([inputs], policy=strict, store=False)
    shutil.rmtree(inputs)
    with Store(fresh_pg_url) as store:
        assert store.load_traces(source.run.id) == read
    again = reaudit(source.run.id, policy=strict, db_url=fresh_pg_url)
    assert comparable(again) == comparable(expected)
    with Store(fresh_pg_url) as store:
        assert store.reaudit_of(again.run.id) == source.run.id
        assert store.load_traces(again.run.id) == read  # the re-audit's run keeps its traces too
    assert count_rows(fresh_pg_url, TraceContentRecord) == len({(t.trace_id, trace_digest(t)) for t in read})


def test_migration_upgrades_a_store_with_runs_from_before(db_url: str, tmp_path: Path) -> None:  # noqa: F811
    from alembic import command

    from auditor.store.migrations import alembic_config

    Store(db_url, upgrade=True).close()
    source = audit([FIXTURES / "multi_hop" / "runtree.json"], db_url=db_url)
    with Store(db_url) as store, store.engine.begin() as conn:  # back to the revision before content
        config = alembic_config(store.url)
        config.attributes["connection"] = conn
        command.downgrade(config, "0008")
    assert revision(db_url) == ("0008", head_revision())
    engine = create_engine(db_url)
    with engine.connect() as conn:
        assert "trace_contents" not in inspect(conn).get_table_names()
        assert "reaudit_of" not in {c["name"] for c in inspect(conn).get_columns("runs")}
    engine.dispose()
    with Store(db_url, upgrade=True) as store:
        assert store.revision() == head_revision()
        assert [row.id for row in store.list_runs()] == [source.run.id]  # still listed
        assert store.load_run(source.run.id).answers == source.answers
    with pytest.raises(StoreError, match=f"Run {source.run.id} has no traces kept"):
        reaudit(source.run.id[:8], db_url=db_url)


def test_a_damaged_kept_trace_is_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    source = audit([FIXTURES / "refusal" / "runtree.json"], db_url=url)
    with Store(url) as store, store.engine.begin() as conn:
        conn.execute(update(TraceContentRecord).values(body=b"not zlib"))
    out = CliRunner().invoke(cli, ["reaudit", "--run", source.run.id, "--db", url])
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "is damaged" in lines[0] and "auditor audit" in lines[0], out.stderr


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql+psycopg://auditor:secret@127.0.0.1:1/audits", "Cannot connect"),
        ("sqlite:///{tmp}/none.db", "No store at"),
    ],
)
def test_a_store_that_cannot_be_used_is_one_line(tmp_path: Path, url: str, said: str) -> None:
    url = url.format(tmp=tmp_path)
    out = CliRunner().invoke(cli, ["reaudit", "--run", "3f2a", "--db", url])
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "secret" not in lines[0], out.stderr
    assert not (tmp_path / "none.db").exists()  # a reader: no store is created to be found empty
