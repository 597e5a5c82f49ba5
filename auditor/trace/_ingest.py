"""Read trace files through the installed adapters, recording every problem.

This module owns the file: it opens it, decompresses gzip, computes its digest (for the run
record), picks the adapter (``--format`` or sniffing the first bytes) and collects the traces and
problems the adapter yields. An input that cannot be opened or recognised is a problem of the
run, not a crash; :func:`read_traces` raises only when nothing at all could be read.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from auditor.errors import NothingReadError, UsageError
from auditor.trace._adapters import SNIFF_BYTES, InstalledAdapter, TraceAdapter, detect_adapter, get_adapter
from auditor.trace._model import Trace
from auditor.trace._problems import Problem, Severity

_GZIP_MAGIC = b"\x1f\x8b"


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


def file_digest(path: Path) -> str:
    """SHA-256 of the file's bytes as stored (compressed or not)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _SafeGzip(io.RawIOBase):
    """A gzip reader that turns a truncated or corrupt stream into a clean end of file.

    The adapters then see a truncated input (which they report) instead of an exception.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._inner = gzip.GzipFile(fileobj=raw)
        self.error: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.error is not None:
            return 0
        try:
            data = self._inner.read(len(buffer))
        except (EOFError, OSError, zlib.error) as err:
            self.error = f"compressed stream is damaged or truncated ({err})"
            return 0
        buffer[: len(data)] = data
        return len(data)


def _open(path: Path) -> tuple[BinaryIO, _SafeGzip | None]:
    """The file's decompressed bytes, and the gzip reader when there is one (to ask for errors)."""
    raw = path.open("rb")
    if raw.read(2) == _GZIP_MAGIC:
        raw.seek(0)
        unzipped = _SafeGzip(raw)
        return io.BufferedReader(unzipped, buffer_size=1 << 16), unzipped
    raw.seek(0)
    return raw, None


def iter_file(path: Path, format: str | None = None) -> Iterator[Trace | Problem]:
    """Yield the traces and problems of one file, as its adapter produces them.

    Raises:
        UsageError: the file does not exist, or ``format`` names no installed adapter.
    """
    if not path.is_file():
        raise UsageError(f"{path}: no such file.")
    adapter: TraceAdapter = get_adapter(format) if format else _detect(path).adapter
    stream, gz = _open(path)
    with stream:
        yield from adapter.parse(stream, str(path))
    if gz is not None and gz.error:
        yield Problem(file=str(path), reason=gz.error)


def _detect(path: Path) -> InstalledAdapter:
    stream, _ = _open(path)
    with stream:
        head = stream.read(SNIFF_BYTES)
    return detect_adapter(head, str(path))


def adapter_name_for(path: Path, format: str | None) -> str:
    return format or _detect(path).name


def read_traces(paths: Sequence[Path], format: str | None = None) -> IngestResult:
    """Read every trace in ``paths``.

    A file that cannot be recognised becomes a problem and the other files are still read.

    Raises:
        UsageError: ``format`` names no installed adapter, or a path does not exist.
        NothingReadError: no trace could be read from any input; its message lists the problems.
    """
    if format:
        get_adapter(format)  # fail early with the list of installed adapters
    result = IngestResult()
    for path in paths:
        if not path.is_file():
            raise UsageError(f"{path}: no such file.")
        count = 0
        try:
            name = adapter_name_for(path, format)
        except UsageError as err:
            result.problems.append(Problem(file=str(path), reason=str(err), severity=Severity.ERROR))
            result.inputs.append(InputFile(str(path), file_digest(path), None))
            continue
        for item in iter_file(path, name):
            if isinstance(item, Trace):
                result.traces.append(item)
                count += 1
            else:
                result.problems.append(item)
        result.inputs.append(InputFile(str(path), file_digest(path), name, count))
    if not result.traces:
        listed = "\n".join(f"  {p}" for p in result.problems[:20]) or "  (the inputs hold no spans)"
        raise NothingReadError(f"No trace could be read.\n{listed}")
    return result
