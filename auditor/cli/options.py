"""Options shared by several commands, defined once so they read and behave the same everywhere."""

from __future__ import annotations

from pathlib import Path

import click

# Files, directories or glob patterns (quoted, ``**`` recursive): ``auditor.trace`` expands them and
# names a missing file or a pattern matching nothing in one line.
traces_argument = click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))

format_option = click.option(
    "--format",
    "format_",
    metavar="NAME",
    default=None,
    help="Read the inputs with this adapter instead of detecting it (see `auditor adapters`).",
)

policy_option = click.option(
    "--policy",
    "policy_name",
    metavar="FILE|NAME",
    default=None,
    help="Admissible-source policy: a TOML file or a shipped name (default, strict, ...). Default: default.",
)

judge_option = click.option(
    "--judge",
    "judge_spec",
    metavar="SPEC",
    default=None,
    help="offline (default; approximate, no network) or openai:MODEL (any OpenAI-compatible server).",
)

base_url_option = click.option(
    "--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."
)

db_option = click.option(
    "--db",
    "db_url",
    metavar="URL",
    default=None,
    help="Store URL (sqlite:///file.db, postgresql+psycopg://user@host/db). "
    "Default: AUDITOR_DB_URL, else a SQLite file in the app directory (AUDITOR_HOME moves it).",
)

cascade_option = click.option(
    "--cascade/--no-cascade",
    default=True,
    show_default=True,
    help="Settle claims the offline checks are certain about without an LLM call.",
)

cache_option = click.option(
    "--cache/--no-cache",
    default=True,
    show_default=True,
    help="Reuse cached LLM decompositions and verdicts from the store.",
)

concurrency_option = click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True)

labels_option = click.option(
    "--labels",
    "labels_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Labels file (JSONL: answerable per question): adds refusal accuracy and over-refusal.",
)

# Output paths take no click checks: ``check_outputs`` names every bad one in one line, before work.
report_option = click.option(
    "--report",
    "report_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the self-contained HTML audit report to this file.",
)

calibration_option = click.option(
    "--calibration",
    metavar="ID|none",
    default=None,
    help="Correct the rates with this stored calibration (an id from `auditor calibrate`; a unique "
    "prefix is enough), or none. Default: the newest calibration of the same judge, if any.",
)
