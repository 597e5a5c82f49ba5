"""A store that cannot be used is one line naming it and saying what to do, from every command.

Each bad store (a text file, a damaged file, a newer or older schema, no version table, a folder,
a server that is down, a URL that does not parse, ``postgres://``, a missing driver, a database
that does not exist) goes through every command that opens the store, through the CLI: exit
status 2, one line on stderr naming the database with its password masked, no traceback.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import create_engine, make_url

import tests.test_store
from auditor.cli import cli
from auditor.store import Store
from auditor.store.migrations import alembic_config
from tests.conftest import FIXTURES
from tests.test_calibration import write_labelled

pg_url = tests.test_store.pg_url  # the PostgreSQL fixtures, shared with the store tests
fresh_pg_url = tests.test_store.fresh_pg_url

TRACE = FIXTURES / "refusal" / "openinference.otlp.jsonl"
SECRET = "s3cret-pw"


def commands(tmp_path: Path) -> dict[str, list[str]]:
    """Every command that opens the store, with what it needs besides ``--db``."""
    return {
        "audit": ["audit", str(TRACE)],
        "gate": ["gate", str(TRACE)],
        "runs": ["runs"],
        "report": ["report", "--run", "abc", "-o", str(tmp_path / "r.html")],
        "db upgrade": ["db", "upgrade"],
        "db current": ["db", "current"],
        "calibrate": ["calibrate", str(write_labelled(tmp_path))],
    }


def sqlite_store(tmp_path: Path, name: str = "store.db") -> Path:
    path = tmp_path / name
    Store(f"sqlite:///{path}").close()
    return path


def text_file(tmp_path: Path, _pg: str) -> tuple[str, str]:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 20, encoding="utf-8")
    return f"sqlite:///{path}", "not a SQLite database"


def truncated(tmp_path: Path, _pg: str) -> tuple[str, str]:
    path = sqlite_store(tmp_path)
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    return f"sqlite:///{path}", "damaged"


def newer_revision(tmp_path: Path, _pg: str) -> tuple[str, str]:
    path = sqlite_store(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0999'")
    return f"sqlite:///{path}", "newer than this auditor knows"


def no_version_table(tmp_path: Path, _pg: str) -> tuple[str, str]:
    path = sqlite_store(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE alembic_version")
    return f"sqlite:///{path}", "no schema revision"


def folder(tmp_path: Path, _pg: str) -> tuple[str, str]:
    (tmp_path / "stores").mkdir()
    return f"sqlite:///{tmp_path / 'stores'}", "names a folder"


def older_revision(_tmp_path: Path, pg: str) -> tuple[str, str]:
    from alembic import command

    engine = create_engine(pg)
    with engine.begin() as conn:
        config = alembic_config(pg)
        config.attributes["connection"] = conn
        command.upgrade(config, "0002")
    engine.dispose()
    return pg, "auditor db upgrade"


def unreachable(_tmp_path: Path, _pg: str) -> tuple[str, str]:
    return f"postgresql+psycopg://auditor:{SECRET}@127.0.0.1:1/audits", "Cannot connect"


def unparseable(_tmp_path: Path, _pg: str) -> tuple[str, str]:
    return "not a url at all", "not a database URL"


def postgres_scheme(_tmp_path: Path, _pg: str) -> tuple[str, str]:
    return f"postgres://auditor:{SECRET}@127.0.0.1/audits", "postgresql://"


def missing_driver(_tmp_path: Path, _pg: str) -> tuple[str, str]:
    return f"postgresql+psycopg://auditor:{SECRET}@127.0.0.1/audits", "pip install 'trace-auditor[postgres]'"


def wrong_database(_tmp_path: Path, pg: str) -> tuple[str, str]:
    return make_url(pg).set(database="auditor_no_such_database").render_as_string(False), "does not exist"


Case = Callable[[Path, str], tuple[str, str]]
SQLITE_CASES: list[Case] = [text_file, truncated, newer_revision, no_version_table, folder]
OTHER_CASES: list[Case] = [unparseable, postgres_scheme, missing_driver, unreachable]
PG_CASES: list[Case] = [older_revision, wrong_database]
ALL = ["audit", "gate", "runs", "report", "db upgrade", "db current", "calibrate"]


def check_one_line(result: Result, url: str) -> str:
    """The one line on stderr; exit status 2, no traceback, the URL named, its password masked."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    shown = make_url(url).render_as_string(True) if "://" in url else url
    assert shown in lines[0]
    assert SECRET not in result.output
    return lines[0]


def invoke(args: list[str], url: str) -> Result:
    return CliRunner().invoke(cli, [*args, "--db", url])


@pytest.mark.parametrize("case", SQLITE_CASES + OTHER_CASES, ids=lambda c: c.__name__)
def test_a_bad_store_is_one_line_from_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    if case is missing_driver:
        monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the [postgres] extra were not installed
    for name, args in commands(tmp_path).items():
        place = tmp_path / name.replace(" ", "-")  # a bad store of its own for each command
        place.mkdir()
        url, expected = case(place, "")
        line = check_one_line(invoke(args, url), url)
        assert expected in line, (name, line)


@pytest.mark.parametrize("case", PG_CASES, ids=lambda c: c.__name__)
def test_a_bad_postgres_store_is_one_line_from_every_command(
    tmp_path: Path, fresh_pg_url: str, case: Case
) -> None:
    url, expected = case(tmp_path, fresh_pg_url)
    for name, args in commands(tmp_path).items():
        if case is older_revision and name.startswith("db "):
            continue  # migrating an older database, and showing its revision, are what these are for
        line = check_one_line(invoke(args, url), url)
        assert expected in line, (name, line)


def test_an_older_postgres_store_is_upgraded_on_purpose(fresh_pg_url: str) -> None:
    url, _ = older_revision(Path(), fresh_pg_url)
    runner = CliRunner()
    current = runner.invoke(cli, ["db", "current", "--db", url])
    assert current.exit_code == 0 and "0002 (head is" in current.output
    upgraded = runner.invoke(cli, ["db", "upgrade", "--db", url])
    assert upgraded.exit_code == 0 and "(head)" in upgraded.output
    assert runner.invoke(cli, ["runs", "--db", url]).exit_code == 0


def test_read_only_commands_create_no_database_and_no_folder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'a.db'}"
    runner = CliRunner()
    for args in (["runs"], ["report", "--run", "abc", "-o", str(tmp_path / "r.html")]):
        line = check_one_line(runner.invoke(cli, [*args, "--db", url]), url)
        assert "No store at" in line and "auditor audit" in line
    current = runner.invoke(cli, ["db", "current", "--db", url])
    assert current.exit_code == 0 and current.output.startswith("none")
    assert not (tmp_path / "no").exists()


def test_the_default_store_is_not_created_by_reading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("AUDITOR_HOME", str(home))
    monkeypatch.delenv("AUDITOR_DB_URL", raising=False)
    out = CliRunner().invoke(cli, ["runs"])
    assert out.exit_code == 2 and "No store at" in out.stderr
    assert not home.exists()
    assert CliRunner().invoke(cli, ["audit", str(TRACE)]).exit_code == 0  # a writer creates it
    assert (home / "auditor.db").is_file()


def test_a_driver_not_installed_names_the_extra_and_the_driver_to_write() -> None:
    if importlib.util.find_spec("psycopg2") is not None:
        pytest.skip("psycopg2 is installed here")
    url = f"postgresql+psycopg2://auditor:{SECRET}@127.0.0.1/audits"
    line = check_one_line(invoke(["runs"], url), url)
    assert "psycopg2" in line and "pip install 'trace-auditor[postgres]'" in line
    assert "postgresql+psycopg://" in line
