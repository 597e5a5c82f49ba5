"""Bounded reads of the input: chunked bytes with lines, and a sliding window of decoded text.

Memory holds about one chunk plus the value being read; invalid UTF-8 is replaced, with one warning
per file, whichever of the two reads it.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from auditor.trace import Problem, Severity

_DECODER = json.JSONDecoder()
CHUNK = 1 << 20
#: A whole string (group 1 is its closing quote), a string cut off by the end of the buffer, or a bracket.
_SCAN = re.compile(r'"(?:[^"\\]|\\.)*(?:(")|\\?\Z)|[\[\]{}]', re.S)


class Bytes:
    """Chunked reads of the input (``read(n)`` only), with lines and one-time UTF-8 repair."""

    def __init__(self, stream: BinaryIO, source: str) -> None:
        self.stream = stream
        self.source = source
        self.buf = b""
        self.off = 0  # bytes of buf already handed out
        self.eof = False
        self.utf8_warned = False

    def chunk(self) -> bytes:
        if self.off < len(self.buf):
            data = self.buf[self.off :] if self.off else self.buf
            self.buf, self.off = b"", 0
            return data
        if self.eof:
            return b""
        data = self.stream.read(CHUNK)
        if not data:
            self.eof = True
        return data

    def readline(self, limit: int = -1) -> bytes:
        cut = self.buf.find(b"\n", self.off)
        if cut >= 0:  # the common line, whole in the chunk: no parts to join
            line = self.buf[self.off : cut + 1]
            self.off = cut + 1
            return line
        parts: list[bytes] = []
        size = 0
        while True:
            if self.off >= len(self.buf):
                self.buf, self.off = self.chunk(), 0
                if not self.buf:
                    break
            cut = self.buf.find(b"\n", self.off)
            if cut >= 0:
                parts.append(self.buf[self.off : cut + 1])
                self.off = cut + 1
                break
            parts.append(self.buf[self.off :])
            size += len(self.buf) - self.off
            self.buf, self.off = b"", 0
            if 0 <= limit <= size:
                break
        return b"".join(parts)

    def lines(self) -> Iterator[bytes]:
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def decode(self, data: bytes, line: int | None, problems: list[Problem]) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if not self.utf8_warned:
                self.utf8_warned = True
                at = (line or 1) + data.count(b"\n", 0, exc.start)
                problems.append(
                    Problem(
                        file=self.source,
                        line=at,
                        severity=Severity.WARNING,
                        reason="invalid UTF-8; undecodable bytes replaced with U+FFFD",
                    )
                )
            return data.decode("utf-8", errors="replace")


class Text:
    """A sliding window of decoded text over :class:`Bytes`, for reading one JSON value at a time.

    Consumed text is dropped, so the window holds about one chunk plus the value being read.
    """

    def __init__(self, data: Bytes, head: bytes, problems: list[Problem]) -> None:
        self.data = data
        self.problems = problems
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf = ""
        self.pos = 0
        self.line_base = 1  # line number of buf[0]
        self._counted = 0  # newlines in buf[:_counted_to]
        self._counted_to = 0
        self.eof = False
        self._feed(head, final=False)
        self.buf = self.buf.removeprefix("\ufeff")

    def _feed(self, raw: bytes, final: bool) -> None:
        state = self.decoder.getstate()
        try:
            text = self.decoder.decode(raw, final)
        except UnicodeDecodeError as exc:
            if not self.data.utf8_warned:
                self.data.utf8_warned = True
                line = (
                    self.line_base
                    + self.buf.count("\n")
                    + raw.count(b"\n", 0, max(exc.start - len(state[0]), 0))
                )
                self.problems.append(
                    Problem(
                        file=self.data.source,
                        line=line,
                        severity=Severity.WARNING,
                        reason="invalid UTF-8; undecodable bytes replaced with U+FFFD",
                    )
                )
            self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
            self.decoder.setstate(state)
            text = self.decoder.decode(raw, final)
        self.buf += text

    def more(self) -> bool:
        """Read another chunk (or more, for a long value); False at the end of the input."""
        if self.eof:
            return False
        if self.pos > CHUNK:
            self.line_base = self.line()
            self.buf = self.buf[self.pos :]
            self.pos = self._counted = self._counted_to = 0
        want = len(self.buf) - self.pos  # at least one read; doubling keeps a long value linear
        got = 0
        while True:
            raw = self.data.chunk()
            if not raw:
                self._feed(b"", final=True)
                self.eof = True
                break
            got += len(raw)
            self._feed(raw, final=False)
            if got >= want:
                break
        return True

    def skip_ws(self) -> str:
        """The next non-blank character ('' at the end), left unconsumed."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def line(self) -> int:
        """The line number at the cursor (counted on from the last call, not from the start)."""
        if self.pos < self._counted_to:
            self._counted = self._counted_to = 0
        self._counted += self.buf.count("\n", self._counted_to, self.pos)
        self._counted_to = self.pos
        return self.line_base + self._counted

    def ensure(self, size: int) -> None:
        while len(self.buf) - self.pos < size and self.more():
            pass

    def value(self) -> Any:
        """Decode the JSON value at the cursor; ValueError / RecursionError when it is not one."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if not self.eof and (exc.pos >= len(self.buf) - 16 or exc.msg.startswith("Unterminated")):
                    self.more()
                    continue
                raise json.JSONDecodeError(exc.msg, self.buf, exc.pos) from None
            self.pos = end
            return value

    def skip_value(self) -> bool:
        """Move past the array or object at the cursor without decoding it (it is too deep to
        decode); False when there is none or it does not end before the input does."""
        if self.skip_ws() not in ("[", "{"):
            return False
        depth, at = 0, 0  # at: offset from self.pos, which more() may move
        while True:
            match = _SCAN.search(self.buf, self.pos + at)
            if match is None or (match.group(1) is None and match.group().startswith('"')):
                # the buffer ends before the value (or inside a string): read on, scan again from there
                at = (match.start() if match is not None else len(self.buf)) - self.pos
                if not self.more():
                    return False
                continue
            at = match.end() - self.pos
            char = match.group()
            if char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
                if depth == 0:
                    self.pos += at
                    return True

    def error_line(self, exc: ValueError | RecursionError) -> int | None:
        if isinstance(exc, json.JSONDecodeError):
            return self.line_base + exc.doc.count("\n", 0, exc.pos)
        return None
