"""``auditor runs`` and ``auditor report``: past runs in the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.options import db_option

if TYPE_CHECKING:
    pass


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


@click.command("runs")
@db_option
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
def runs_command(db_url: str | None, limit: int) -> None:
    """List past runs: time, inputs, policy hash, judge and the headline figures."""
    from rich.console import Console
    from rich.table import Table

    from auditor.cli.output import shown
    from auditor.report import list_runs

    rows = list_runs(db_url, limit)
    if not rows:
        click.echo("No runs stored yet: run `auditor audit`.")
        return
    table = Table(
        "run",
        "started (UTC)",
        "status",
        "inputs",
        "policy",
        "judge",
        "answers",
        "groundedness",
        "with unsupported claim",
        expand=False,
    )
    for row in rows:
        judge = "-"
        if row.judge is not None:
            judge = row.judge.kind + (f":{row.judge.model}" if row.judge.model else "")
        policy = f"{row.policy.name} {row.policy.sha256[:10]}" if row.policy else "-"
        first = Path(row.inputs[0].path).name if row.inputs else "-"
        inputs = first if len(row.inputs) <= 1 else f"{first} +{len(row.inputs) - 1}"
        table.add_row(
            row.id[:8],
            row.started_at.strftime("%Y-%m-%d %H:%M"),
            shown(row.status),
            shown(inputs),
            shown(policy),
            shown(judge),
            str(row.answers_saved),
            f"{_pct(row.groundedness_rate)} of {row.judged_claims or 0}",
            f"{_pct(row.answers_with_unsupported_claim)} of {row.answers_with_claims or 0}",
        )
    Console().print(table)


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
