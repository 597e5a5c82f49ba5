"""``auditor show`` and ``auditor export``: a stored run in the terminal, or as rows for other tools."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import click

from auditor.cli.options import db_option


@click.command("show")
@click.argument("run_id", metavar="RUN")
@click.option(
    "--answer",
    "answer_id",
    default=None,
    help="Show this answer in full, with its evidence (a unique prefix is enough).",
)
@click.option("-v", "--verbose", is_flag=True, help="Every answer's claims, not only those with problems.")
@db_option
def show_command(run_id: str, answer_id: str | None, verbose: bool, db_url: str | None) -> None:
    """Show a stored run in the terminal, or one of its answers in full.

    Prints the answers with problems (all with --verbose) and the summary.

    RUN is a run id from `auditor runs` (a unique prefix is enough).
    """
    from rich.console import Console

    from auditor.cli.audit import print_audit
    from auditor.cli.evidence import print_evidence
    from auditor.cli.output import shown
    from auditor.errors import UsageError
    from auditor.store import read_run

    result = read_run(run_id, db_url)
    console = Console(highlight=False)
    if answer_id is not None:
        wanted = answer_id.strip()
        found = [a for a in result.answers if wanted and a.answer_id.startswith(wanted)]
        if len(found) != 1:
            what = "no answer" if not found else f"{len(found)} answers"
            raise UsageError(
                f"run {result.run.id}: {what} with an id starting {answer_id!r}; "
                f"`auditor show {result.run.id}` lists its answers with problems (-v: all)."
            )
        one = result.model_copy(update={"answers": found})
        print_audit(one, console, "all", summary=False)
        print_evidence(one, console, footer=False)
        return
    run = result.run
    judge = f"{run.judge.kind}{':' + run.judge.model if run.judge.model else ''}" if run.judge else "-"
    inputs = ", ".join(Path(i.path).name for i in run.inputs) or "-"
    console.print(
        shown(f"run {run.id} started {run.started_at:%Y-%m-%d %H:%M} UTC; judge {judge}; inputs {inputs}"),
        soft_wrap=True,
    )
    if not result.summary:  # an interrupted (or still running) run has answers but no summary yet
        print_audit(result, console, "all" if verbose else "problems", summary=False)
        console.print(
            f"[yellow]{len(result.answers)} answer(s) saved and no summary: the run did not finish "
            "(`auditor runs` shows its status; `auditor audit` on the same inputs resumes it).[/]",
            soft_wrap=True,
        )
        return
    print_audit(result, console, "all" if verbose else "problems")


@click.command("export")
@click.argument("run_id", metavar="RUN")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["jsonl", "csv", "parquet"]),
    default="jsonl",
    show_default=True,
    help="JSON Lines, CSV (lists as JSON arrays), or Parquet (needs the parquet extra: pyarrow).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=Path("-"),
    show_default=True,
    help="The file to write, or - for stdout (jsonl and csv).",
)
@db_option
def export_command(run_id: str, format_: str, output: Path, db_url: str | None) -> None:
    """Export a stored run as rows (one per claim) in JSON Lines, CSV or Parquet.

    Each row holds the claim's answer, verdict, quotes, evidence ids and source classes; an answer
    with no claim is one row. RUN is a run id from `auditor runs` (a unique prefix is enough).
    """
    import sys
    from typing import cast

    from auditor.cli.output import check_outputs, plain
    from auditor.results import ExportFormat
    from auditor.store import export_run

    check_outputs(output=output)
    fmt = cast(ExportFormat, format_)
    if str(output) == "-":
        if fmt == "parquet":
            raise click.UsageError("--format parquet writes a binary file: name it with -o FILE.")
        export_run(run_id, _TerminalSafe(sys.stdout, csv=fmt == "csv"), fmt, db_url)
        return
    rows = export_run(run_id, output, fmt, db_url)
    click.echo(plain(f"Wrote {rows} row(s) to {output}"), err=True)


class _TerminalSafe:
    """Stdout for an export: trace text must not drive the terminal.

    JSON Lines get DEL, C1 controls and bidi marks as ``\\uXXXX`` (the same data). CSV cells already
    show control characters (:func:`auditor.results.write_rows`); on a terminal its CR-LF row ends
    become newlines.
    """

    def __init__(self, stream: TextIO, *, csv: bool) -> None:
        self._stream = stream
        self._csv = csv
        self._tty = stream.isatty()

    def write(self, text: str) -> int:
        from auditor.text import json_printable, printable

        if not self._csv:
            text = json_printable(text)
        elif self._tty:
            text = printable(text.replace("\r\n", "\n"), keep_newlines=True)
        return self._stream.write(text)
