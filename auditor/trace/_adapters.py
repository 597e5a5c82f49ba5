"""Trace adapters: the extension point that turns a file format into :class:`~auditor.trace.Trace`.

Adapters live in their own distributions (``auditor-otel``, ``auditor-langchain``, or a third
party's) and are found through the ``auditor.adapters`` entry-point group, so the core never
imports OpenTelemetry or LangChain. The built-in ones register exactly as a third party would.

An entry point names an object (or a zero-argument factory returning one) that satisfies
:class:`TraceAdapter`.
"""

from __future__ import annotations

import functools
import itertools
import logging
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import BinaryIO, Protocol, runtime_checkable

from auditor.errors import UnknownAdapterError, UnrecognisedFormatError
from auditor.trace._model import Trace
from auditor.trace._problems import Problem

ENTRY_POINT_GROUP = "auditor.adapters"

logger = logging.getLogger(__name__)

#: How many leading bytes (after decompression) :meth:`TraceAdapter.sniff` is shown.
SNIFF_BYTES = 4096


@runtime_checkable
class TraceAdapter(Protocol):
    """Reads one trace format.

    Contract:
        ``sniff`` looks only at the first bytes (at most :data:`SNIFF_BYTES`, already
        decompressed, after any UTF-8 byte-order mark) and answers whether this adapter can read
        the stream; it must not raise. When no adapter accepts the first bytes, the ingest shows
        each adapter the file's first few lines, one at a time (each cut to :data:`SNIFF_BYTES`),
        so a line-oriented adapter should accept one good line of its format.
        ``parse`` reads the whole stream and yields each trace once it is complete, and a
        :class:`~auditor.trace.Problem` for anything it had to skip or repair. It never raises
        for bad input (an ``OSError`` from the stream may propagate: the ingest reports it);
        ``source`` is the file name to put in problems. The ingest skips a leading byte-order
        mark; an adapter called directly should tolerate one. Traces should pass through
        :func:`~auditor.trace.assemble_trace` or :func:`~auditor.trace.repair_trace`, which
        repair invalid text and bound nesting.
    """

    name: str
    description: str

    def sniff(self, first_bytes: bytes) -> bool: ...

    def parse(self, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]: ...


@dataclass(frozen=True)
class InstalledAdapter:
    name: str
    distribution: str
    adapter: TraceAdapter


class _Registration:
    """One entry point of the group, and the name of the distribution that registers it."""

    def __init__(self, entry_point: EntryPoint) -> None:
        self.entry_point = entry_point

    @functools.cached_property
    def distribution(self) -> str:
        # Read once: the name comes from the distribution's METADATA file, parsed on every
        # ``dist.name`` (most of the time ``get_adapter`` took, once per input file).
        dist = self.entry_point.dist
        return dist.name if dist is not None else "?"


def _registered() -> tuple[_Registration, ...]:
    return _registered_on(tuple(sys.path))


@functools.lru_cache(maxsize=4)
def _registered_on(path: tuple[str, ...]) -> tuple[_Registration, ...]:
    # Scanning every installed distribution's metadata costs tens of milliseconds, and an audit
    # looks adapters up once per input file: the scan is kept per import path (a new path, a new scan).
    del path
    return tuple(_Registration(ep) for ep in entry_points(group=ENTRY_POINT_GROUP))


def installed_adapters() -> list[InstalledAdapter]:
    """Every adapter registered in the ``auditor.adapters`` group that loads, in name order.

    A plugin that fails to load is left out and logged, so one broken third-party adapter does
    not stop the others; :func:`broken_adapters` lists them.
    """
    found: list[InstalledAdapter] = []
    for registration in _registered():
        ep = registration.entry_point
        try:
            loaded = ep.load()
            adapter = loaded() if isinstance(loaded, type) else loaded
        except Exception as err:  # a third party's bug must not take the tool down
            logger.warning("adapter %r (%s) failed to load: %s", ep.name, ep.value, err)
            continue
        found.append(InstalledAdapter(name=ep.name, distribution=registration.distribution, adapter=adapter))
    return sorted(found, key=lambda a: a.name)


def broken_adapters() -> dict[str, str]:
    """Registered adapters that fail to load, with the error, for ``auditor adapters``."""
    broken: dict[str, str] = {}
    for ep in (registration.entry_point for registration in _registered()):
        try:
            ep.load()
        except Exception as err:
            broken[ep.name] = f"{type(err).__name__}: {err}"
    return broken


def get_adapter(name: str) -> TraceAdapter:
    """The adapter registered as ``name``; the error lists the ones that are installed."""
    adapters = installed_adapters()
    for item in adapters:
        if item.name == name:
            return item.adapter
    raise UnknownAdapterError(name, [a.name for a in adapters])


def _sniffs(item: InstalledAdapter, sample: bytes) -> bool:
    try:
        return bool(item.adapter.sniff(sample[:SNIFF_BYTES]))
    except Exception as err:  # the contract says sniff never raises; a third party's may
        logger.warning("adapter %r failed to sniff: %s", item.name, err)
        return False


def detect_adapter(first_bytes: bytes, source: str, more: Iterable[bytes] = ()) -> InstalledAdapter:
    """The first installed adapter (in name order) whose ``sniff`` accepts ``first_bytes``.

    Failing that, the first to accept one of the samples in ``more``, in order: the ingest passes
    the file's first few lines, so one damaged or overlong first line does not hide the format.
    ``more`` is consumed only as far as needed.

    Raises:
        UnrecognisedFormatError: no adapter accepts any sample.
    """
    adapters = installed_adapters()
    for sample in itertools.chain([first_bytes], more):
        for item in adapters:
            if _sniffs(item, sample):
                return item
    raise UnrecognisedFormatError(source, [a.name for a in adapters])
