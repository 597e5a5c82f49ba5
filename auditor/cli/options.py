"""Options shared by several commands, defined once so they read and behave the same everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


class TraceInput(click.Path):
    """A trace input: a local path as a ``Path``, a URL (``s3://...``, read through fsspec) kept as
    given, since a ``Path`` would fold its ``//``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from auditor.trace import is_url

        return value if isinstance(value, str) and is_url(value) else super().convert(value, param, ctx)


# Files, directories, glob patterns (quoted, ``**`` recursive) or URLs: ``auditor.trace`` expands
# them and names a missing file or a pattern matching nothing in one line.
traces_argument = click.argument("traces", nargs=-1, required=True, type=TraceInput(path_type=Path))
#: ``auditor audit``'s: the traces may come from ``--from`` instead (:func:`source_options`).
optional_traces_argument = click.argument("traces", nargs=-1, type=TraceInput(path_type=Path))


def moment(value: Any) -> Any:
    """An ISO 8601 date or time (``2026-03-01``, ``2026-03-01T09:30:00+01:00``); without a zone, UTC."""
    from datetime import UTC, datetime

    if isinstance(value, datetime):
        return value
    try:
        stamp = datetime.fromisoformat(str(value))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO 8601 time (2026-03-01T09:30:00Z, 2026-03-01)."
        ) from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def source_options(command: Any) -> Any:
    """``--from URL`` (a trace source: ``phoenix://HOST:PORT/PROJECT``, ``mlflow://HOST:PORT/EXPERIMENT``), ``--since``, ``--until`` and
    ``--write-back/--no-write-back``; ``auditor audit`` takes them instead of TRACES."""
    for option in reversed(
        [
            click.option(
                "--from",
                "source_url",
                metavar="URL",
                default=None,
                help="Audit the traces held by a source instead of files: phoenix://HOST:PORT/PROJECT "
                "(auditor-otel[phoenix]), mlflow://HOST:PORT/EXPERIMENT (auditor-otel[mlflow]).",
            ),
            click.option(
                "--since",
                type=moment,
                metavar="TIME",
                default=None,
                help="With --from: traces with a span starting at or after this time (ISO 8601; UTC if no zone).",
            ),
            click.option(
                "--until",
                type=moment,
                metavar="TIME",
                default=None,
                help="With --from: traces with a span starting before this time (ISO 8601; UTC if no zone).",
            ),
            click.option(
                "--write-back/--no-write-back",
                default=True,
                show_default=True,
                help="With --from: write the verdicts back as annotations on the answers' spans.",
            ),
        ]
    ):
        command = option(command)
    return command


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

decomposer_option = click.option(
    "--decomposer",
    type=click.Choice(["rules", "llm", "fused"]),
    default="rules",
    show_default=True,
    help="How answers are split into claims; fused: one LLM call decomposes and judges together.",
)
concurrency_option = click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True)

rate_limit_option = click.option(
    "--rate-limit",
    "rate_limit",
    metavar="RATE",
    default=None,
    help="LLM requests per second, minute or hour for the whole run (e.g. 3000/min, 50/s); "
    "a 429 pauses every request. Default: AUDITOR_LLM_RATE, else no limit.",
)


def rate_per_second(given: str | None) -> float | None:
    """``--rate-limit`` (else ``AUDITOR_LLM_RATE``) in requests per second; None: no limit.

    Raises:
        UsageError: not a rate (the option or the variable named, with the accepted forms).
    """
    from auditor.llm import parse_rate
    from auditor.settings import setting

    text = setting("llm_rate", given)
    return parse_rate(text, option="--rate-limit" if given else "AUDITOR_LLM_RATE") if text else None


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
