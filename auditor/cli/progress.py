"""Progress for long audits: a bar on a terminal, plain log lines when not on one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.run import Progress as AuditProgress


#: Without a terminal, a log line every this many answers (and at the end).
LOG_EVERY = 25


@contextmanager
def progress_reporter(console: Console) -> Iterator[Callable[[AuditProgress], None]]:
    """A callback for :func:`auditor.run.audit`'s ``on_progress``, shown on ``console``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not console.is_terminal:

        def log(p: AuditProgress) -> None:
            if p.answers_done % LOG_EVERY == 0 or p.answers_done == p.answers_total:
                console.print(
                    f"audited {p.answers_done}/{p.answers_total} answers from {p.traces} traces "
                    f"({p.answers_resumed} resumed); {_counts(p)}",
                    highlight=False,
                )

        yield log
        return
    columns = (
        TextColumn("answers"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("audit", total=None, detail="")

        def show(p: AuditProgress) -> None:
            bar.update(
                task,
                total=p.answers_total,
                completed=p.answers_done,
                detail=f"{p.traces} traces · {_counts(p)}",
            )

        yield show


def _counts(p: AuditProgress) -> str:
    """Claims and calls as they went: unjudged claims and failed calls are never counted as done."""
    text = f"{p.claims_judged} claims judged"
    if p.claims_unjudged:
        text += f", {p.claims_unjudged} unjudged"
    text += f"; {p.llm_calls} LLM calls"
    if p.llm_failed:
        text += f" ({p.llm_failed} failed)"
    return text
