"""One input file as a stream of bytes: checked, decompressed, and honest about what went wrong.

Only regular files are read (a FIFO would block the run, ``/dev/zero`` never ends). A gzip file
is decompressed with :mod:`zlib` directly, member by member, so a truncated or damaged stream
still gives every byte before the damage and then a clean end of file, with the fault kept in
:attr:`InputStream.fault` for the ingest to report (``gzip.GzipFile`` raises instead, losing
the last block read). An ``OSError`` while reading (EIO, a vanished network mount) is kept in
:attr:`InputStream.read_error` before it propagates, so an adapter that catches it cannot hide it.
A leading UTF-8 byte-order mark is skipped: adapters see the text after it.
"""

from __future__ import annotations

import io
import stat
import zlib
from pathlib import Path
from typing import BinaryIO

from auditor.errors import InputReadError, UsageError
from auditor.trace._discover import Source, is_url, open_url, url_filesystem

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20
_FEED = 1 << 12
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_url(url: str) -> None:
    fs, path = url_filesystem(url)
    try:
        kind = fs.info(path).get("type")
    except FileNotFoundError:
        raise UsageError(f"{url}: no such file.") from None
    except OSError as err:
        raise InputReadError(url, err) from err
    if kind != "file":
        raise UsageError(f"{url}: not a file ({kind or 'unknown kind'}); name a trace file.")


def check_regular(path: Source) -> None:
    """Raise unless ``path`` is a regular file (following symlinks), without opening it.

    A URL (:func:`~auditor.trace._discover.is_url`) is asked of its fsspec filesystem.

    Raises:
        UsageError: no such file, or not a regular file (or a URL that cannot be read).
        InputReadError: the file cannot be inspected (permissions on a directory above it, say).
    """
    if is_url(path):
        return _check_url(str(path))
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file.") from None
    except OSError as err:
        raise InputReadError(path, err) from err
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        raise UsageError(f"{path}: not a regular file ({kind}); pass a trace file saved on disk.")


class InputStream(io.RawIOBase):
    """The bytes of one file, decompressed when it is gzip; see the module docstring."""

    def __init__(self, raw: io.RawIOBase) -> None:
        self._raw = raw
        self.read_error: OSError | None = None
        self.fault: str | None = None  # a damaged or truncated gzip stream
        first = self._read_raw(2)
        self.gzip = first == GZIP_MAGIC
        self._z = zlib.decompressobj(wbits=31) if self.gzip else None
        self._pending = first  # raw bytes (plain) or compressed input (gzip) not handed out yet
        self._out = b""
        self._at = 0  # bytes of _out already handed out
        self._in_member = False
        self._done = False

    def readable(self) -> bool:
        return True

    def _read_raw(self, size: int) -> bytes:
        try:
            return self._raw.read(size) or b""
        except OSError as err:
            self.read_error = err
            raise

    def _decompressed(self) -> bytes:
        """The next piece of decompressed output; b"" at the end (clean or not)."""
        while not self._done and self._z is not None:
            if self._z.eof:  # a member ended: another may follow (concatenated gzip files)
                rest = self._z.unused_data.lstrip(b"\x00")  # zero padding after a member is allowed
                self._z = zlib.decompressobj(wbits=31)
                self._pending = rest + self._pending
                self._in_member = False
            # Small pieces: on damage zlib raises, and the output of the piece it was given is lost.
            data = self._pending or self._read_raw(_FEED)
            self._pending = b""
            if not data:
                if self._in_member:
                    self.fault = (
                        "truncated gzip stream: the file ends inside the compressed data (an interrupted "
                        "copy or download?); what came before the cut was read"
                    )
                self._done = True
                return b""
            if not self._in_member and not data.startswith(GZIP_MAGIC[: len(data)]):
                if data.strip(b"\x00"):
                    self.fault = "data after the end of the gzip stream is not gzip; it was ignored"
                self._done = True
                return b""
            self._in_member = True
            try:
                out = self._z.decompress(data, _CHUNK)
            except zlib.error as err:
                self.fault = f"damaged gzip stream ({err}); what came before the damage was read"
                self._done = True
                return b""
            self._pending = self._z.unconsumed_tail
            if out:
                return out
        return b""

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        """Fill ``buffer`` as far as the input allows (0 only at the end)."""
        buffer = memoryview(buffer).cast("B")  # io may pass a bytearray, whose slices are copies
        size = 0
        while size < len(buffer):
            if self._at >= len(self._out):
                if self._z is None and not self._pending:
                    got = self._readinto_raw(buffer[size:])
                    if not got:
                        break
                    size += got
                    continue
                self._out, self._at = self._next(), 0
                if not self._out:
                    break
            take = min(len(buffer) - size, len(self._out) - self._at)
            buffer[size : size + take] = self._out[self._at : self._at + take]
            self._at += take
            size += take
        return size

    def _next(self) -> bytes:
        if self._z is not None:
            return self._decompressed()
        data, self._pending = self._pending, b""
        return data

    def _readinto_raw(self, buffer: memoryview) -> int:
        try:
            return self._raw.readinto(buffer) or 0
        except OSError as err:
            self.read_error = err
            raise

    def readall(self) -> bytes:
        parts: list[bytes] = []
        while True:
            block = self.read(_CHUNK)
            if not block:
                return b"".join(parts)
            parts.append(block)

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_raw(path: Source) -> BinaryIO:
    """The file's bytes as stored, unbuffered for a local file; a URL through fsspec."""
    if is_url(path):
        return open_url(str(path))
    return open(path, "rb", buffering=0)


def open_input(path: Source) -> tuple[BinaryIO, InputStream]:
    """The file's bytes after any byte-order mark, buffered, and the stream below (to ask for faults).

    Call :func:`check_regular` first: opening a FIFO blocks.
    """
    raw = open_raw(path)
    try:
        source = InputStream(raw)  # type: ignore[arg-type]  # read and readinto are all it uses
    except BaseException:
        raw.close()
        raise
    stream = io.BufferedReader(source, buffer_size=1 << 16)
    if stream.peek(len(BOM))[: len(BOM)] == BOM:
        stream.read(len(BOM))
    return stream, source
