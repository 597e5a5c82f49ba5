"""``auditor inspect``: what was read from each span of some traces, to see why a framework is misread."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.options import format_option, policy_option, traces_argument
from auditor.settings import setting

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.evidence import Inspection, SpanReading

_CLIP = 160


def _span_lines(span: SpanReading) -> list[str]:
    from auditor.cli.output import shown
    from auditor.text import clip

    def text(value: str) -> str:
        return shown(clip(" ".join(value.split()), _CLIP))

    lines = [
        f"[bold]{shown(span.name)}[/]  [dim]{shown(span.span_id)}[/]  read as [cyan]{shown(span.read_as)}[/]"
        f"  attributes of {shown(span.attributes_of)}"
        + (f"  [dim]model call: {shown(span.model_call)}[/]" if span.model_call else "")
    ]
    say = lines.append
    for prompt in span.system_prompts:
        say(f"    system prompt: {text(prompt)}")
    if span.question:
        say(f"    question: {text(span.question)}")
    if span.tool_calls_requested:
        say(f"    asks for tool calls: {shown(', '.join(span.tool_calls_requested))}")
    if span.tool:
        args = "" if span.tool.arguments in (None, "", {}) else f" arguments {text(str(span.tool.arguments))}"
        error = " [red](error)[/]" if span.tool.error else ""
        say(f"    tool {shown(span.tool.name)}{args}{error}")
        say(f"    tool result: {text(span.tool.result) if span.tool.result else '[red](none read)[/]'}")
    for document in span.documents:
        say(f"    document: {text(document)}")
    if span.answer:
        say(f"    [green]answer:[/] {text(span.answer)}")
    elif span.output:
        say(f"    output (not an answer): {text(span.output)}")
    for problem in span.problems:
        say(f"    [red]problem:[/] {shown(problem)}")
    return lines


def print_inspection(inspection: Inspection, console: Console) -> None:
    """Each trace, then each of its spans with what was read from it; problems where they belong."""
    from auditor.cli.output import shown

    for trace in inspection.traces:
        console.rule(
            shown(
                f"trace {trace.trace_id}  {trace.source_format or '?'} / {trace.convention or 'no convention'}"
                f"  {trace.answers} answer(s)"
            )
        )
        lines: list[str] = [f"[red]problem:[/] {shown(p)}" for p in trace.problems]
        for span in trace.spans:
            lines.extend(_span_lines(span))
        console.print("\n".join(lines))
    for problem in inspection.problems:
        console.print(f"[red]problem:[/] {shown(problem)}")
    answers = sum(t.answers for t in inspection.traces)
    console.print(f"\n{len(inspection.traces)} trace(s), {answers} answer(s).")


@click.command("inspect")
@traces_argument
@format_option
@policy_option
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the inspection as JSON to this file, or - for stdout.",
)
def inspect_command(
    traces: tuple[Path, ...], format_: str | None, policy_name: str | None, json_path: Path | None
) -> None:
    """Show, span by span, what was read from TRACES: the convention of its attributes, the kind it
    was read as, and the question, answer, tool call and result, system prompts and documents taken
    from it, with the problems recorded for it. Attach the output to a bug report when a
    framework's traces are misread."""
    from rich.console import Console

    from auditor.cli.output import check_outputs, listing_console, shown
    from auditor.pipeline import inspect_paths
    from auditor.policy import load_policy
    from auditor.text import json_printable

    check_outputs(json=json_path)
    inspection = inspect_paths(list(traces), format_, load_policy(setting("policy", policy_name)))
    if json_path is not None and str(json_path) == "-":
        click.echo(json_printable(inspection.to_json()), nl=False)
        return
    print_inspection(inspection, listing_console())
    if json_path is not None:
        json_path.write_text(inspection.to_json(), encoding="utf-8")
        Console(stderr=True).print(f"Wrote {shown(str(json_path))}")
