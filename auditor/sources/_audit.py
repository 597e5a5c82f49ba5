"""Audit a source's traces: pull them into a scratch directory, audit the files, write back."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.errors import UsageError
from auditor.sources._registry import WriteBack, get_source

if TYPE_CHECKING:
    from auditor.results import AuditResult
    from auditor.run import AuditOptions, Progress


@dataclass(frozen=True)
class SourceAudit:
    """An audit of a source's traces and what was written back (None with ``write_back=False``)."""

    result: AuditResult
    written: WriteBack | None


def _range(since: datetime | None, until: datetime | None) -> str:
    return (
        f" between {since.isoformat() if since else 'the start'} and {until.isoformat() if until else 'now'}"
    )


def audit_source(
    url: str,
    options: AuditOptions,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    write_back: bool = True,
    on_progress: Callable[[Progress], None] | None = None,
) -> SourceAudit:
    """Pull the traces of ``url`` with a span starting in ``[since, until)``, audit them exactly as
    :func:`auditor.run.audit` audits files, and (``write_back``) attach the verdicts to the
    answers' spans in the source.

    Raises:
        UsageError: no source serves the URL, the source cannot be read or written (the source's
            own message), or the range holds no trace (an audit of nothing is never a result).
    """
    from auditor.run import audit

    source = get_source(url)
    if since and until and since >= until:
        raise UsageError(f"--since ({since.isoformat()}) must be before --until ({until.isoformat()}).")
    with tempfile.TemporaryDirectory(prefix="auditor-pull-") as scratch:
        files = source.pull(url, Path(scratch), since, until)
        if not files:
            raise UsageError(f"{url}: no spans{_range(since, until)}; nothing to audit.")
        result = audit(files, options, on_progress=on_progress)
    if not write_back:
        return SourceAudit(result=result, written=None)
    try:
        written = source.write_back(url, result)
    except UsageError as err:  # the audit is done: say where it is kept
        kept = (
            f"run {result.run.id[:12]} (auditor show {result.run.id[:12]})" if options.store else "not stored"
        )
        raise UsageError(f"{err} The audit itself finished: {kept}; the write-back did not finish.") from None
    return SourceAudit(result=result, written=written)
