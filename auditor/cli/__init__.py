"""The ``auditor`` command: a thin shell over the library.

Each command parses its options, calls one public library function and prints. No SQL, Jinja or
model calls here. Command groups live in their own modules and are registered below. Those
modules import the library inside each command, not at the top, so ``auditor --help``,
``--version`` and ``auditor adapters`` load only what they use (``benchmarks/startup.py``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click

from auditor import __version__
from auditor.cli.audit import audit_command
from auditor.cli.calibrate import calibrate_command, calibrations_command
from auditor.cli.db import db_group
from auditor.cli.evidence import adapters_command, evidence_command
from auditor.cli.export import export_command, show_command
from auditor.cli.gate import gate_command
from auditor.cli.inspect import inspect_command
from auditor.cli.policy import policy_group
from auditor.cli.reaudit import reaudit_command
from auditor.cli.runs import report_command, runs_command
from auditor.cli.serve import serve_command
from auditor.errors import AuditorError

#: Exit code for usage and input errors (also click's own code for a bad option).
EXIT_USAGE = 2


class _UserError(click.ClickException):
    exit_code = EXIT_USAGE


class _AuditorGroup(click.Group):
    """Turns an :class:`~auditor.errors.AuditorError` into one line on stderr and exit code 2.

    Messages may quote trace content (ids, file names), so control characters are made visible.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _sigterm_as_ctrl_c():
                return super().invoke(ctx)
        except AuditorError as err:
            from auditor.text import printable

            raise _UserError(printable(str(err), keep_newlines=True)) from err


def _ctrl_c(_signum: int, frame: FrameType | None) -> None:
    # SIGINT's own handler: asyncio's while an audit runs (it cancels the audit's task cleanly),
    # Python's default otherwise (KeyboardInterrupt).
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


@contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (``kill``, a container stopping) takes the Ctrl-C path while a command runs: an
    audit marks its run ``interrupted``, keeping what it finished, and exits like Ctrl-C (130),
    whatever the process inherited for SIGINT or SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    # A shell script's background job starts with SIGINT ignored (so the script's Ctrl-C spares
    # it). It stays so in effect, blocked, while SIGINT gets Python's handler, which asyncio then
    # takes over: SIGTERM calls that handler, and the audit stops as cleanly as on Ctrl-C.
    unignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN and hasattr(signal, "pthread_sigmask")
    if unignored:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
    previous = signal.signal(signal.SIGTERM, _ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if unignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a SIGINT still pending is dropped
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@click.group(cls=_AuditorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def cli() -> None:
    """Audit whether the answers of tool-using agents rest on admissible evidence."""


cli.add_command(adapters_command)
cli.add_command(evidence_command)
cli.add_command(inspect_command)
cli.add_command(policy_group)
cli.add_command(audit_command)
cli.add_command(reaudit_command)
cli.add_command(gate_command)
cli.add_command(calibrate_command)
cli.add_command(calibrations_command)
cli.add_command(db_group)
cli.add_command(runs_command)
cli.add_command(report_command)
cli.add_command(show_command)
cli.add_command(export_command)
cli.add_command(serve_command)


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name="auditor")


__all__ = ["EXIT_USAGE", "cli", "main"]
