"""``auditor gate``: the release gate over a golden run, for CI.

Exit status: 0 the gate passed, 1 it failed, 2 it could not run (unreadable input, a bad policy or
labels file, a usage error). The command handles its own errors so that no exit path shows a
traceback, whichever group it is registered in.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.options import (
    base_url_option,
    calibration_option,
    db_option,
    format_option,
    judge_option,
    rate_limit_option,
    rate_per_second,
    report_option,
)
from auditor.errors import AuditorError
from auditor.settings import setting

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.gate import GateDecision, GateRun

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_COULD_NOT_RUN = 2


def print_decision(run: GateRun, console: Console) -> None:
    """The short verdict: every figure with its denominator and intervals, and the failing answers."""
    from auditor.calibration import describe as describe_correction
    from auditor.cli.output import shown
    from auditor.gate import describe_rate

    decision: GateDecision = run.decision
    result = run.result
    policy = result.run.policy
    judge = result.run.judge
    verdict = "[bold green]GATE PASSED[/]" if decision.passed else "[bold red]GATE FAILED[/]"
    judge_name = f"{judge.kind}{':' + judge.model if judge.model else ''}" if judge else "-"
    console.print(
        f"{verdict}  policy {shown(policy.name if policy else '-')} "
        f"({policy.sha256[:12] if policy else ''}), judge {shown(judge_name)}"
        + (" (approximate)" if judge and judge.approximate else "")
    )
    for check in decision.checks:
        mark = "[green]pass[/]" if check.passed else "[red]FAIL[/]"
        console.print(f"  {mark}  {shown(check.detail)}")
    s = decision.summary
    console.print(
        f"  groundedness rate {describe_rate(s.groundedness_rate, 'judged claims')}; "
        f"answers with an unsupported claim {describe_rate(s.answers_with_unsupported_claim, 'answers')}"
    )
    console.print(
        f"  answers {s.answers}, refusals {s.refusals}, screened-out sentences {s.screened}, "
        f"unjudged claims {s.unjudged}, answers the judge could not decide {s.undecided_answers}"
    )
    corrected = s.corrected_unsupported
    if corrected is not None:
        console.print(f"  {shown(describe_correction(corrected))}")
        if corrected.domain_note and corrected.domain_fits is False:
            console.print(f"  [yellow]warning: {shown(corrected.domain_note)}.[/]")
    failed = [c for c in decision.answers if c.status == "failed"]
    for case in failed[:20]:
        console.print(f"  [red]x[/] {shown(case.answer_id)}: {shown('; '.join(case.reasons))}")
        for text in case.contradicted:
            console.print(f"      contradicted: {shown(text)}")
        for text in case.unsupported:
            console.print(f"      unsupported: {shown(text)}")
        for text in case.conflicted:
            console.print(f"      conflicting sources: {shown(text)}")
    if len(failed) > 20:
        console.print(f"  ... and {len(failed) - 20} more failed answers (see --junit / --report)")


def decision_json(run: GateRun) -> str:
    """``gate --json``: the decision with the run it was made on (policy, judge, stored id)."""
    import json

    document = {
        "passed": run.decision.passed,
        "run_id": run.run_id,
        "policy": run.result.run.policy.model_dump(mode="json") if run.result.run.policy else None,
        "judge": run.result.run.judge.model_dump(mode="json") if run.result.run.judge else None,
        **run.decision.model_dump(mode="json", exclude={"passed"}),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


@click.command("gate")
@click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--policy",
    "policy_name",
    metavar="FILE|NAME",
    default=None,
    help="Admissible-source policy with the gate's thresholds: a TOML file or a shipped name.",
)
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Golden labels (JSONL): adds refusal accuracy and over-refusal checks.",
)
@click.option(
    "--junit",
    "junit_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write JUnit XML here (one test case per answer).",
)
@report_option
@judge_option
@base_url_option
@rate_limit_option
@db_option
@format_option
@calibration_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the decision as JSON on stdout (passed, run, checks, answers, summary); same exit status.",
)
def gate_command(
    traces: tuple[Path, ...],
    policy_name: str | None,
    labels_path: Path | None,
    junit_path: Path | None,
    report_path: Path | None,
    judge_spec: str | None,
    base_url: str | None,
    rate_limit: str | None,
    db_url: str | None,
    format_: str | None,
    calibration: str | None,
    as_json: bool,
) -> None:
    """Audit a golden run in TRACES and apply the policy's release thresholds.

    Fails on any contradicted or unjudged claim whatever the ratio ("cannot tell" fails closed).
    Exit status: 0 passed, 1 failed, 2 could not run.
    """
    from rich.console import Console

    from auditor.cli.audit import print_unjudged, warn_unmatched_labels
    from auditor.cli.output import check_outputs, shown
    from auditor.gate import run_gate
    from auditor.metrics import load_labels
    from auditor.policy import load_policy
    from auditor.text import json_printable

    err = Console(stderr=True)
    try:
        from auditor.trace import expand_inputs

        traces = tuple(expand_inputs(traces))  # directories and glob patterns, sorted
        for path in traces:
            if not path.is_file():
                raise AuditorError(f"{path}: no such file.")
        check_outputs(junit=junit_path, report=report_path)
        policy = load_policy(setting("policy", policy_name))
        labels = load_labels(labels_path) if labels_path is not None else None
        run = run_gate(
            list(traces),
            policy,
            judge=setting("judge", judge_spec) or "offline",
            base_url=setting("base_url", base_url),
            rate_limit=rate_per_second(rate_limit),
            labels=labels,
            db_url=db_url,
            format=format_,
            calibration=calibration,
        )
        if as_json:
            click.echo(json_printable(decision_json(run)))
        else:
            print_decision(run, Console(highlight=False, soft_wrap=True))
        if junit_path is not None:
            from auditor.gate import write_junit

            write_junit(run.decision, run.result, junit_path)
            err.print(f"Wrote {shown(str(junit_path))}")
        if report_path is not None:
            from auditor.report import write_report

            write_report(run.result, report_path)
            err.print(f"Wrote {shown(str(report_path))}")
        if run.run_id is not None:
            err.print(f"Stored run {run.run_id}")
        print_unjudged(run.result, err)
        if labels_path is not None:
            warn_unmatched_labels(run.result, labels_path, err)
    except (AuditorError, OSError) as exc:
        err.print(f"[red]auditor gate could not run:[/] {shown(str(exc), multiline=True)}", soft_wrap=True)
        sys.exit(EXIT_COULD_NOT_RUN)
    except Exception as exc:  # the contract: exit 2 with a message, never a traceback
        err.print(
            f"[red]auditor gate could not run ({type(exc).__name__}):[/] {shown(str(exc), multiline=True)}"
        )
        sys.exit(EXIT_COULD_NOT_RUN)
    sys.exit(EXIT_PASSED if run.decision.passed else EXIT_FAILED)
