"""``auditor calibrate``: measure a judge against human labels and store the calibration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from auditor.cli.options import (
    base_url_option,
    cache_option,
    cascade_option,
    concurrency_option,
    db_option,
    policy_option,
)
from auditor.settings import setting

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.calibration import Calibration, LevelReport
    from auditor.metrics import Rate


def _rate(figure: Rate) -> str:
    if figure.value is None:
        return "n/a (0 items)"
    interval = f" [{figure.wilson.low:.2f}-{figure.wilson.high:.2f}]" if figure.wilson else ""
    return f"{figure.value:.3f}{interval} ({figure.numerator}/{figure.denominator})"


def _level(report: LevelReport, console: Console) -> None:
    from rich.table import Table

    console.rule(f"{report.level} level: {report.items} items from {report.records} records")
    table = Table("human \\ judge", *report.three_way.labels, title="three verdicts")
    for label, row in zip(report.three_way.labels, report.three_way.counts, strict=True):
        table.add_row(label, *(str(n) for n in row))
    console.print(table)
    binary = Table("human \\ judge", *report.binary.labels, title="unsupported vs supported")
    for label, row in zip(report.binary.labels, report.binary.counts, strict=True):
        binary.add_row(label, *(str(n) for n in row))
    console.print(binary)
    for name, kappa in (("kappa (3 verdicts)", report.kappa), ("kappa (binary)", report.kappa_binary)):
        shown = "undefined" if kappa.value is None else f"{kappa.value:.3f}"
        if kappa.low is not None and kappa.high is not None:
            shown += f" [{kappa.low:.3f}-{kappa.high:.3f}]"
        console.print(f"{name}: {shown}")
    console.print(f"agreement (3 verdicts): {_rate(report.agreement)}")
    console.print(f"agreement (binary): {_rate(report.agreement_binary)}")
    console.print(f"sensitivity for unsupported: {_rate(report.sensitivity)}")
    console.print(f"specificity for unsupported: {_rate(report.specificity)}")
    unmapped = report.unmapped
    console.print(
        f"not mapped: records {unmapped.records or 0}, judge claims {unmapped.claims or 0}, "
        f"labelled spans {unmapped.labelled_spans}"
    )


def print_calibration(calibration: Calibration, console: Console) -> None:
    from auditor.cli.output import shown

    judge = calibration.judge
    policy = calibration.policy.name if calibration.policy else "-"
    console.print(
        f"[bold]{shown(calibration.label)}[/]: judge {shown(judge.kind)} model={shown(str(judge.model))} "
        f"prompt={shown(str(judge.prompt_version))}; policy {shown(policy)}; {calibration.records} records"
    )
    datasets, task_types = calibration.domain
    console.print(
        f"measured on datasets {shown(', '.join(datasets) or 'not recorded')}; "
        f"task types {shown(', '.join(task_types) or 'not recorded')}",
        soft_wrap=True,
    )
    for note in calibration.notes:
        console.print(f"[yellow]{shown(note)}[/]")
    _level(calibration.claim, console)
    _level(calibration.answer, console)


@click.command("calibrate")
@click.argument("labelled", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--judge",
    "judge_spec",
    metavar="SPEC",
    default=None,
    help="offline (default) or openai:MODEL: the judge to measure.",
)
@policy_option
@base_url_option
@click.option("--decomposer", type=click.Choice(["rules", "llm"]), default="rules", show_default=True)
@cascade_option
@cache_option
@concurrency_option
@db_option
@click.option(
    "--store/--no-store", default=True, show_default=True, help="Save the calibration in the store."
)
@click.option(
    "--name",
    default=None,
    help="How reports and the console name this calibration. Default: the labelled file's name.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the calibration as JSON to this file, or - for stdout.",
)
def calibrate_command(
    labelled: Path,
    judge_spec: str | None,
    policy_name: str | None,
    base_url: str | None,
    decomposer: Literal["rules", "llm"],
    cascade: bool,
    cache: bool,
    concurrency: int,
    db_url: str | None,
    store: bool,
    name: str | None,
    json_path: Path | None,
) -> None:
    """Measure a judge against the human labels in LABELLED and store the calibration.

    LABELLED is JSONL: id, question, sources, answer, and labels (unsupported spans of the answer) or,
    for one-claim records (unit "claim"), a verdict. See docs/calibration.md.
    """
    from rich.console import Console

    from auditor.cli.output import check_outputs, shown
    from auditor.policy import load_policy
    from auditor.run import calibrate

    check_outputs(json=json_path)
    calibration = calibrate(
        labelled,
        judge=setting("judge", judge_spec) or "offline",
        policy=load_policy(setting("policy", policy_name)),
        base_url=setting("base_url", base_url),
        cascade=cascade,
        cache=cache,
        decomposer=decomposer,
        concurrency=concurrency,
        db_url=db_url,
        store=store,
        name=name,
    )
    if json_path is not None and str(json_path) == "-":
        click.echo(calibration.model_dump_json(indent=2))
        return
    console = Console()
    print_calibration(calibration, console)
    if json_path is not None:
        json_path.write_text(calibration.model_dump_json(indent=2), encoding="utf-8")
        Console(stderr=True).print(f"Wrote {shown(str(json_path))}")
    if store:
        Console(stderr=True).print(
            f"Stored calibration {calibration.id} ({shown(calibration.display_name)}); "
            f"choose it with: auditor audit ... --calibration {calibration.id[:12]}",
            highlight=False,
            soft_wrap=True,
        )


@click.command("calibrations")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the calibrations as a JSON array (every field).")
def calibrations_command(db_url: str | None, as_json: bool) -> None:
    """List stored calibrations, newest first: the ids `--calibration ID` takes."""
    from rich.console import Console

    from auditor.cli.output import shown
    from auditor.store import list_calibrations

    found = list_calibrations(db_url)
    if as_json:
        import json

        from auditor.text import json_printable

        document = [c.model_dump(mode="json") for c in found]
        click.echo(json_printable(json.dumps(document, indent=2, ensure_ascii=False)))
        return
    if not found:
        click.echo("No calibrations stored yet: run `auditor calibrate LABELLED`.")
        return
    console = Console(highlight=False)
    for cal in found:
        datasets, task_types = cal.domain
        console.print(f"[bold]{shown(cal.id)}[/]  {shown(cal.display_name)}", soft_wrap=True)
        console.print(
            f"  {shown(cal.judge_name)} · {cal.created_at:%Y-%m-%d %H:%M} · {cal.answer.items} labelled answers"
        )
        console.print(
            f"  datasets {shown(', '.join(datasets) or '-')} · task types {shown(', '.join(task_types) or '-')}"
        )
