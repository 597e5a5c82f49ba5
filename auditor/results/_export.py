"""Write :class:`ClaimRow`s as JSON Lines, CSV or Parquet (``auditor export``).

JSON Lines keeps every value's type (lists as arrays, null as null). CSV has no types: an empty
cell is null, booleans are ``true``/``false`` and list columns hold a JSON array, so a reader can
get the lists back exactly (``json.loads``). CSV has no escapes either, and ends up in terminals
(``cat``, ``column -t``) as often as in spreadsheets: control characters and bidi marks in a text
cell are written visible (:func:`auditor.text.printable`: ESC as ``␛``), as the console shows them,
and list cells are JSON with those characters as ``\\uXXXX`` (the same data). JSON Lines and Parquet
keep every text exactly. Parquet (``pyarrow``, the optional ``parquet`` extra)
has an explicit schema, so a column that is null on every row still has its type.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from auditor.errors import UsageError
from auditor.results._rows import COLUMNS, LIST_COLUMNS, ClaimRow
from auditor.text import json_printable, printable

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

ExportFormat = Literal["jsonl", "csv", "parquet"]
FORMATS: tuple[ExportFormat, ...] = ("jsonl", "csv", "parquet")


def write_rows(rows: Iterable[ClaimRow], output: Path | SupportsWrite[str], format: ExportFormat) -> int:
    """Write ``rows`` to ``output`` (a file path, or a text stream for jsonl and csv).

    Returns:
        The number of rows written.

    Raises:
        UsageError: Parquet asked for without pyarrow installed, or Parquet to a text stream.
    """
    if format == "parquet":
        if not isinstance(output, Path):
            raise UsageError("--format parquet writes a binary file: name it with -o FILE, not -.")
        return _parquet(rows, output)
    if isinstance(output, Path):
        with output.open("w", encoding="utf-8", newline="") as stream:
            return _text(rows, stream, format)
    return _text(rows, output, format)


def _text(rows: Iterable[ClaimRow], stream: SupportsWrite[str], format: ExportFormat) -> int:
    count = 0
    if format == "jsonl":
        for row in rows:
            stream.write(json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n")
            count += 1
        return count
    writer = csv.writer(stream)
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(_csv_cell(name, value) for name, value in row.model_dump(mode="json").items())
        count += 1
    return count


#: First characters a spreadsheet reads as the start of a formula (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would run it as a formula: an answer or a
    tool result is written by a model or a stranger, and a cell like ``=HYPERLINK(...)`` must open
    as text. Spreadsheets hide the ``'``; :func:`from_formula_safe` takes it off (a text that
    itself opens with ``'`` gets one too, so reading back is exact)."""
    return "'" + text if text.startswith(FORMULA_STARTS) or text.startswith("'") else text


def from_formula_safe(cell: str) -> str:
    """A cell written by :func:`formula_safe`, as the text it holds."""
    return cell[1:] if cell.startswith("'") else cell


def _csv_cell(name: str, value: Any) -> str:
    if name in LIST_COLUMNS:
        return json_printable(json.dumps(value, ensure_ascii=False))
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return formula_safe(printable(value, keep_newlines=True))
    return str(value)


def _parquet(rows: Iterable[ClaimRow], path: Path) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as err:
        raise UsageError(
            "--format parquet needs pyarrow: pip install 'trace-auditor[parquet]' (or choose jsonl or csv)."
        ) from err
    types = {
        str: pa.string(),
        int: pa.int64(),
        float: pa.float64(),
        bool: pa.bool_(),
        list: pa.list_(pa.string()),
    }
    fields = []
    for name, info in ClaimRow.model_fields.items():
        base = _base_type(info.annotation)
        fields.append(pa.field(name, types[base]))
    schema = pa.schema(fields)
    data = [row.model_dump(mode="json") for row in rows]
    pq.write_table(pa.Table.from_pylist(data, schema=schema), path)
    return len(data)


def _base_type(annotation: Any) -> type:
    """``str | None`` -> ``str``; ``list[str]`` -> ``list``."""
    origin = getattr(annotation, "__origin__", None)
    if origin is list:
        return list
    for candidate in (bool, int, float, str):  # bool before int: a bool is an int
        if annotation is candidate or candidate in getattr(annotation, "__args__", ()):
            return candidate
    raise TypeError(f"no Parquet type for {annotation!r}")  # a new ClaimRow field needs one here


__all__ = ["FORMATS", "ExportFormat", "write_rows"]
