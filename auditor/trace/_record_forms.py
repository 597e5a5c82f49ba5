"""The ``records`` adapter's other file forms: a JSON array, CSV / TSV and Parquet of records.

:mod:`auditor.trace._records` reads JSON Lines and hands any other form here. A record is the
same in every form (the dev-set shape or the RAGAS / ``datasets`` columns, see that module), is
turned into a trace by the same :func:`~auditor.trace._record_shape.record_trace`, and keeps the same
stable id: its ``id`` lower-cased, or, with none, ``line-<n>-<digest>`` (``row-<n>-<digest>`` in
Parquet, which has no lines) over the record's canonical JSON. A row that cannot be read, has no
answer, or repeats an id is a :class:`~auditor.trace.Problem` naming the file and the line (or
``row N`` in Parquet) and what is wrong, and the other rows are still read.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any, BinaryIO

from auditor.text import short_digest
from auditor.trace._model import Trace
from auditor.trace._problems import Problem, Severity
from auditor.trace._record_rows import Row, form_rows, record_form
from auditor.trace._record_shape import (
    _ANSWER_RE,
    _FOREIGN,
    _QUESTION_RE,
    _SOURCES_RE,
    record_trace,
)
from auditor.trace._repair import repair_trace

__all__ = ["parse_form", "peek_form", "sniff_form"]

_PEEK = 4096


class _Replay(io.RawIOBase):
    """``head`` again, then the rest of ``stream``: a stream that cannot peek or seek, re-read."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head, self._stream = head, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            size = min(len(buffer), len(self._head))
            buffer[:size], self._head = self._head[:size], self._head[size:]
            return size
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def peek_form(stream: BinaryIO) -> tuple[str | None, BinaryIO]:
    """The form of records the stream holds (None for JSON Lines), and the stream to read from
    its start: the same one when it can peek (the ingest's buffered reader) or seek."""
    peek = getattr(stream, "peek", None)
    if peek is not None:
        return record_form(peek(_PEEK)[:_PEEK]), stream
    head = stream.read(_PEEK)
    if stream.seekable():
        stream.seek(-len(head), io.SEEK_CUR)
        return record_form(head), stream
    return record_form(head), io.BufferedReader(_Replay(head, stream))


def sniff_form(first_bytes: bytes) -> bool:
    """Whether the first bytes start a Parquet file, or a JSON array or CSV of records."""
    try:
        head = first_bytes.removeprefix(b"\xef\xbb\xbf")
        form = record_form(head)
        if form != "json-array":
            return form is not None
        if any(f in head for f in _FOREIGN):
            return False
        return _SOURCES_RE.search(head) is not None and (
            _ANSWER_RE.search(head) is not None or _QUESTION_RE.search(head) is not None
        )
    except Exception:  # the contract: sniff never raises
        return False


def _trace_id(row: Row, data: dict[str, Any]) -> str:
    raw_id = data.get("id")
    if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) and str(raw_id).strip():
        return str(raw_id).strip().lower()
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    where = f"line-{row.line}" if row.line is not None else f"row-{row.row}"
    return f"{where}-{short_digest(canonical)}"


def parse_form(form: str, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]:
    """Yield one trace per record of a stream in ``form``, and a problem per row skipped or repaired."""
    seen: dict[str, str] = {}
    for row in form_rows(form, stream):
        at = "" if row.line is not None or row.row == 0 else f"row {row.row}: "
        if row.data is None:
            yield Problem(file=source, line=row.line, reason=f"{at}{row.error}")
            continue
        trace_id = _trace_id(row, row.data)
        place = f"line {row.line}" if row.line is not None else f"row {row.row}"
        if trace_id in seen:
            yield Problem(
                file=source,
                line=row.line,
                trace_id=trace_id,
                reason=f"{at}record id {trace_id!r} repeats {seen[trace_id]}; row skipped",
            )
            continue
        try:
            trace, issues = record_trace(row.data, trace_id, source, row.line or row.row)
        except ValueError as err:
            yield Problem(file=source, line=row.line, trace_id=trace_id, reason=f"{at}{err}; row skipped")
            continue
        seen[trace_id] = place
        for issue in issues:
            yield Problem(
                file=source,
                line=row.line,
                reason=f"{at}{issue}",
                severity=Severity.WARNING,
                trace_id=trace_id,
            )
        trace, repaired = repair_trace(trace, source)
        yield from repaired
        yield trace
