"""``auditor adapters`` and ``auditor evidence``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.options import format_option, policy_option, traces_argument
from auditor.settings import setting

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.results import AnswerOut, AuditResult


@click.command("adapters")
def adapters_command() -> None:
    """List the installed trace adapters."""
    from auditor.trace import broken_adapters, installed_adapters

    found = installed_adapters()
    if not found:
        click.echo("No adapters installed: pip install auditor-otel auditor-langchain")
    for item in found:
        click.echo(f"{item.name:<12} {item.distribution:<20} {item.adapter.description}")
    for name, error in broken_adapters().items():
        click.echo(f"{name:<12} failed to load: {error}", err=True)


def print_problems(result: AuditResult, console: Console) -> None:
    from auditor.cli.output import shown

    problems = result.run.problems
    if not problems:
        return
    console.print(f"[yellow]{len(problems)} problem(s) in the input (skipped or repaired):[/]")
    for p in problems[:50]:
        where = p.file if p.line is None else f"{p.file}:{p.line}"
        console.print(f"  {shown(where)}: {shown(p.severity)}: {shown(p.reason)}")
    if len(problems) > 50:
        console.print(f"  … and {len(problems) - 50} more (all are in the --json output)")
    if result.run.unanswered_traces:
        console.print(
            f"[bold red]{result.run.unanswered_traces} trace(s) hold model calls but yielded no answer: "
            "the run is incomplete (exit status 4). `auditor inspect FILE` shows what was read from each span.[/]"
        )


def answer_rule(answer: AnswerOut, console: Console, *, span: bool = False) -> list[str]:
    """Print the line that opens one answer (its id and trace, and span), terminal-safe; return its
    question and answer lines, for the caller to print with the rest of the answer in one call
    (rich's cost is mostly per call: two calls an answer fewer took a tenth off a dev-set listing)."""
    from auditor.cli.output import shown

    title = f"answer {answer.answer_id}  trace {answer.trace_id[:16]}"
    console.rule(shown(title + (f"  span {answer.span_id[:16]}" if span else "")))
    return [
        f"[bold]Q:[/] {shown(answer.question or '(no question found)', multiline=True)}",
        f"[bold]A:[/] {shown(answer.text, multiline=True)}",
    ]


def print_evidence(result: AuditResult, console: Console, *, footer: bool = True) -> None:
    from auditor.cli.output import shown
    from auditor.text import clip

    for answer in result.answers:
        lines = answer_rule(answer, console, span=True)
        say = lines.append
        say(f"[bold]Evidence ({len(answer.evidence)}):[/]")
        for number, item in enumerate(answer.evidence, 1):
            side = (
                ""
                if item.admitted is None
                else ("[green]admitted[/] " if item.admitted else "[red]excluded[/] ")
            )
            name = f" {item.name}" if item.name else ""
            say(
                f" {number:>2}. {side}[cyan]{item.kind.value}[/]{shown(name)}  [dim]{shown(item.evidence_id)}[/]"
            )
            if item.hop_path:
                say(f"     path: {shown(' -> '.join(item.hop_path))}")
            if item.reason:
                say(f"     {shown(item.reason)}")
            say(f"     [dim]{shown(clip(' '.join(item.text.split()), 160))}[/]")
        console.print("\n".join(lines))  # one print an answer: rich's cost is mostly per call
    if footer:
        console.print(
            f"\n{len(result.answers)} answer(s) from {sum(i.traces for i in result.run.inputs)} trace(s)."
            + (
                f" [bold red]{result.run.unanswered_traces} trace(s) with model calls yielded no answer.[/]"
                if result.run.unanswered_traces
                else ""
            )
        )


@click.command("evidence")
@traces_argument
@format_option
@policy_option
@click.option("--trace-id", default=None, help="Only answers from this trace (a unique prefix is enough).")
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the result as JSON (the public contract in the README) to this file, or - for stdout.",
)
def evidence_command(
    traces: tuple[Path, ...],
    format_: str | None,
    policy_name: str | None,
    trace_id: str | None,
    json_path: Path | None,
) -> None:
    """Find every answer in TRACES and the evidence it could have drawn on.

    Exit status: 0 when it ran, 2 for usage or input errors, 4 when it ran but some traces hold
    model calls from which no answer was read (each is named in the problems).
    """
    from rich.console import Console

    from auditor.cli.output import check_outputs, listing_console, shown
    from auditor.pipeline import collect_evidence
    from auditor.policy import load_policy
    from auditor.text import json_printable

    check_outputs(json=json_path)
    result = collect_evidence(list(traces), format_, trace_id, load_policy(setting("policy", policy_name)))
    err = Console(stderr=True)
    if json_path is not None and str(json_path) == "-":
        click.echo(json_printable(result.to_json()), nl=False)
    else:
        print_evidence(result, listing_console())
        if json_path is not None:
            json_path.write_text(result.to_json(), encoding="utf-8")
            err.print(f"Wrote {shown(str(json_path))}")
    print_problems(result, err)
    if result.run.unanswered_traces:
        from auditor.cli.output import EXIT_INCOMPLETE

        sys.exit(EXIT_INCOMPLETE)
