"""The ``--db`` option every command that touches the store takes."""

from __future__ import annotations

import click

db_option = click.option(
    "--db",
    "db_url",
    metavar="URL",
    default=None,
    help="Store URL (sqlite:///file.db, postgresql+psycopg://user@host/db). "
    "Default: AUDITOR_DB_URL, else a SQLite file in the app directory (AUDITOR_HOME moves it).",
)
