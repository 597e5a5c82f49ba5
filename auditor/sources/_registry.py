"""The extension point: a :class:`TraceSource` per URL scheme, found through entry points.

An entry point in the ``auditor.sources`` group names an object (or a zero-argument factory
returning one) that satisfies :class:`TraceSource`; its name is the URL scheme it serves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urlsplit

from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.results import AuditResult

ENTRY_POINT_GROUP = "auditor.sources"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceURL:
    """``SCHEME://HOST:PORT/PREFIX.../NAME``: a backend at ``HOST:PORT`` (under an optional path
    ``PREFIX``, for a server behind a proxy) and the project or experiment ``NAME`` in it."""

    url: str
    scheme: str
    host: str
    port: int | None
    prefix: str
    name: str


def parse_source_url(url: str) -> SourceURL:
    """Split a source URL; a URL without a host or a name is one line saying what is expected.

    Raises:
        UsageError: the URL has no scheme, host or name.
    """
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    try:
        port = parts.port
    except ValueError:
        port = -1
    if not parts.scheme or not parts.hostname or not segments or port == -1:
        raise UsageError(
            f"{url}: expected SCHEME://HOST:PORT/NAME (e.g. phoenix://127.0.0.1:6006/default), "
            "NAME being the project or experiment to read."
        )
    return SourceURL(
        url=url,
        scheme=parts.scheme.lower(),
        host=parts.hostname,
        port=port,
        prefix="/".join(segments[:-1]),
        name=segments[-1],
    )


@dataclass(frozen=True)
class WriteBack:
    """What :meth:`TraceSource.write_back` wrote: ``annotations`` on ``spans`` answer spans, at ``where``."""

    annotations: int
    spans: int
    where: str


@runtime_checkable
class TraceSource(Protocol):
    """A backend that holds traces: pulls them for an audit, takes the verdicts back.

    Contract:
        ``pull`` writes the traces that have a span starting in ``[since, until)`` (either bound
        may be None: open), each trace whole, into files under ``directory`` that an installed
        trace adapter reads, and returns them (an empty list when there is nothing in the range).
        It raises :class:`~auditor.errors.UsageError` for anything the user can fix (a missing
        client library: naming the extra to install; a server that cannot be reached; an unknown
        project), never a bare library exception.
        ``write_back`` attaches :func:`~auditor.sources.verdict_annotations` of ``result`` to the answers'
        spans in the backend, replacing what an earlier write-back of the same answers put there,
        and says how many it wrote; errors as for ``pull``.
    """

    name: str
    description: str

    def pull(
        self, url: str, directory: Path, since: datetime | None, until: datetime | None
    ) -> list[Path]: ...

    def write_back(self, url: str, result: AuditResult) -> WriteBack: ...


def installed_sources() -> dict[str, TraceSource]:
    """Every source registered in the ``auditor.sources`` group that loads, by scheme.

    A plugin that fails to load is left out and logged, so one broken third-party source does not
    stop the others.
    """
    found: dict[str, TraceSource] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
            found[ep.name] = loaded() if isinstance(loaded, type) else loaded
        except Exception as err:  # a third party's bug must not take the tool down
            logger.warning("source %r (%s) failed to load: %s", ep.name, ep.value, err)
    return dict(sorted(found.items()))


def get_source(url: str) -> TraceSource:
    """The source that serves ``url``'s scheme; the error lists the schemes that are registered.

    Only that scheme's entry point is loaded: one backend's client is never imported to reach
    another, and a broken third-party source does not stand in the way.

    Raises:
        UsageError: the URL is malformed, no installed source serves its scheme, or its source
            fails to load.
    """
    scheme = parse_source_url(url).scheme
    registered = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if scheme not in registered:
        listed = ", ".join(f"{s}://" for s in sorted(registered)) or "none"
        raise UsageError(
            f"{url}: no installed trace source reads {scheme}:// URLs. Installed: {listed} "
            "(phoenix:// and mlflow:// come with auditor-otel: pip install 'auditor-otel[phoenix]' "
            "or 'auditor-otel[mlflow]')."
        )
    ep = registered[scheme]
    try:
        loaded = ep.load()
        source: TraceSource = loaded() if isinstance(loaded, type) else loaded
    except Exception as err:  # a third party's bug: one line, not a traceback
        raise UsageError(f"{url}: the {scheme}:// source ({ep.value}) failed to load: {err}") from None
    return source
