"""``auditor db``: manage the store's schema (migrations ship inside the package)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from auditor.cli.options import db_option

if TYPE_CHECKING:
    pass


@click.group("db")
def db_group() -> None:
    """Create or migrate the audit store (SQLite file by default, PostgreSQL by URL)."""


@db_group.command("upgrade")
@db_option
def upgrade_command(db_url: str | None) -> None:
    """Migrate the database to the newest schema revision (creating it when empty)."""
    from auditor.store import upgrade

    click.echo(f"Database at schema revision {upgrade(db_url)} (head).")


@db_group.command("current")
@db_option
def current_command(db_url: str | None) -> None:
    """Show the database's schema revision and whether it is the newest."""
    from auditor.store import revision

    found, head = revision(db_url)
    if found == head:
        click.echo(f"{found} (head)")
    else:
        click.echo(f"{found or 'none'} (head is {head}: run `auditor db upgrade`)")


@db_group.command("prune")
@db_option
@click.option(
    "--spans", metavar="AGE", help="Prune received spans older than AGE (7d, 12h); AUDITOR_RETAIN_SPANS."
)
@click.option(
    "--answers",
    metavar="AGE",
    help="Prune runs and their answers older than AGE (90d); AUDITOR_RETAIN_ANSWERS.",
)
@click.option(
    "--traces",
    metavar="AGE",
    help="Prune kept trace content older than AGE that no stored run reads (default: the answers' age); "
    "AUDITOR_RETAIN_TRACES.",
)
@click.option("--dry-run", is_flag=True, help="Count what would be pruned; delete nothing.")
def prune_command(
    db_url: str | None, spans: str | None, answers: str | None, traces: str | None, dry_run: bool
) -> None:
    """Delete what the retention policy no longer keeps, and say what it kept on purpose and why."""
    from auditor.errors import UsageError
    from auditor.store import Store, prune, retention

    policy = retention(spans, answers, traces)
    if policy.empty:
        raise UsageError("Nothing to prune: pass --spans, --answers or --traces (an age such as 7d or 90d).")
    with Store(db_url) as store:
        report = prune(store, policy, dry_run=dry_run)
    verb = "Would prune" if report.dry_run else "Pruned"
    click.echo(f"{verb}: " + (", ".join(f"{n} {what}" for what, n in report.pruned.items()) or "nothing"))
    for skip in report.skipped:
        click.echo(f"Kept {skip.count} {skip.what}: {skip.why}.")


@db_group.command("rollups")
@click.option("--rebuild", is_flag=True, help="Recompute every rollup row from the stored answers.")
@db_option
def rollups_command(rebuild: bool, db_url: str | None) -> None:
    """Recompute the per-hour and per-day figures (rollups) the server's summary and trend read."""
    from auditor.store import Store, rebuild_rollups

    if not rebuild:
        raise click.UsageError(
            "Nothing to do: pass --rebuild to recompute the rollups from the stored answers."
        )
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    # On stderr, and only on a terminal: a day of a busy store takes seconds, a month minutes.
    console = Console(stderr=True)
    columns = (TextColumn("Rebuilding rollups"), BarColumn(), MofNCompleteColumn(), TextColumn("days"))
    bar = Progress(
        *columns, TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal
    )
    with bar, Store(db_url) as store:
        task = bar.add_task("rollups", total=None)
        rows = rebuild_rollups(store, on_day=lambda done, days: bar.update(task, completed=done, total=days))
    click.echo(f"Rollups rebuilt from the stored answers: {rows} rows.")
