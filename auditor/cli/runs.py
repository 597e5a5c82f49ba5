"""``auditor runs`` and ``auditor report``: past runs in the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.options import db_option

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.store import RunRow


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


#: At this width or more ``auditor runs`` prints one table row per run; narrower, or in a pipe
#: (80 columns), a block of two lines per run, so nothing is cut short.
TABLE_WIDTH = 150


@click.command("runs")
@db_option
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the runs as a JSON array (full ids, every field)."
)
def runs_command(db_url: str | None, limit: int, as_json: bool) -> None:
    """List past runs: time, inputs, policy hash, judge and the headline figures."""
    from rich.console import Console

    from auditor.report import list_runs

    rows = list_runs(db_url, limit)
    if as_json:
        import json

        from auditor.text import json_printable

        document = [row.model_dump(mode="json") for row in rows]
        click.echo(json_printable(json.dumps(document, indent=2, ensure_ascii=False)))
        return
    if not rows:
        click.echo("No runs stored yet: run `auditor audit`.")
        return
    console = Console(highlight=False)
    if console.width >= TABLE_WIDTH:
        _table(rows, console)
    else:
        _blocks(rows, console)


def _cells(row: RunRow) -> dict[str, str]:
    from auditor.cli.output import shown

    judge = "-"
    if row.judge is not None:
        judge = row.judge.kind + (f":{row.judge.model}" if row.judge.model else "")
    policy = f"{row.policy.name} {row.policy.sha256[:12]}" if row.policy else "-"
    first = Path(row.inputs[0].path).name if row.inputs else "-"
    inputs = first if len(row.inputs) <= 1 else f"{first} +{len(row.inputs) - 1}"
    if row.reaudit_of is not None:
        inputs += f" (reaudit of {row.reaudit_of[:12]})"
    return {
        "run": shown(row.id),
        "started (UTC)": row.started_at.strftime("%Y-%m-%d %H:%M"),
        "status": shown(row.status),
        "inputs": shown(inputs),
        "policy": shown(policy),
        "judge": shown(judge),
        "answers": str(row.answers_saved),
        "groundedness": f"{_pct(row.groundedness_rate)} of {row.judged_claims or 0}",
        "with unsupported claim": f"{_pct(row.answers_with_unsupported_claim)} of {row.answers_with_claims or 0}"
        + _undecided(row),
    }


def _undecided(row: RunRow) -> str:
    """The answers the judge could not decide (out of the rate this follows), when there are some."""
    return f" · {row.undecided_answers} undecided" if row.undecided_answers else ""


def _table(rows: list[RunRow], console: Console) -> None:
    from rich.table import Table

    table = Table(expand=False)
    for i, name in enumerate(_cells(rows[0])):
        # Ids and statuses are never cut: they are what a user copies into the next command.
        table.add_column(name, no_wrap=i < 3, overflow="fold")
    for row in rows:
        table.add_row(*_cells(row).values())
    console.print(table)


def _blocks(rows: list[RunRow], console: Console) -> None:
    for row in rows:
        c = _cells(row)
        console.print(f"[bold]{c['run']}[/]  {c['status']}  {c['started (UTC)']}", soft_wrap=True)
        unsupported = f"{_pct(row.answers_with_unsupported_claim)} of {row.answers_with_claims or 0}"
        console.print(
            f"  answers {c['answers']} · groundedness {c['groundedness']} claims · "
            f"unsupported in {unsupported} answers{_undecided(row)}"
        )
        console.print(f"  {c['judge']} · policy {c['policy']} · {c['inputs']}")


@click.command("report")
@click.option("--run", "run_id", required=True, help="The run's id (a unique prefix is enough).")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Where to write the HTML report.",
)
@db_option
def report_command(run_id: str, output: Path, db_url: str | None) -> None:
    """Re-render the HTML report of a stored run."""
    from auditor.cli.output import check_outputs, plain
    from auditor.report import render_stored_run

    check_outputs(o=output)
    written = render_stored_run(run_id, output, db_url)
    click.echo(plain(f"Wrote {written}"))
