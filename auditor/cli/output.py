"""What the commands write: trace text on the terminal, the files named by output options, the exit statuses.

Trace text is untrusted, so everything a command prints from a trace (answers, evidence, ids,
names, problems, error messages that quote them) goes through :func:`shown` (Rich markup escaped,
control characters made visible) or :func:`plain` (for ``click.echo``). Output files (``--json``,
``--report``, ``--junit``, ``-o``) are checked by :func:`check_outputs` before any work starts, so
a typo in a folder name costs nothing instead of a finished audit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.errors import UsageError
from auditor.text import printable

if TYPE_CHECKING:
    from rich.console import Console

#: ``auditor audit`` (and ``reaudit``) exit with this when it ran but some claims could not be judged.
EXIT_UNJUDGED = 3
#: ``auditor audit`` and ``auditor evidence`` exit with this when they ran but the run is incomplete:
#: some traces hold model calls from which no answer was read (each is a ``no_answer`` problem).
#: It takes precedence over :data:`EXIT_UNJUDGED`.
EXIT_INCOMPLETE = 4


def shown(text: str, *, multiline: bool = False) -> str:
    """``text`` for a Rich ``console.print``: markup escaped, control characters visible."""
    from rich.markup import escape

    return escape(printable(text, keep_newlines=multiline))


def listing_console() -> Console:
    """The console for a command's listing on stdout (``auditor audit``, ``auditor evidence``).

    Rich's highlighter (numbers, quoted strings, URLs coloured) runs only where colour is shown:
    elsewhere (a pipe, a file, a CI log) it changes nothing in the text and took half of the time
    of a data set's listing.
    """
    from rich.console import Console

    console = Console()
    return console if console.color_system is not None else Console(highlight=False)


def plain(text: str, *, multiline: bool = False) -> str:
    """``text`` for ``click.echo``: control characters visible (no markup to escape)."""
    return printable(text, keep_newlines=multiline)


_EXAMPLE_NAMES = {"json": "result.json", "report": "report.html", "junit": "junit.xml", "o": "report.html"}


def check_outputs(**paths: Path | None) -> None:
    """Check, before any work, that each output path (keyed by its option) can be written.

    ``None`` and ``-`` (stdout) are skipped. A file that does not exist yet is created and removed
    again: only the operating system knows every reason a write would fail.

    Raises:
        UsageError: naming the option, the path and the fix: a missing folder, a folder given as the
            file, a path that cannot be written, or two options naming the same file.
    """
    seen: dict[Path, str] = {}
    for key, path in paths.items():
        if path is None or str(path) == "-":
            continue
        option = "-o" if key == "o" else f"--{key.replace('_', '-')}"
        where = f"{option} {path}"
        parent = path.parent
        if path.is_dir():
            example = path / _EXAMPLE_NAMES.get(key, "out")
            raise UsageError(f"{where}: is a folder; name a file inside it (e.g. {example}).")
        if not parent.exists():
            raise UsageError(
                f"{where}: the folder {parent} does not exist; create it (mkdir -p {parent}) "
                "or choose another path."
            )
        if not parent.is_dir():
            raise UsageError(f"{where}: {parent} is a file, not a folder; choose another path.")
        resolved = path.resolve()
        if resolved in seen:
            raise UsageError(
                f"{where}: {seen[resolved]} writes the same file; give each output its own path."
            )
        seen[resolved] = option
        _try_write(path, where)


def _try_write(path: Path, where: str) -> None:
    existed = path.exists()
    try:
        with path.open("ab"):
            pass
    except OSError as err:
        raise UsageError(
            f"{where}: cannot write there ({err.strerror or err}); choose a writable path."
        ) from err
    if not existed:
        os.unlink(path)
