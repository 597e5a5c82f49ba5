"""``auditor reaudit``: a stored run's answers judged again under another policy or judge."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import click

from auditor.cli.audit import address_option, engine_option, workers_option
from auditor.cli.options import (
    base_url_option,
    cache_option,
    calibration_option,
    cascade_option,
    concurrency_option,
    db_option,
    decomposer_option,
    labels_option,
    rate_limit_option,
    rate_per_second,
    report_option,
)
from auditor.settings import setting


@click.command("reaudit")
@click.option(
    "--run", "run_id", required=True, help="The stored run to re-judge (a unique prefix is enough)."
)
@click.option(
    "--policy",
    "policy_name",
    metavar="FILE|NAME",
    default=None,
    help="Judge under this policy (a TOML file or a shipped name). Default: the run's own, as stored.",
)
@click.option(
    "--judge",
    "judge_spec",
    metavar="SPEC",
    default=None,
    help="offline or openai:MODEL. Default: the run's own judge (kind and model).",
)
@base_url_option
@decomposer_option
@cascade_option
@cache_option
@concurrency_option
@rate_limit_option
@labels_option
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the result as JSON (as `auditor audit --json`) to this file, or - for stdout.",
)
@report_option
@db_option
@click.option(
    "--resume/--no-resume",
    default=True,
    show_default=True,
    help="Continue an interrupted re-audit of the same run, policy and judge.",
)
@calibration_option
@engine_option
@address_option
@workers_option
@click.option("-q", "--quiet", is_flag=True, help="No progress and no per-answer detail: the summary only.")
@click.option("-v", "--verbose", is_flag=True, help="Every answer's claims, not only those with problems.")
@click.pass_context
def reaudit_command(
    ctx: click.Context,
    run_id: str,
    policy_name: str | None,
    judge_spec: str | None,
    base_url: str | None,
    decomposer: Literal["rules", "llm", "fused"],
    cascade: bool,
    cache: bool,
    concurrency: int,
    rate_limit: str | None,
    labels_path: Path | None,
    json_path: Path | None,
    report_path: Path | None,
    db_url: str | None,
    resume: bool,
    calibration: str | None,
    engine: Literal["local", "ray"],
    address: str | None,
    workers: int | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Judge the answers of a stored run again, from the traces the store kept (no files needed).

    The re-audit is a new stored run with its own id, recording the run it re-judged. Without
    --policy it uses the run's stored policy, without --judge the run's judge: pass one of them to
    change only that. Output and exit status are those of `auditor audit` (0 ran, 2 usage or
    input errors, 3 some claims unjudged, 4 some traces with model calls yielded no answer,
    130 interrupted).
    """
    from rich.console import Console

    from auditor.cli.audit import finish_command
    from auditor.cli.interrupt import EXIT_INTERRUPTED, command_line, print_interrupted, saved_answers
    from auditor.cli.output import check_outputs
    from auditor.cli.progress import Tracker, progress_reporter
    from auditor.metrics import load_labels
    from auditor.policy import load_policy
    from auditor.run import AuditOptions, reaudit, stored_policy

    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose contradict each other; choose one.")
    check_outputs(json=json_path, report=report_path)
    policy = load_policy(policy_name) if policy_name is not None else stored_policy(run_id, db_url)
    # The options, built once from the flags and the settings, travel whole from here on (a
    # judge of None is the run's own).
    options = AuditOptions(
        policy=policy,
        judge=judge_spec,
        base_url=setting("base_url", base_url),
        decomposer=decomposer,
        cascade=cascade,
        cache=cache,
        concurrency=concurrency,
        rate_limit=rate_per_second(rate_limit),
        labels=load_labels(labels_path) if labels_path else None,
        calibration=calibration,
        db_url=db_url,
        resume=resume,
    )
    err = Console(stderr=True)
    tracker = Tracker()
    try:  # the bar is closed before the message, so the message stays on screen
        with progress_reporter(err, enabled=not quiet, tracker=tracker) as on_progress:
            if engine == "ray":  # the kept traces as shards on a Ray cluster (docs/scale.md)
                from auditor.scale import reaudit_on_ray

                result = reaudit_on_ray(
                    run_id, options, on_progress=on_progress, address=address, workers=workers
                )
            else:
                result = reaudit(run_id, options, on_progress=on_progress)
    except KeyboardInterrupt:
        print_interrupted(tracker, command_line(ctx), err, stored=True, saved=saved_answers(tracker, db_url))
        sys.exit(EXIT_INTERRUPTED)
    finish_command(
        result,
        policy,
        err,
        json_path=json_path,
        report_path=report_path,
        stored=True,
        labels_path=labels_path,
        quiet=quiet,
        verbose=verbose,
    )
