"""LangSmith ingest payloads: the request bodies the ``langsmith`` SDKs send, read as runs.

The SDKs (Python and JS) batch runs to the LangSmith API in one of two bodies, and a proxy or a
local endpoint that logs them (``LANGSMITH_ENDPOINT``) keeps files of them:

- ``POST /runs/batch``: JSON ``{"post": [run, ...], "patch": [run, ...]}``: runs created (often
  without ``end_time`` or ``outputs`` when posted at their start) and the later updates of
  runs, each carrying the run's ``id``; one body per line in a JSON Lines file;
- ``POST /runs/multipart``: ``multipart/form-data``, one part per run (``post.<id>`` or
  ``patch.<id>``, the run's fields as JSON) and its large fields in parts of their own
  (``post.<id>.inputs``, ``.outputs``, ``.events``, ``.extra``, ``.serialized``, ...);
  ``attachment.<id>.<name>`` parts are files and are not read. Bodies follow one another in a
  file, each opening with its ``--boundary`` line.

Posts come before patches; a patch is a later record of the same run, merged into it as the
collector merges any repeated record (the later fields win). Compressed bodies (zstd, gzip) are
not read: store them decompressed, as the request's ``Content-Encoding`` says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from auditor.trace import Problem

#: The keys of a ``/runs/batch`` body, in the order their runs are read.
BATCH_KEYS = ("post", "patch")
_PART_NAME = re.compile(rb'name="(post|patch)\.([^".]+)(?:\.([^"]+))?"')


def batch_runs(value: dict[str, Any]) -> list[Any] | None:
    """The runs of a ``{"post": [...], "patch": [...]}`` body (posts first), or None when
    ``value`` is not one."""
    if "run_type" in value or not any(isinstance(value.get(k), list) for k in BATCH_KEYS):
        return None
    if any(k not in BATCH_KEYS for k in value):
        return None
    runs: list[Any] = []
    for key in BATCH_KEYS:
        found = value.get(key)
        if isinstance(found, list):
            runs.extend(found)
    return runs


def is_multipart(first_line: bytes) -> bool:
    """Whether a file's first line opens a multipart body (``--boundary``)."""
    line = first_line.strip()
    return line.startswith(b"--") and len(line) > 2 and b" " not in line


def multipart_runs(
    lines: Iterator[tuple[int, bytes]], source: str
) -> Iterator[list[tuple[Any, int | None] | Problem]]:
    """Each multipart body's runs (posts, then patches, with the line of their part), one list per
    body; a part whose JSON does not read is a problem in its place."""
    boundary: bytes | None = None
    runs: dict[tuple[str, str], tuple[dict[str, Any], int]] = {}
    out: list[tuple[Any, int | None] | Problem] = []
    part: list[bytes] = []
    part_line = 0
    in_headers = False
    name: tuple[str, str, str | None] | None = None

    def close_part() -> None:
        if name is None:
            return
        verb, run_id, field = name
        data = b"".join(part)
        data = data[:-2] if data.endswith(b"\r\n") else data.removesuffix(b"\n")
        try:
            value = json.loads(data.decode("utf-8", errors="replace"))
        except ValueError as exc:
            out.append(
                Problem(
                    file=source,
                    line=part_line,
                    reason=f"multipart part {verb}.{run_id}{'.' + field if field else ''} is not JSON ({exc}); skipped",
                )
            )
            return
        run = runs.setdefault((verb, run_id), ({"id": run_id}, part_line))[0]
        if field is None:
            if isinstance(value, dict):
                run.update({k: v for k, v in value.items() if k not in run or k == "id"})
        else:
            run[field] = value

    def close_body() -> list[tuple[Any, int | None] | Problem]:
        ordered = sorted(runs.items(), key=lambda item: BATCH_KEYS.index(item[0][0]))
        body: list[tuple[Any, int | None] | Problem] = [*out, *((run, line) for _, (run, line) in ordered)]
        runs.clear()
        out.clear()
        return body

    for number, raw in lines:
        stripped = raw.rstrip(b"\r\n")
        if boundary is None:
            if not stripped:
                continue
            boundary = stripped
            in_headers, name, part = True, None, []
            continue
        if stripped == boundary or stripped == boundary + b"--":
            close_part()
            in_headers, name, part = True, None, []
            if stripped != boundary:  # the body's end: the next line opens another body
                boundary = None
                yield close_body()
            continue
        if in_headers:
            if not stripped:
                in_headers = False
                part_line = number + 1
                continue
            match = _PART_NAME.search(stripped)
            if match is not None and stripped.lower().startswith(b"content-disposition"):
                verb, run_id, field = (
                    g.decode("utf-8", errors="replace") if g else None for g in match.groups()
                )
                name = (str(verb), str(run_id), field)
            continue
        part.append(raw)
    close_part()
    body = close_body()
    if body:
        yield body
