"""Read trace files through the installed adapters, recording every problem.

This module owns the run's view of its inputs: it checks each path, opens it
(:mod:`auditor.trace._input`: gzip, byte-order mark, read errors), computes its digest (for the run
record), picks the adapter (``--format``, else sniffing) and collects the traces and problems the
adapter yields. Sniffing shows the adapters the first bytes, then, if none accepts them, the first
few lines one by one (each bounded), so a damaged or overlong first line does not hide a file of
good traces. An empty or whitespace-only file is found by a scan for its first non-blank byte,
before any adapter runs.

A file that cannot be recognised, is empty, or is damaged is a problem of the run, and the other
files are still read; :func:`read_traces` raises when nothing at all could be read (one line naming
the files and what was tried), or when a file cannot be read at all (no such file, not a regular
file, an ``OSError``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from auditor.errors import InputReadError, NothingReadError, UnrecognisedFormatError
from auditor.text import clip
from auditor.trace._adapters import SNIFF_BYTES, TraceAdapter, detect_adapter, get_adapter
from auditor.trace._discover import Source, expand_inputs
from auditor.trace._gc import fewer_collections
from auditor.trace._input import check_regular, open_input, open_raw
from auditor.trace._merge import merge_split_traces
from auditor.trace._model import Trace
from auditor.trace._problems import Problem, Severity

EMPTY_REASON = "no traces: the file is empty"
#: Lines shown to the adapters when none accepts the first bytes, and the bytes scanned for them.
SAMPLE_LINES = 8
SAMPLE_SCAN = 8 << 20
_BLOCK = 1 << 20


@dataclass(frozen=True)
class InputFile:
    """One input as the run records it: where, which digest, read by which adapter."""

    path: str
    sha256: str
    format: str | None
    traces: int = 0


@dataclass
class IngestResult:
    traces: list[Trace] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    inputs: list[InputFile] = field(default_factory=list)


def file_digest(path: Source) -> str:
    """SHA-256 of the file's bytes as stored (compressed or not); a URL's through fsspec."""
    digest = hashlib.sha256()
    with _reading(path), open_raw(path) as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def _reading(path: Source) -> Iterator[None]:
    """Turn an ``OSError`` while reading ``path`` into one line naming the file and the error."""
    try:
        yield
    except OSError as err:
        raise InputReadError(path, err) from err


def _head(stream: BinaryIO) -> bytes:
    """The first :data:`SNIFF_BYTES` of the stream, from its first non-blank byte when the window
    is all blank; b"" when the whole stream is blank (scanned in blocks, nothing kept)."""
    head = stream.read(SNIFF_BYTES)
    if head.strip():
        return head
    while block := stream.read(_BLOCK):
        rest = block.lstrip()
        if rest:
            return (rest + stream.read(SNIFF_BYTES))[:SNIFF_BYTES]
    return b""


def _line_samples(stream: BinaryIO, head: bytes) -> Iterator[bytes]:
    """The first :data:`SAMPLE_LINES` non-blank lines, each cut to :data:`SNIFF_BYTES`; the rest of
    an overlong line is read past without being kept, and at most :data:`SAMPLE_SCAN` bytes are read."""
    scanned = found = 0
    while found < SAMPLE_LINES and scanned < SAMPLE_SCAN:
        line = stream.readline(SNIFF_BYTES)
        if not line:
            return
        scanned += len(line)
        tail = line
        while not tail.endswith(b"\n") and scanned < SAMPLE_SCAN:
            tail = stream.readline(_BLOCK)
            if not tail:
                break
            scanned += len(tail)
        if line.strip() and not head.startswith(line):
            found += 1
            yield line


@dataclass(frozen=True)
class _Plan:
    """How one file is read: its adapter, or the reason it is not read at all."""

    adapter: TraceAdapter | None = None
    name: str | None = None
    skipped: str | None = None


def _plan(path: Source, format: str | None) -> _Plan:
    stream, source = open_input(path)
    with stream:
        head = _head(stream)
        if not head:
            return _Plan(skipped=source.fault or EMPTY_REASON)
    if format:
        return _Plan(get_adapter(format), format)
    samples = _samples(path, head)
    try:
        found = detect_adapter(head, str(path), samples)
    except UnrecognisedFormatError as err:
        listed = ", ".join(err.available) or "none is installed"
        return _Plan(
            skipped=f"no installed adapter recognises this file (tried {listed}); "
            "pass --format NAME to read it with one of them"
        )
    finally:
        samples.close()
    return _Plan(found.adapter, found.name)


def _samples(path: Source, head: bytes) -> Generator[bytes, None, None]:
    """The line samples of a fresh read of ``path`` (opened only if the head is not enough)."""
    stream, _ = open_input(path)
    with stream:
        yield from _line_samples(stream, head)


def _items(path: Source, plan: _Plan) -> Iterator[Trace | Problem]:
    if plan.adapter is None:
        yield Problem(file=str(path), reason=plan.skipped or EMPTY_REASON)
        return
    stream, source = open_input(path)
    with stream:
        yield from plan.adapter.parse(stream, str(path))
    if source.read_error is not None:  # raised even if the adapter caught it
        raise source.read_error
    if source.fault is not None:
        yield Problem(file=str(path), reason=source.fault)


def iter_file(path: Source, format: str | None = None) -> Iterator[Trace | Problem]:
    """Yield the traces and problems of one file, as its adapter produces them.

    An empty or unrecognised file yields one problem saying so.

    Raises:
        UsageError: the file does not exist or is not a regular file, or ``format`` names no
            installed adapter.
        InputReadError: the operating system failed to read the file.
    """
    check_regular(path)
    with _reading(path), fewer_collections():
        yield from _items(path, _plan(path, format))


def read_traces(paths: Sequence[Path | str], format: str | None = None) -> IngestResult:
    """Read every trace in ``paths``: files, directories and glob patterns (``**`` recursive),
    expanded in a stable order by :func:`expand_inputs`.

    A file that is empty, damaged or not recognised becomes a problem and the other files are
    still read. A trace whose spans are in several files (or listed twice in one) is handed on
    once, merged (:func:`~auditor.trace.merge_split_traces`).

    Raises:
        UsageError: ``format`` names no installed adapter, a path does not exist or is not a
            regular file, a pattern matches nothing or a directory holds no data file.
        InputReadError: the operating system failed to read a file (the message names it).
        NothingReadError: no trace could be read from any input; the one-line message names the
            files and what was tried on each.
    """
    if format:
        get_adapter(format)  # fail early with the list of installed adapters
    files = expand_inputs(paths)
    for path in files:
        check_regular(path)  # before reading anything: a bad path fails the run at once
    result = IngestResult()
    tried: list[tuple[Source, _Plan, list[Problem]]] = []
    for path in files:
        read, problems, plan = _read_file(path, format, result.traces.append)
        result.problems.extend(problems)
        result.inputs.append(read)
        tried.append((path, plan, problems))
    if not result.traces:
        raise NothingReadError(_nothing_read(tried))
    result.traces = merge_split_traces(result.traces, result.problems)
    return result


def read_file(
    path: Source, format: str | None, keep: Callable[[Trace], object], *, digest: bool = True
) -> tuple[InputFile, list[Problem]]:
    """Read one file as :func:`read_traces` does (checked, sniffed, digested), handing each
    trace to ``keep`` as it is whole; its record and its problems.

    For readers that index or filter a file without holding its traces (``auditor.scale``).
    ``digest=False`` leaves the record's ``sha256`` empty and spares the second read it takes.

    Raises:
        UsageError, InputReadError: as :func:`read_traces`, for this file.
    """
    check_regular(path)
    read, problems, _ = _read_file(path, format, keep, digest)
    return read, problems


def _read_file(
    path: Source, format: str | None, keep: Callable[[Trace], object], digest: bool = True
) -> tuple[InputFile, list[Problem], _Plan]:
    count = 0
    problems: list[Problem] = []
    with _reading(path), fewer_collections():
        plan = _plan(path, format)
        for item in _items(path, plan):
            if isinstance(item, Trace):
                keep(item)
                count += 1
            else:
                problems.append(item)
    sha256 = file_digest(path) if digest else ""
    return InputFile(str(path), sha256, plan.name, count), problems, plan


def _nothing_read(tried: list[tuple[Source, _Plan, list[Problem]]]) -> str:
    """One line: each file and what happened to it, then what to do."""
    parts: list[str] = []
    for path, plan, problems in tried[:5]:
        if plan.adapter is None:
            parts.append(f"{path} ({plan.skipped})")
            continue
        errors = [p for p in problems if p.severity is Severity.ERROR] or problems
        if not errors:
            parts.append(f"{path} (read as {plan.name}: it holds no spans)")
            continue
        first = errors[0]
        where = f"line {first.line}: " if first.line is not None else ""
        parts.append(
            f"{path} (read as {plan.name}: {len(problems)} problem(s), the first: {where}"
            f"{clip(first.reason, 200)})"
        )
    more = f"; and {len(tried) - 5} more file(s)" if len(tried) > 5 else ""
    files = "the input" if len(tried) == 1 else f"any of the {len(tried)} inputs"
    return (
        f"No trace could be read from {files}: {'; '.join(parts)}{more}. "
        "Check the file(s) named; `auditor adapters` lists the formats that can be read."
    )
