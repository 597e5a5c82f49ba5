"""Database failures in one line: the one place that turns driver, SQLAlchemy and Alembic
exceptions into a :class:`~auditor.errors.StoreError`.

A user who points ``--db`` at the wrong thing (a text file, a damaged database, a folder, a server
that is down, a misspelt URL, a driver not installed) gets one line that names the database, with
its password masked, and says what to do next; never a traceback. :func:`parse_url` and
:func:`driver_error` cover what goes wrong before a connection exists, :func:`store_errors` what a
connection, a query or a migration raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from alembic.util.exc import CommandError
from sqlalchemy import make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, NoSuchModuleError, SQLAlchemyError

from auditor.errors import StoreError

_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")
_POSTGRES_FIX = "pip install 'trace-auditor[postgres]'"
_CHECK_URL = "check --db (or AUDITOR_DB_URL)"


def shown(url: str | URL) -> str:
    """``url`` for messages: the password masked, even in a URL that does not parse."""
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return _PASSWORD.sub(r"\1***@", url)


def parse_url(url: str) -> URL:
    """The parsed URL, or a :class:`StoreError` saying how to write one."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise StoreError(
            f"{shown(url)!r} is not a database URL: write sqlite:///path/to/file.db or "
            "postgresql+psycopg://user@host/dbname (--db or AUDITOR_DB_URL)."
        ) from None
    if parsed.drivername.split("+")[0] == "postgres":
        fixed = shown(parsed.set(drivername="postgresql+psycopg"))
        raise StoreError(
            f"{shown(parsed)}: SQLAlchemy names the scheme postgresql://, not postgres://; write {fixed}."
        )
    return parsed


def driver_error(url: URL, err: ImportError | NoSuchModuleError) -> StoreError:
    """What to install (or write) when the URL's dialect or driver cannot be loaded."""
    if isinstance(err, NoSuchModuleError):
        return StoreError(
            f"{shown(url)}: no database kind {url.drivername!r} is known: write sqlite:///FILE or "
            "postgresql+psycopg://user@host/dbname."
        )
    module = err.name or str(err)
    if url.get_backend_name() == "postgresql":
        write = (
            ""
            if url.get_driver_name() == "psycopg"
            else " and write the URL as postgresql+psycopg://user@host/dbname"
        )
        return StoreError(
            f"{shown(url)}: the PostgreSQL driver ({module}) is not installed: {_POSTGRES_FIX}{write}."
        )
    return StoreError(f"{shown(url)}: the database driver {module} is not installed: pip install {module}.")


def _detail(err: BaseException) -> str:
    """The driver's own words: their first line (libpq adds hints below), without SQLAlchemy's link."""
    original = err.orig if isinstance(err, DBAPIError) else err
    first = next((line for line in str(original).splitlines() if line.strip()), "")
    words = " ".join(first.split()).split(" (Background on this error")[0]
    return words or type(original).__name__


def describe(url: str | URL, err: SQLAlchemyError | CommandError) -> StoreError:
    """One line for a failure of the database at ``url``: what happened and what to do."""
    where, detail = shown(url), _detail(err)
    lowered = detail.lower()
    if isinstance(err, CommandError):
        return StoreError(f"Cannot migrate the database {where}: {detail}.")
    if "file is not a database" in lowered:
        return StoreError(
            f"{where} is not a SQLite database ({detail}): point --db at an auditor store, "
            "or at a new file to create one."
        )
    if "malformed" in lowered or "disk i/o error" in lowered:
        return StoreError(
            f"The database {where} is damaged ({detail}): restore it from a backup, "
            "or point --db at a new file."
        )
    if "unable to open database file" in lowered:
        return StoreError(
            f"Cannot open the database {where} ({detail}): {_CHECK_URL}: it must name a file "
            "in a folder you can write to."
        )
    if "database is locked" in lowered:
        return StoreError(f"The database {where} stayed locked by another process ({detail}): try again.")
    if "database" in lowered and "does not exist" in lowered:
        return StoreError(
            f"Cannot open {where}: {detail}: create it (createdb NAME) or fix the database name; "
            f"{_CHECK_URL}."
        )
    if isinstance(err, DBAPIError) and (err.connection_invalidated or "connect" in lowered):
        return StoreError(
            f"Cannot connect to {where}: {detail}: is the server running? {_CHECK_URL}: host, "
            "port, user and password."
        )
    return StoreError(
        f"The database {where} failed: {detail}. {_CHECK_URL}; `auditor db current` shows its schema."
    )


@contextmanager
def store_errors(url: str | URL) -> Iterator[None]:
    """Run a block against the database at ``url``, its failures raised as one-line StoreErrors.

    :class:`~sqlalchemy.exc.IntegrityError` passes through: it is how a writer learns that another
    one got there first, which the store handles where it can happen.
    """
    try:
        yield
    except (StoreError, IntegrityError):
        raise
    except (SQLAlchemyError, CommandError) as err:
        raise describe(url, err) from err
