"""Progress for long audits: a bar on a terminal, plain periodic lines when not on one.

The bar shows answers done of all, the time left, claims judged and LLM calls and tokens. In a
pipe or a CI log a bar would be noise, so a plain line is written after the first answer, then at
most every :data:`LOG_SECONDS`, and at the end, each with the same counts and an ETA. The
:class:`Tracker` keeps the last report, so a Ctrl-C can say what was saved.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from auditor.run import Progress as AuditProgress


#: Without a terminal, at most one progress line this often (seconds), plus the first and the last.
LOG_SECONDS = 10.0


@dataclass
class Tracker:
    """The latest progress report of a run (None before the first answer finishes)."""

    last: AuditProgress | None = None
    started: float = field(default_factory=time.monotonic)

    def eta_seconds(self) -> float | None:
        """Seconds left at the rate answers have been finishing in this process (None: unknown)."""
        p = self.last
        if p is None:
            return None
        done_now = p.answers_done - p.answers_resumed
        left = p.answers_total - p.answers_done
        elapsed = time.monotonic() - self.started
        if left <= 0:
            return 0.0
        if done_now <= 0 or elapsed <= 0:
            return None
        return elapsed / done_now * left


@contextmanager
def progress_reporter(
    console: Console, *, enabled: bool = True, every: float = LOG_SECONDS, tracker: Tracker | None = None
) -> Iterator[Callable[[AuditProgress], None]]:
    """A callback for :func:`auditor.run.audit`'s ``on_progress`` shown on ``console``.

    Each report is also kept in ``tracker`` (for the Ctrl-C message, which is printed once the
    bar is gone). ``enabled`` False (``--quiet``) shows nothing but still tracks.
    """
    tracker = tracker if tracker is not None else Tracker()
    if not enabled:

        def track(p: AuditProgress) -> None:
            tracker.last = p

        yield track
        return
    if not console.is_terminal:
        last_line = [0.0]

        def log(p: AuditProgress) -> None:
            first = tracker.last is None
            tracker.last = p
            now = time.monotonic()
            final = p.answers_done >= p.answers_total
            if first or final or now - last_line[0] >= every:
                last_line[0] = now
                eta = tracker.eta_seconds()
                when = "" if final or eta is None else f"; ETA {clock(eta)}"
                console.print(
                    f"audited {p.answers_done}/{p.answers_total} answers from {p.traces} traces "
                    f"({p.answers_resumed} resumed); {counts(p)}{when}",
                    highlight=False,
                    soft_wrap=True,
                )

        yield log
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("answers"),
        BarColumn(bar_width=16),
        MofNCompleteColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[detail]}"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("audit", total=None, detail="")

        def show(p: AuditProgress) -> None:
            if tracker.last is None and p.answers_resumed:
                bar.reset(task, completed=p.answers_resumed)  # the ETA counts this process's pace
            tracker.last = p
            bar.update(task, total=p.answers_total, completed=p.answers_done, detail=counts(p))

        yield show


def clock(seconds: float) -> str:
    """``1:02:03`` or ``2:03``."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def counts(p: AuditProgress) -> str:
    """Claims and calls as they went: unjudged claims and failed calls are never counted as done."""
    text = f"{p.claims_judged} claims judged"
    if p.claims_unjudged:
        text += f", {p.claims_unjudged} unjudged"
    text += f"; {p.llm_calls} LLM calls"
    if p.llm_failed:
        text += f" ({p.llm_failed} failed)"
    if p.llm_tokens:
        text += f", {p.llm_tokens:,} tokens"
    return text
