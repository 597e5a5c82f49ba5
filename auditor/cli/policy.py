"""``auditor policy``: check, schema, explain and diff admissible-source policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.options import base_url_option, judge_option
from auditor.settings import setting

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.metrics import Rate, VerdictDiff
    from auditor.policy import (
        AnswerExplanation,
        Policy,
        PolicyDiff,
    )


_format_option = click.option(
    "--format",
    "format_",
    metavar="NAME",
    default=None,
    help="Read the traces with this adapter instead of detecting it (see `auditor adapters`).",
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
_traces_argument = click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))


@click.group("policy")
def policy_group() -> None:
    """Check, explain and compare admissible-source policies (see docs/policy.md)."""


@policy_group.command("check")
@click.argument("policy")
def check_command(policy: str) -> None:
    """Validate POLICY (a file or a shipped name) and print its canonical hash."""
    from auditor.cli.output import plain
    from auditor.policy import load_policy

    loaded = load_policy(policy)
    click.echo(plain(f"{loaded.origin}: valid"))
    click.echo(plain(f"name     {loaded.name}"))
    click.echo(plain(f"version  {loaded.version}"))
    click.echo(f"sha256   {loaded.sha256}")
    click.echo(plain(f"sources  {', '.join(s.name for s in loaded.sources) or '(none)'}"))
    for warning in loaded.warnings:
        click.echo(plain(f"warning: {warning}"), err=True)


@policy_group.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of a policy file (for editors and CI)."""
    from auditor.policy import policy_json_schema

    click.echo(json.dumps(policy_json_schema(), indent=2))


@policy_group.command("explain")
@click.argument("policy")
@_traces_argument
@click.option("--trace-id", default=None, help="Only answers from this trace (a unique prefix is enough).")
@_format_option
@_json_option
def explain_command(
    policy: str, traces: tuple[Path, ...], trace_id: str | None, format_: str | None, as_json: bool
) -> None:
    """Show why each evidence item in TRACES is admitted or excluded under POLICY."""
    from rich.console import Console

    from auditor.pipeline import find_answers
    from auditor.policy import explain, load_policy

    loaded = load_policy(policy)
    ingested, answers = find_answers(traces, format_, loaded, trace_id)
    explained = explain(loaded, answers)
    _warn_problems(len(ingested.problems))
    if as_json:
        click.echo(json.dumps(_explain_json(loaded, explained), indent=2))
        return
    _print_explanation(loaded, explained, Console())


@policy_group.command("diff")
@click.argument("policy_a")
@click.argument("policy_b")
@_traces_argument
@_format_option
@judge_option
@base_url_option
@_json_option
def diff_command(
    policy_a: str,
    policy_b: str,
    traces: tuple[Path, ...],
    format_: str | None,
    judge_spec: str | None,
    base_url: str | None,
    as_json: bool,
) -> None:
    """Show what changes from POLICY_A to POLICY_B in TRACES: the evidence items that change side,
    the claims whose verdict changes (judged under both with --judge) and the headline figures.

    Answers are found with POLICY_A's [answers] section.
    """
    from rich.console import Console

    from auditor.policy import load_policy
    from auditor.run import compare_policies
    from auditor.text import json_printable

    a, b = load_policy(policy_a), load_policy(policy_b)
    judge = setting("judge", judge_spec) or "offline"
    result = compare_policies(
        traces, a, b, judge=judge, base_url=setting("base_url", base_url), format=format_
    )
    _warn_problems(result.problems)
    if as_json:
        document = {
            **result.evidence.model_dump(mode="json"),
            "verdicts": result.verdicts.model_dump(mode="json"),
        }
        click.echo(json_printable(json.dumps(document, indent=2, ensure_ascii=False)))
        return
    console = Console()
    _print_diff(result.evidence, console)
    _print_verdict_diff(result.verdicts, console)


def _warn_problems(count: int) -> None:
    if count:
        click.echo(f"{count} problem(s) in the input (see `auditor evidence` for the list).", err=True)


def _policy_line(policy: Policy) -> str:
    return f"{policy.name} {policy.version} (sha256 {policy.sha256[:12]}…)"


def _explain_json(policy: Policy, explained: list[AnswerExplanation]) -> dict[str, object]:
    return {
        "policy": {"name": policy.name, "version": policy.version, "sha256": policy.sha256},
        "answers": [
            {
                "answer_id": answer.answer_id,
                "trace_id": answer.trace_id,
                "question": answer.question,
                "evidence": [
                    {
                        "evidence_id": item.evidence.evidence_id,
                        "kind": item.evidence.kind.value,
                        "name": item.evidence.name,
                        **item.decision.model_dump(exclude={"evidence_id"}),
                    }
                    for item in answer.items
                ],
            }
            for answer in explained
        ],
    }


def _print_explanation(policy: Policy, explained: list[AnswerExplanation], console: Console) -> None:
    from rich.table import Table

    from auditor.cli.output import shown

    console.print(f"Policy {shown(_policy_line(policy))}")
    for answer in explained:
        title = f"answer {answer.answer_id}  trace {answer.trace_id[:16]}  ({answer.admitted}/{len(answer.items)} admitted)"
        table = Table(title=shown(title), title_justify="left", expand=True)
        table.add_column("#", justify="right")
        table.add_column("item")
        table.add_column("class")
        table.add_column("decision")
        for number, item in enumerate(answer.items, 1):
            label = item.evidence.kind.value + (f" {item.evidence.name}" if item.evidence.name else "")
            colour = "green" if item.decision.admitted else "red"
            table.add_row(
                str(number),
                f"{shown(label)}\n[dim]{shown(item.evidence.evidence_id)}[/]",
                shown(item.decision.source_class),
                f"[{colour}]{shown(item.decision.reason)}[/]",
            )
        console.print(table)
    console.print(f"{len(explained)} answer(s).")


def _print_diff(result: PolicyDiff, console: Console) -> None:
    from rich.table import Table

    from auditor.cli.output import shown

    console.print(f"A: {shown(result.a)} (sha256 {result.a_sha256[:12]}…)")
    console.print(f"B: {shown(result.b)} (sha256 {result.b_sha256[:12]}…)")
    for answer in result.answers:
        table = Table(
            title=shown(f"answer {answer.answer_id}  trace {answer.trace_id[:16]}"), title_justify="left"
        )
        table.add_column("item")
        table.add_column("under A")
        table.add_column("under B")
        for change in answer.changes:
            label = change.evidence.kind.value + (f" {change.evidence.name}" if change.evidence.name else "")
            table.add_row(
                f"{shown(label)}\n[dim]{shown(change.evidence.evidence_id)}[/]",
                shown(change.a.reason),
                shown(change.b.reason),
            )
        console.print(table)
    console.print(
        f"{result.items_changed} of {result.items_compared} evidence item(s) change side, in "
        f"{len(result.answers)} of {result.answers_compared} answer(s)."
    )


def _print_verdict_diff(result: VerdictDiff, console: Console) -> None:
    from rich.table import Table

    from auditor.cli.output import shown

    judge = result.judge
    name = f"{judge.kind}{':' + judge.model if judge.model else ''}" + (
        " (approximate)" if judge.approximate else ""
    )
    if result.changes:
        table = Table(title=shown(f"verdicts that change (judge {name})"), title_justify="left", expand=True)
        table.add_column("claim")
        table.add_column("under A")
        table.add_column("under B")
        table.add_column("evidence responsible")
        for change in result.changes:
            items = "\n".join(
                f"{shown(i.kind + (' ' + i.name if i.name else ''))} [dim]{shown(i.evidence_id)}[/]: "
                f"{'admitted' if i.admitted_a else 'excluded'} -> {'admitted' if i.admitted_b else 'excluded'}"
                + ("" if i.cited else " [dim](not cited by either verdict)[/]")
                for i in change.evidence
            )
            table.add_row(
                f"{shown(change.claim)}\n[dim]{shown(change.answer_id)}[/]",
                shown(change.a),
                shown(change.b),
                items or "[dim]none changed side (a policy switch decided)[/]",
            )
        console.print(table)
    console.print(
        f"{len(result.changes)} of {result.claims_compared} claim verdict(s) change (judge {shown(name)})."
    )
    for figure in result.figures:
        moved = "n/a" if figure.change is None else f"{figure.change * 100:+.1f} points"
        console.print(f"{figure.name.replace('_', ' ')}: {_rate(figure.a)} -> {_rate(figure.b)} ({moved})")


def _rate(rate: Rate) -> str:
    value = "n/a" if rate.value is None else f"{rate.value:.1%}"
    return f"{value} ({rate.numerator}/{rate.denominator})"
