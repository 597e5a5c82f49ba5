"""``auditor audit``: claims and verdicts for every answer in some traces."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from auditor.cli.options import (
    base_url_option,
    cache_option,
    cascade_option,
    concurrency_option,
    db_option,
    format_option,
    judge_option,
    labels_option,
    policy_option,
    report_option,
    traces_argument,
)
from auditor.settings import setting

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.results import AuditResult

#: ``auditor audit`` exits with this when it ran but some claims could not be judged.
EXIT_UNJUDGED = 3

_COLOURS = {"supported": "green", "contradicted": "red", "absent": "yellow", "unjudged": "magenta"}


def print_audit(result: AuditResult, console: Console) -> None:
    from rich.markup import escape

    from auditor.calibration import describe
    from auditor.metrics import Summary

    judge = result.run.judge
    if judge is not None and judge.approximate:
        console.print(
            "[bold yellow]Judge: offline (approximate: surface cues, not a model; "
            "calibrate before quoting figures).[/]"
        )
    for answer in result.answers:
        console.rule(f"answer {answer.answer_id}  trace {answer.trace_id[:16]}")
        console.print(f"[bold]Q:[/] {escape(answer.question or '(no question found)')}")
        console.print(f"[bold]A:[/] {escape(answer.text)}")
        if answer.refusal:
            console.print("  [cyan]refusal[/] (no claims to judge)")
        for claim in answer.claims or []:
            if claim.screened:
                console.print(f"  [dim]- screened ({claim.screen_reason}): {escape(claim.text)}[/]")
                continue
            verdict = claim.verdict or "-"
            colour = _COLOURS.get(verdict, "white")
            console.print(f"  [{colour}]{verdict:<12}[/] {escape(claim.text)}")
            for cite in claim.citations:
                console.print(f'      [dim]{cite.evidence_id}: "{escape(cite.quote)}"[/]')
            if claim.inadmissible_support:
                console.print(
                    f"      [red]rests only on excluded evidence: {', '.join(claim.inadmissible_support)}[/]"
                )
            if claim.unjudged_reason:
                console.print(f"      [magenta]unjudged: {claim.unjudged_reason}[/]")
            elif claim.rationale:
                console.print(f"      [dim]{escape(claim.rationale)}[/]")
        if answer.groundedness is not None:
            console.print(
                f"  groundedness {answer.groundedness:.2f}, contradicted {answer.contradicted}, "
                f"unjudged {answer.unjudged}: {'grounded' if answer.grounded else 'NOT grounded'}"
            )
    s = result.summary
    rate = s["groundedness_rate"]
    share = s["answers_with_unsupported_claim"]
    console.rule("summary")
    console.print(
        f"policy {result.run.policy.name if result.run.policy else '-'} "
        f"({result.run.policy.sha256[:12] if result.run.policy else ''}), "
        f"judge {judge.kind if judge else '-'}{':' + judge.model if judge and judge.model else ''}"
    )
    console.print(
        f"groundedness rate: {_ratio(rate)} supported / judged claims "
        f"(screened out: {s['screened']}, unjudged: {s['unjudged']})"
    )
    console.print(
        f"answers with an unsupported claim: {_ratio(share)}; refusals: {s['refusals']} of {s['answers']}"
    )
    corrected = Summary.model_validate(s).corrected_unsupported
    if corrected is not None:
        console.print(escape(describe(corrected)))


def _ratio(figure: dict[str, float | int | None]) -> str:
    value = figure["value"]
    shown = "n/a" if value is None else f"{value:.1%}"
    return f"{shown} ({figure['numerator']}/{figure['denominator']})"


@click.command("audit")
@traces_argument
@format_option
@policy_option
@judge_option
@base_url_option
@click.option(
    "--decomposer",
    type=click.Choice(["rules", "llm", "fused"]),
    default="rules",
    show_default=True,
    help="How answers are split into claims; fused: one LLM call decomposes and judges together.",
)
@cascade_option
@cache_option
@concurrency_option
@click.option("--trace-id", default=None, help="Only answers from this trace (a unique prefix is enough).")
@labels_option
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the result as JSON (see README, 'The JSON result') to this file, or - for stdout.",
)
@report_option
@db_option
@click.option("--store/--no-store", default=True, show_default=True, help="Record the run in the store.")
@click.option(
    "--resume/--no-resume",
    default=True,
    show_default=True,
    help="Continue an interrupted run on the same inputs, policy and judge.",
)
def audit_command(
    traces: tuple[Path, ...],
    format_: str | None,
    policy_name: str | None,
    judge_spec: str | None,
    base_url: str | None,
    decomposer: Literal["rules", "llm", "fused"],
    cascade: bool,
    cache: bool,
    concurrency: int,
    trace_id: str | None,
    labels_path: Path | None,
    json_path: Path | None,
    report_path: Path | None,
    db_url: str | None,
    store: bool,
    resume: bool,
) -> None:
    """Split every answer in TRACES into claims and judge each against admitted evidence.

    Exit status: 0 when the audit ran (whatever the verdicts), 2 for usage or input errors,
    3 when it ran but some claims could not be judged (they are `unjudged`, never supported).
    """
    from rich.console import Console

    from auditor.audit import audit
    from auditor.cli.evidence import print_problems
    from auditor.cli.progress import progress_reporter
    from auditor.metrics import load_labels
    from auditor.policy import load_policy
    from auditor.report import write_report

    policy = load_policy(setting("policy", policy_name))
    err = Console(stderr=True)
    with progress_reporter(err) as on_progress:
        result = audit(
            list(traces),
            policy=policy,
            judge=setting("judge", judge_spec) or "offline",
            base_url=setting("base_url", base_url),
            cascade=cascade,
            cache=cache,
            decomposer=decomposer,
            format=format_,
            trace_id=trace_id,
            concurrency=concurrency,
            labels=load_labels(labels_path) if labels_path else None,
            db_url=db_url,
            store=store,
            resume=resume,
            on_progress=on_progress,
        )
    if json_path is not None and str(json_path) == "-":
        click.echo(result.to_json(), nl=False)
    else:
        print_audit(result, Console())
        if json_path is not None:
            json_path.write_text(result.to_json(), encoding="utf-8")
            err.print(f"Wrote {json_path}")
    if report_path is not None:
        write_report(result, report_path, policy_rationale=policy.rationale)
        err.print(f"Wrote {report_path}")
    if store:
        err.print(f"Run {result.run.id} stored (auditor report --run {result.run.id[:12]} -o report.html)")
    print_problems(result, err)
    if result.summary["unjudged"]:
        sys.exit(EXIT_UNJUDGED)
