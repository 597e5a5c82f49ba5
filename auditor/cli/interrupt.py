"""What a Ctrl-C (or SIGTERM) tells the user: what was saved, and the exact command that resumes.

The run itself is marked ``interrupted`` by :func:`auditor.run.audit` (answers already committed
are kept); this module only words it. The command is rebuilt from the options the user set (not
from ``sys.argv``), so it is the same whether the CLI was started as ``auditor``, ``python -m`` or
from a test, and it never carries ``--no-resume``, which would start over.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.cli.progress import Tracker

#: Exit status after Ctrl-C, as a shell reports a process ended by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130


def command_line(ctx: click.Context, *, drop: frozenset[str] = frozenset({"resume"})) -> str:
    """The command that ran, from the options given explicitly (defaults left out), shell-quoted."""
    words = ["auditor", ctx.info_name or ctx.command.name or ""]
    arguments: list[str] = []
    for param in ctx.command.params:
        name = param.name
        if name is None or name in drop:
            continue
        if ctx.get_parameter_source(name) in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
            continue
        value = ctx.params.get(name)
        if isinstance(param, click.Argument):
            values = value if isinstance(value, tuple | list) else [value]
            arguments.extend(str(v) for v in values)
            continue
        if not isinstance(param, click.Option):
            continue
        if param.is_flag and param.secondary_opts:
            words.append(_long(param.opts) if value else _long(param.secondary_opts))
        elif param.is_flag:
            if value:
                words.append(_long(param.opts))
        else:
            for one in value if param.multiple and isinstance(value, tuple | list) else [value]:
                words.extend([_long(param.opts), str(one)])
    return shlex.join([*words, *arguments])


def _long(opts: list[str]) -> str:
    return max(opts, key=len)


def saved_answers(tracker: Tracker, db_url: str | None) -> int | None:
    """How many answers the interrupted run holds, as its store says (None: no run, or the store
    cannot say). The run's writer commits what was handed to it before the run is marked
    interrupted, so the store may hold answers whose commit the progress had not reported yet."""
    from auditor.errors import StoreError
    from auditor.store import Store

    p = tracker.last
    if p is None or p.run_id is None:
        return None
    try:
        with Store(db_url, create=False) as store:
            return len(store.finished_answer_ids(p.run_id))
    except StoreError:
        return None


def print_interrupted(
    tracker: Tracker, command: str, console: Console, *, stored: bool, saved: int | None = None
) -> None:
    """The lines after Ctrl-C: answers finished and where they are (``saved``: as the store
    counts them, when known), then how to go on."""
    from auditor.cli.output import shown

    p = tracker.last
    done = 0 if p is None else p.answers_done
    if stored and saved is not None:
        done = max(done, saved)
    total = "?" if p is None else str(p.answers_total)
    console.print("[bold yellow]Interrupted.[/]", highlight=False)
    if not stored:
        console.print(
            f"{done} of {total} answers were audited; nothing was saved (--no-store). Run again with:",
            highlight=False,
        )
    elif p is None or p.run_id is None or done == 0:
        console.print(
            "No answer had finished, so the run holds nothing yet. Start again with:", highlight=False
        )
    else:
        console.print(
            f"{done} of {total} answers are saved in run {p.run_id} (marked interrupted). "
            "Resume it, auditing only the rest, with:",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"  {shown(command)}", highlight=False, soft_wrap=True)
