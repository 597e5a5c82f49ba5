"""Evaluation records that are not JSON Lines: a JSON array, CSV (or TSV) and Parquet, row by row.

These are the shapes RAGAS and Hugging Face ``datasets`` export (``to_json(lines=False)``,
``to_csv``, ``to_parquet``). Each reader yields :class:`Row` objects: a record as a ``dict``, or
the reason the row cannot be read; :mod:`auditor.trace._record_forms` turns them into traces.

- **JSON array**: decoded element by element from a sliding buffer, so a large file is not read
  whole; each row knows the line its element starts on. A syntax error ends the file (a JSON text
  cannot be resynchronised) with the rows before it kept.
- **CSV**: the header names the columns (an empty cell counts as absent). A contexts column holds
  a list as JSON (``["a", "b"]``), as a Python literal (``['a', 'b']``, pandas' ``to_csv``) or as
  NumPy's print form (``['a' 'b']``, ``datasets``' ``to_csv``), read with :mod:`json`,
  :mod:`tokenize` and :func:`ast.literal_eval`, never ``eval``; any other text is one context.
- **Parquet**: read with ``pyarrow`` (the ``parquet`` extra) in record batches, after spooling the
  stream to a temporary file when it is large (Parquet keeps its index at the end).
"""

from __future__ import annotations

import ast
import csv
import io
import json
import tempfile
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from auditor.trace._record_shape import ANSWER_KEYS, SOURCE_KEYS

PARQUET_MAGIC = b"PAR1"
DELIMITERS = (",", "\t", ";")
_CHUNK = 1 << 16
_BATCH = 256
_SPOOL = 64 << 20
_MAX_ITEM = 64 << 20  # characters of one JSON array element
# Contexts cells hold whole passages: the csv module's 128 KiB default field limit is too small.
_FIELD_LIMIT = 256 << 20


@dataclass(frozen=True)
class Row:
    """One record read from a file, or why it could not be read."""

    row: int  # 1-based position among the records
    line: int | None  # the line it starts on, where the format has lines
    data: dict[str, Any] | None = None
    error: str | None = None


def _text(stream: BinaryIO) -> io.TextIOWrapper:
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")


def array_rows(stream: BinaryIO) -> Iterator[Row]:
    """The elements of a JSON array of objects (see the module docstring)."""
    reader = _text(stream)
    decoder = json.JSONDecoder()
    buf, pos, line, row, at_eof = "", 0, 1, 0, False

    def fill() -> bool:
        nonlocal buf, pos, at_eof
        chunk = reader.read(_CHUNK)
        at_eof = not chunk
        buf, pos = buf[pos:] + chunk, 0
        return bool(chunk)

    def skip_space() -> str:
        """The next non-space character (not consumed), or "" at the end; counts lines."""
        nonlocal pos, line
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n":
                line += buf[pos] == "\n"
                pos += 1
            if pos < len(buf) or not fill():
                return buf[pos : pos + 1]

    if skip_space() != "[":
        yield Row(1, line, error="the file is not a JSON array")
        return
    pos += 1
    expect_item = True
    while True:
        char = skip_space()
        if char == "]" and (row == 0 or not expect_item):
            return
        if not expect_item:
            if char != ",":
                what = (
                    "the array is cut off (truncated file?)"
                    if not char
                    else f"expected ',' or ']', found {char!r}"
                )
                yield Row(row + 1, line, error=f"{what}; the rest of the file is not read")
                return
            pos += 1
            expect_item = True
            continue
        row += 1
        while True:
            try:
                value, end = decoder.raw_decode(buf, pos)
            except RecursionError:
                yield Row(row, line, error="JSON nested too deeply to read; the rest of the file is not read")
                return
            except ValueError as err:
                # The element may continue in the next chunk; past _MAX_ITEM it is taken as broken,
                # so one bad element does not pull the rest of a large file into memory.
                if not at_eof and len(buf) - pos < _MAX_ITEM and fill():
                    continue
                # At the end of the file: no closing bracket means the file was cut, not mistyped.
                reason = (
                    "the array is cut off (truncated file?)"
                    if not buf.rstrip().endswith("]")
                    else "not valid JSON"
                )
                yield Row(row, line, error=f"{reason} ({err.args[0]}); the rest of the file is not read")
                return
            if end == len(buf) and not at_eof and fill():
                continue  # a number or literal may go on in the next chunk: decode it whole
            break
        start = line
        line += buf.count("\n", pos, end)
        pos = end
        expect_item = False
        if isinstance(value, dict):
            yield Row(row, start, data=value)
        else:
            yield Row(row, start, error=f"expected a JSON object, got {type(value).__name__}; row skipped")


def sniff_delimiter(header: str) -> str | None:
    """The delimiter that splits ``header`` into record columns (an answer and a contexts column)."""
    for delimiter in DELIMITERS:
        try:
            names = set(_header_cells(header, delimiter))
        except csv.Error:
            continue
        if names & set(ANSWER_KEYS) and names & set(SOURCE_KEYS):
            return delimiter
    return None


def _header_cells(line: str, delimiter: str) -> list[str]:
    """The column names of a header ``line``; raises ``csv.Error`` when it is not valid CSV."""
    return [n.strip() for n in next(csv.reader([line], delimiter=delimiter), [])]


def csv_rows(stream: BinaryIO) -> Iterator[Row]:
    """The data rows of a CSV file with a header row (see the module docstring)."""
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    reader_text = _text(stream)
    header_line = reader_text.readline()
    delimiter = sniff_delimiter(header_line) or ","
    try:
        header = _header_cells(header_line, delimiter)
    except csv.Error as err:
        yield Row(0, 1, error=f"the header row is not valid CSV ({err}); file skipped")
        return
    reader = csv.reader(reader_text, delimiter=delimiter)
    row, line = 0, 2  # the header is line 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            row += 1
            yield Row(row, line, error=f"not valid CSV ({err}); row skipped")
            line = reader.line_num + 2
            continue
        start, line = line, reader.line_num + 2
        if not any(c.strip() for c in cells):
            continue  # a blank line
        row += 1
        if len(cells) > len(header):
            yield Row(row, start, error=f"{len(cells)} cells for {len(header)} columns; row skipped")
            continue
        data: dict[str, Any] = {}
        error = None
        for name, cell in zip(header, cells, strict=False):
            if not cell.strip():
                continue  # an empty cell is an absent value
            if name in SOURCE_KEYS:
                parsed, error = parse_list_cell(cell, name)
                if error is not None:
                    break
                data[name] = parsed
            else:
                data[name] = cell
        yield Row(row, start, error=f"{error}; row skipped") if error else Row(row, start, data=data)


def parse_list_cell(cell: str, column: str) -> tuple[Any, str | None]:
    """A contexts cell's value: a list when it holds one (JSON, Python literal, NumPy print form),
    the text itself when it does not look like a list, or the reason it cannot be read."""
    text = cell.strip()
    if not text.startswith(("[", "{")):
        return cell, None  # one context, as plain text
    try:
        return json.loads(text), None
    except (ValueError, RecursionError):
        pass
    strings = _string_list(text)
    if strings is not None:
        return strings, None
    try:
        return ast.literal_eval(text), None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None, (
            f"column {column!r} starts like a list but is neither JSON nor a Python literal list; "
            "write it as a JSON list of strings"
        )


def _string_list(text: str) -> list[str] | None:
    """A bracketed list of string literals, with or without commas between them (NumPy prints
    ``['a' 'b']``, which ``ast.literal_eval`` would join into one string): each literal apart."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    items: list[str] = []
    state = "open"
    try:
        for tok in tokens:
            if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.type == tokenize.ENDMARKER:
                break
            if state == "open":
                if tok.string != "[":
                    return None
                state = "item"
            elif state == "done":
                return None
            elif tok.type == tokenize.STRING and state in ("item", "sep"):
                items.append(_string_value(tok.string))
                state = "sep"
            elif tok.string == "," and state == "sep":
                state = "item"
            elif tok.string == "]" and state in ("item", "sep"):
                state = "done"
            else:
                return None
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return items if state == "done" else None


def _string_value(token: str) -> str:
    """The value of one string literal token: sliced when plain (most are; ``literal_eval`` is
    the slow part of reading a CSV), evaluated as a literal otherwise.

    Raises:
        ValueError: not a ``str`` literal (bytes, an f-string).
    """
    quote = token[0]
    if quote in "'\"" and "\\" not in token and not token.startswith(quote * 3):
        return token[1:-1]
    value = ast.literal_eval(token)
    if not isinstance(value, str):
        raise ValueError("not a str literal")
    return value


def parquet_rows(stream: BinaryIO) -> Iterator[Row]:
    """The rows of a Parquet file, in record batches (see the module docstring)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        yield Row(
            1,
            None,
            error="reading Parquet needs pyarrow: pip install 'trace-auditor[parquet]' "
            "(or export the records as JSON Lines)",
        )
        return
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL) as spool:
        while block := stream.read(1 << 20):
            spool.write(block)
        spool.seek(0)
        try:
            table = pq.ParquetFile(spool)
            batches = table.iter_batches(batch_size=_BATCH)
            row = 0
            for batch in batches:
                for record in batch.to_pylist():
                    row += 1
                    data = {k: v for k, v in record.items() if v is not None}
                    yield Row(row, None, data=data)
        except Exception as err:  # pyarrow's errors (ArrowInvalid, OSError, ...) share no base
            yield Row(0, None, error=f"not a readable Parquet file ({type(err).__name__}: {err})")


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:1024]


def record_form(head: bytes) -> str | None:
    """Which non-JSONL form ``head`` (a file's first bytes) starts: ``parquet``, ``json-array``,
    ``csv``, or None."""
    head = head.removeprefix(b"\xef\xbb\xbf")
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    text = head.lstrip(b" \t\r\n")
    if text.startswith(b"["):
        return "json-array" if text[1:].lstrip(b" \t\r\n").startswith((b"{", b"]")) else None
    if text.startswith(b"{") or _is_binary(head):
        return None
    header = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    return "csv" if sniff_delimiter(header) is not None else None


def form_rows(form: str, stream: BinaryIO) -> Iterator[Row]:
    """The rows of a stream in ``form`` (see :func:`record_form`)."""
    readers = {"parquet": parquet_rows, "json-array": array_rows, "csv": csv_rows}
    yield from readers[form](stream)
