"""``auditor audit``: claims and verdicts for every answer in some traces."""

from __future__ import annotations

import gc
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from auditor.cli.options import (
    base_url_option,
    cache_option,
    calibration_option,
    cascade_option,
    concurrency_option,
    db_option,
    decomposer_option,
    format_option,
    judge_option,
    labels_option,
    optional_traces_argument,
    policy_option,
    rate_limit_option,
    rate_per_second,
    report_option,
    source_options,
)
from auditor.judges import describe_unjudged
from auditor.settings import setting

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from auditor.policy import Policy
    from auditor.results import AnswerOut, AuditResult
    from auditor.run import AuditOptions, Progress

#: How much per-answer detail ``print_audit`` shows.
Detail = Literal["problems", "all", "none"]

_COLOURS = {"supported": "green", "contradicted": "red", "absent": "yellow", "unjudged": "magenta"}
_SUPPORTS = {True: "supports it", False: "does not support it", None: "undecided"}


def has_problem(answer: AnswerOut) -> bool:
    """An answer worth reading: not grounded (refusals aside), or a claim that is contradicted,
    unjudged, misattributed, in conflict, resting only on excluded evidence, or with a citation
    marker that does not support it (or resolves to nothing)."""
    if not answer.refusal and answer.grounded is not True:
        return True
    return any(
        c.verdict in ("contradicted", "unjudged")
        or c.misattributed
        or c.conflicts
        or c.inadmissible_support
        or any(m.supports is not True for m in c.citation_markers)
        for c in answer.claims or []
    )


def print_audit(
    result: AuditResult, console: Console, detail: Detail = "problems", *, summary: bool = True
) -> None:
    """The answers (``detail``: ``problems`` only those :func:`has_problem` picks, ``all``, or
    ``none``) and then the summary (unless ``summary`` is False)."""
    from auditor.calibration import describe
    from auditor.cli.evidence import answer_rule
    from auditor.cli.output import shown
    from auditor.metrics import Summary

    judge = result.run.judge
    if judge is not None and judge.approximate and detail != "none":
        console.print(
            "[bold yellow]Judge: offline (approximate: surface cues, not a model; "
            "calibrate before quoting figures).[/]"
        )
    shown_answers = [
        a for a in result.answers if detail == "all" or (detail == "problems" and has_problem(a))
    ]
    for answer in shown_answers:
        # One print per answer: rich's cost is mostly per call (thousands of lines for a data set).
        lines = answer_rule(answer, console)
        say = lines.append
        if answer.refusal:
            say("  [cyan]refusal[/] (no claims to judge)")
        for claim in answer.claims or []:
            if claim.screened:
                reason = shown(claim.screen_reason or "")
                say(f"  [dim]- screened ({reason}): {shown(claim.text, multiline=True)}[/]")
                continue
            verdict = claim.verdict or "-"
            colour = _COLOURS.get(verdict, "white")
            say(f"  [{colour}]{verdict:<12}[/] {shown(claim.text, multiline=True)}")
            for cite in claim.citations:
                say(f'      [dim]{shown(cite.evidence_id)}: "{shown(cite.quote, multiline=True)}"[/]')
            for mark in claim.citation_markers:
                cited = ", ".join(mark.evidence_ids) or "nothing"
                said = _SUPPORTS[mark.supports]
                say(
                    f"      [dim]marker {shown(mark.marker)} -> {shown(cited)}: {said} ({shown(mark.reason)})[/]"
                )
            if claim.misattributed:
                say("      [red]misattributed: supported, but not by the item its marker cites[/]")
            if claim.conflicts:
                say(
                    f"      [bold red]conflicting admitted sources[/] (on_conflict: {claim.conflict_resolution or 'flag'})"
                )
                for side in claim.conflicts:
                    say(
                        f'        [red]{side.stance}[/] {shown(side.evidence_id)}: "{shown(side.quote, multiline=True)}"'
                    )
            if claim.inadmissible_support:
                say(
                    "      [red]rests only on excluded evidence: "
                    f"{shown(', '.join(claim.inadmissible_support))}[/]"
                )
            if claim.unjudged_reason:
                say(
                    f"      [magenta]unjudged ({shown(claim.unjudged_reason)}): "
                    f"{shown(describe_unjudged(claim.unjudged_reason))}[/]"
                )
            if claim.rationale:
                say(f"      [dim]{shown(claim.rationale, multiline=True)}[/]")
        if answer.undecided:  # no percentage: the claims it leaves out are the ones in doubt
            say(
                f"  undecided: {answer.unjudged} claim(s) the judge could not decide, none decided "
                "unsupported: NOT grounded"
            )
        elif answer.groundedness is not None:
            say(
                f"  groundedness {answer.groundedness:.2f}, contradicted {answer.contradicted}, "
                f"unjudged {answer.unjudged}"
                + (f", flagged conflicts {flagged}" if (flagged := _flagged(answer)) else "")
                + f": {'grounded' if answer.grounded else 'NOT grounded'}"
            )
        console.print("\n".join(lines))
    hidden = len(result.answers) - len(shown_answers)
    if detail == "problems" and hidden:
        console.print(
            f"[dim]{hidden} answer(s) without problems not shown (--verbose shows every answer).[/]"
        )
    if not summary:
        return
    s = result.summary
    rate = s["groundedness_rate"]
    share = s["answers_with_unsupported_claim"]
    console.rule("summary")
    policy = result.run.policy
    judge_name = f"{judge.kind}{':' + judge.model if judge.model else ''}" if judge else "-"
    console.print(
        f"policy {shown(policy.name) if policy else '-'} ({policy.sha256[:12] if policy else ''}), "
        f"judge {shown(judge_name)}"
    )
    console.print(
        f"groundedness rate: {_ratio(rate)} supported / judged claims "
        f"(screened out: {s['screened']}, unjudged: {s['unjudged']})"
    )
    console.print(
        f"answers with an unsupported claim: {_ratio(share)}; refusals: {s['refusals']} of {s['answers']}"
    )
    if result.run.unanswered_traces:
        console.print(
            f"[bold red]{result.run.unanswered_traces} trace(s) with model calls yielded no answer[/] "
            "(not audited; each is named in the problems)"
        )
    if s.get("undecided_answers"):
        console.print(
            f"[magenta]the judge could not decide {s['undecided_answers']} answer(s)[/] (no claim decided "
            "unsupported, one or more unjudged): out of both rates, and none of them is grounded"
        )
    conflicts = s.get("conflicts")
    if conflicts and conflicts["claims_with_conflict"]["numerator"]:
        console.print(
            f"conflicting admitted sources: {_ratio(conflicts['claims_with_conflict'])} judged claims, "
            f"{_ratio(conflicts['answers_with_conflict'])} answers; {conflicts['flagged']} left flagged"
        )
    citations = s.get("citations")
    if citations:
        console.print(
            f"citations: coverage {_ratio(citations['coverage'])} judged claims with a marker; "
            f"support {_ratio(citations['support'])} markers whose cited item supports the claim; "
            f"misattributed {_ratio(citations['misattribution'])} claims with a marker"
        )
    refusal = s.get("refusal")
    if refusal and refusal["labelled_answers"]:
        console.print(
            f"refusal accuracy: {_ratio(refusal['refusal_accuracy'])} unanswerable questions refused; "
            f"over-refusal: {_ratio(refusal['over_refusal'])} answerable questions refused "
            f"({refusal['labelled_answers']} labelled answers)"
        )
    corrected = Summary.model_validate(s).corrected_unsupported
    if corrected is not None:
        console.print(shown(describe(corrected)))
        if corrected.domain_note:
            if corrected.domain_fits is False:
                console.print(f"[yellow]warning: {shown(corrected.domain_note)}.[/]")
            else:
                console.print(f"[dim]{shown(corrected.domain_note)}.[/]")


def print_unjudged(result: AuditResult, console: Console) -> None:
    """Why claims went unjudged, one line per reason with its most frequent message, and how the
    LLM calls went: a failing endpoint must not read like a finished audit."""
    from collections import Counter

    from auditor.cli.output import shown
    from auditor.text import clip

    reasons: Counter[str] = Counter()
    messages: dict[str, Counter[str]] = {}
    for answer in result.answers:
        for claim in answer.claims or []:
            if claim.verdict != "unjudged":
                continue
            reason = claim.unjudged_reason or "unknown"
            reasons[reason] += 1
            if claim.judge_errors:
                messages.setdefault(reason, Counter())[claim.judge_errors[0]] += 1
    for reason, count in reasons.most_common():
        found = messages.get(reason)
        detail = ""
        if found:
            (message, _), *others = found.most_common()
            detail = f" ({clip(message, 200)}" + (f"; {len(others)} other message(s)" if others else "") + ")"
        console.print(
            f"[magenta]{count} claim(s) unjudged: {shown(reason)}{shown(detail)}[/]", soft_wrap=True
        )
    cascade = (result.run.usage or {}).get("cascade")
    if isinstance(cascade, dict) and cascade.get("answers"):
        console.print(
            f"cascade: {cascade['settled_offline']} of {cascade['claims']} claim(s) settled without a call; "
            f"{cascade.get('answers_without_call', 0)} of {cascade['answers']} answer(s) needed no LLM call "
            f"({cascade.get('calls_saved_per_answer') or 0:.2f} calls saved per answer)",
            soft_wrap=True,
        )
    llm = (result.run.usage or {}).get("llm")
    if not llm or not llm.get("calls"):
        return
    calls, failed = llm["calls"], llm.get("failed", 0)
    console.print(
        f"LLM: {calls - failed} of {calls} call(s) succeeded "
        f"({llm['attempts']} HTTP attempts, {llm['retries']} retries)",
        soft_wrap=True,
    )
    cost = llm.get("cost_usd")
    hits = sum(c.get("hits", 0) for k, c in (result.run.usage or {}).items() if k.endswith("cache"))
    console.print(
        f"LLM tokens: {llm.get('prompt_tokens', 0):,} prompt ({llm.get('cached_prompt_tokens', 0):,} cached), "
        f"{llm.get('completion_tokens', 0):,} completion; {hits} cache hit(s); estimated cost "
        + (
            f"${cost:.4f}"
            if isinstance(cost, int | float)
            else "unknown (model not priced: set AUDITOR_LLM_PRICES)"
        ),
        soft_wrap=True,
    )
    if failed == calls:
        console.print(
            "[bold red]Every LLM call failed: their claims are unjudged, and a stored run is marked "
            "failed, not finished.[/]",
            soft_wrap=True,
        )


def warn_unmatched_labels(result: AuditResult, labels_path: Path, console: Console) -> None:
    """A warning line when labels in the file match no answer (all of them, or some)."""
    from auditor.cli.output import shown

    refusal = result.summary.get("refusal")
    if not refusal or not refusal["unmatched_labels"]:
        return
    unmatched, matched = refusal["unmatched_labels"], refusal["labelled_answers"]
    where = shown(str(labels_path))
    if matched == 0:
        console.print(
            f"[yellow]warning: {where}: none of its {unmatched} label(s) matches an answer (by answer_id, "
            "trace_id or exact question); refusal accuracy and over-refusal are not measured. "
            "Check the ids against `auditor evidence`.[/]",
            soft_wrap=True,
        )
        return
    console.print(f"[yellow]warning: {where}: {unmatched} label(s) match no answer.[/]", soft_wrap=True)


def _flagged(answer: AnswerOut) -> int:
    """Claims whose admitted sources disagree and whose verdict on_conflict = "flag" left standing."""
    return sum(bool(c.conflicts) and c.conflict_resolution in ("flag", None) for c in answer.claims or [])


def _ratio(figure: dict[str, float | int | None]) -> str:
    value = figure["value"]
    shown = "n/a" if value is None else f"{value:.1%}"
    return f"{shown} ({figure['numerator']}/{figure['denominator']})"


engine_option = click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: this process; ray: shards on a Ray cluster (the ray extra; docs/scale.md).",
)
address_option = click.option(
    "--address",
    default=None,
    help="With --engine ray: the cluster (auto, ray://HEAD:10001, HEAD:6379). Default: start a local Ray.",
)
workers_option = click.option(
    "--workers",
    type=click.IntRange(1, 100_000),
    default=None,
    help="With --engine ray: shards audited in parallel (default: the cluster's CPUs).",
)


def audit_on_cluster(
    traces: list[Path],
    options: AuditOptions,
    on_progress: Callable[[Progress], None],
    address: str | None,
    workers: int | None,
) -> AuditResult:
    """``--engine ray``: :func:`auditor.scale.audit_on_ray` with the options ``audit`` built."""
    from auditor.scale import audit_on_ray

    if options.trace_id:
        raise click.UsageError("--trace-id selects one trace: run it without --engine ray.")
    if not options.store:
        raise click.UsageError("--engine ray stores the run (its workers write it): drop --no-store.")
    return audit_on_ray(traces, options, on_progress=on_progress, address=address, workers=workers)


def check_source(
    traces: tuple[Path, ...],
    source_url: str | None,
    since: datetime | None,
    until: datetime | None,
    engine: str,
) -> None:
    """TRACES or --from, one of the two; --since and --until only with --from."""
    if source_url is None:
        if not traces:
            raise click.UsageError("Name the traces to audit (files, directories, patterns) or --from URL.")
        if since or until:
            raise click.UsageError("--since and --until select traces of a --from source.")
        return
    if traces:
        raise click.UsageError("Give either TRACES or --from, not both.")
    if engine == "ray":
        raise click.UsageError("--from audits in this process: drop --engine ray.")


def audit_from_source(
    url: str,
    options: AuditOptions,
    on_progress: Callable[[Progress], None],
    since: datetime | None,
    until: datetime | None,
    write_back: bool,
    err: Console,
    quiet: bool,
) -> AuditResult:
    """``--from``: :func:`auditor.sources.audit_source`, and one line on what was written back."""
    from auditor.cli.output import shown
    from auditor.sources import audit_source

    done = audit_source(
        url, options, since=since, until=until, write_back=write_back, on_progress=on_progress
    )
    if done.written is not None and not quiet:
        w = done.written
        err.print(
            f"Wrote {w.annotations} annotation(s) on {w.spans} answer span(s) to {shown(w.where)}",
            highlight=False,
            soft_wrap=True,
        )
    return done.result


@click.command("audit")
@optional_traces_argument
@source_options
@format_option
@policy_option
@judge_option
@base_url_option
@decomposer_option
@cascade_option
@cache_option
@concurrency_option
@rate_limit_option
@click.option("--trace-id", default=None, help="Only answers from this trace (a unique prefix is enough).")
@labels_option
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
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
@calibration_option
@engine_option
@address_option
@workers_option
@click.option("-q", "--quiet", is_flag=True, help="No progress and no per-answer detail: the summary only.")
@click.option("-v", "--verbose", is_flag=True, help="Every answer's claims, not only those with problems.")
@click.pass_context
def audit_command(
    ctx: click.Context,
    traces: tuple[Path, ...],
    source_url: str | None,
    since: datetime | None,
    until: datetime | None,
    write_back: bool,
    format_: str | None,
    policy_name: str | None,
    judge_spec: str | None,
    base_url: str | None,
    decomposer: Literal["rules", "llm", "fused"],
    cascade: bool,
    cache: bool,
    concurrency: int,
    rate_limit: str | None,
    trace_id: str | None,
    labels_path: Path | None,
    json_path: Path | None,
    report_path: Path | None,
    db_url: str | None,
    store: bool,
    resume: bool,
    calibration: str | None,
    engine: Literal["local", "ray"],
    address: str | None,
    workers: int | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Split every answer in TRACES into claims and judge each against admitted evidence.

    TRACES are files, directories (searched recursively) or quoted glob patterns ('runs/**/*.jsonl').
    Or, instead of TRACES, --from URL (phoenix://HOST:PORT/PROJECT, mlflow://HOST:PORT/EXPERIMENT)
    reads the traces where they live and writes the verdicts back on the answers' spans
    (docs/integrations/).

    By default only answers with problems are shown in full (--verbose: all, --quiet: none).
    Exit status: 0 when the audit ran (whatever the verdicts), 2 for usage or input errors,
    3 when it ran but some claims could not be judged (they are `unjudged`, never supported),
    4 when it ran but is incomplete: some traces hold model calls from which no answer was read
    (each is named in the problems; 4 wins over 3),
    130 when interrupted (Ctrl-C or SIGTERM; the message says how to resume).
    """
    from rich.console import Console

    from auditor.cli.interrupt import EXIT_INTERRUPTED, command_line, print_interrupted, saved_answers
    from auditor.cli.output import check_outputs
    from auditor.cli.progress import Tracker, progress_reporter
    from auditor.metrics import load_labels
    from auditor.policy import load_policy
    from auditor.run import AuditOptions, audit

    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose contradict each other; choose one.")
    check_source(traces, source_url, since, until, engine)
    check_outputs(json=json_path, report=report_path)
    policy = load_policy(setting("policy", policy_name))
    # The options, built once from the flags and the settings, travel whole from here on.
    options = AuditOptions(
        policy=policy,
        judge=setting("judge", judge_spec) or "offline",
        base_url=setting("base_url", base_url),
        decomposer=decomposer,
        cascade=cascade,
        cache=cache,
        concurrency=concurrency,
        rate_limit=rate_per_second(rate_limit),
        format=format_,
        trace_id=trace_id,
        labels=load_labels(labels_path) if labels_path else None,
        calibration=calibration,
        db_url=db_url,
        store=store,
        resume=resume,
    )
    err = Console(stderr=True)
    tracker = Tracker()
    # What start-up made (modules, classes, the policy) lives as long as the command: out of the
    # cyclic collector's way, so its full collections walk only what the audit makes. The command
    # also runs in-process (tests, benchmarks, a host that froze its own objects): a freeze it did
    # not make is left alone, and its own ends with it.
    thaw = gc.get_freeze_count() == 0
    if thaw:
        gc.freeze()
    try:
        try:  # the bar is closed before the message, so the message stays on screen
            with progress_reporter(err, enabled=not quiet, tracker=tracker) as on_progress:
                if source_url is not None:
                    result = audit_from_source(
                        source_url, options, on_progress, since, until, write_back, err, quiet
                    )
                elif engine == "ray":
                    result = audit_on_cluster(list(traces), options, on_progress, address, workers)
                else:
                    result = audit(list(traces), options, on_progress=on_progress)
        except KeyboardInterrupt:
            saved = saved_answers(tracker, db_url) if store else None
            print_interrupted(tracker, command_line(ctx), err, stored=store, saved=saved)
            sys.exit(EXIT_INTERRUPTED)
        finish_command(
            result,
            policy,
            err,
            json_path=json_path,
            report_path=report_path,
            stored=store,
            labels_path=labels_path,
            quiet=quiet,
            verbose=verbose,
        )
    finally:
        if thaw:
            gc.unfreeze()


def finish_command(
    result: AuditResult,
    policy: Policy,
    err: Console,
    *,
    json_path: Path | None,
    report_path: Path | None,
    stored: bool,
    labels_path: Path | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """What ``auditor audit`` (and ``auditor reaudit``) show once the run is done: the answers and
    summary or the JSON, the report, the stored run, why claims went unjudged, the input problems;
    then the exit status (:data:`~auditor.cli.output.EXIT_INCOMPLETE` when some traces with model
    calls yielded no answer, else :data:`~auditor.cli.output.EXIT_UNJUDGED` when some claims could
    not be judged)."""
    from auditor.cli.evidence import print_problems
    from auditor.cli.output import EXIT_INCOMPLETE, EXIT_UNJUDGED, listing_console, shown
    from auditor.report import write_report
    from auditor.text import json_printable

    if json_path is not None and str(json_path) == "-":
        click.echo(json_printable(result.to_json()), nl=False)
    else:
        print_audit(result, listing_console(), "none" if quiet else "all" if verbose else "problems")
        if json_path is not None:
            json_path.write_text(result.to_json(), encoding="utf-8")
            if not quiet:
                err.print(f"Wrote {shown(str(json_path))}")
    if report_path is not None:
        write_report(result, report_path, policy_rationale=policy.rationale)
        if not quiet:
            err.print(f"Wrote {shown(str(report_path))}")
    if stored and not quiet:
        run_id = result.run.id
        err.print(
            f"Run {run_id} stored (auditor show {run_id[:12]}; auditor export {run_id[:12]} -o claims.jsonl)",
            highlight=False,
            soft_wrap=True,
        )
    for old in result.run.superseded:  # said even with --quiet: a run's status changed
        err.print(
            f"Run {old} was left running by a process that is gone: marked superseded by run {result.run.id}.",
            highlight=False,
            soft_wrap=True,
        )
    print_unjudged(result, err)
    if labels_path is not None:
        warn_unmatched_labels(result, labels_path, err)
    print_problems(result, err)
    if result.run.unanswered_traces:
        sys.exit(EXIT_INCOMPLETE)
    if result.summary["unjudged"]:
        sys.exit(EXIT_UNJUDGED)
