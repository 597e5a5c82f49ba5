"""Tell the input layouts apart (JSON list, nested ``child_runs``, ``{"runs": [...]}``, JSONL, and
LangSmith's ingest bodies: ``{"post": [...], "patch": [...]}``, multipart) and stream each one, a
top-level record at a time, into the collector.

Never raises on malformed JSON: what cannot be read becomes a problem with its line number.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from collections.abc import Generator, Iterator
from typing import Any

from auditor.trace import Problem, Trace, loads_fast_writable
from auditor_langchain.buffers import CHUNK, Bytes, Text
from auditor_langchain.collect import Collector
from auditor_langchain.langsmith import batch_runs, is_multipart, multipart_runs
from auditor_langchain.records import describe, flatten

_RUNS_PREFIX = re.compile(r'\s*\{\s*"runs"\s*:\s*\[')
_RUN_FIELDS = ("run_type", "child_runs", "dotted_order", "parent_run_id", "start_time", "id")
#: The JSON reader recurses; about 1,000 levels (``child_runs`` about 500 runs deep) is its bound.
TOO_DEEP = "run nested too deeply to read (JSON deeper than about 1,000 levels, child_runs about 500)"


def read(data: Bytes, source: str, collector: Collector) -> Iterator[Trace | Problem]:
    """Pick the layout from the first lines, then stream it."""
    head: list[bytes] = []
    nonblank = 0
    while nonblank < 5:
        line = data.readline(CHUNK)
        if not line:
            break
        head.append(line)
        if line.strip():
            nonblank += 1
        if not line.endswith(b"\n"):
            break  # a long first line: one document, or the end
    if nonblank == 0:
        yield Problem(file=source, reason="file is empty")
        return
    first = [line.decode("utf-8", errors="replace") for line in head if line.strip()]
    first[0] = first[0].removeprefix("\ufeff")
    if is_multipart(first[0].encode()):
        yield from _read_multipart(enumerate(itertools.chain(head, data.lines()), start=1), source, collector)
        return
    if len(first) > 1 and _is_complete_json(first[0]):
        yield from _read_jsonl(enumerate(itertools.chain(head, data.lines()), start=1), data, collector)
        return
    yield from _read_document(data, b"".join(head), first, collector)


def _read_multipart(
    lines: Iterator[tuple[int, bytes]], source: str, collector: Collector
) -> Iterator[Trace | Problem]:
    """LangSmith ``/runs/multipart`` bodies, one after another: each body's runs fed as one record."""
    for body in multipart_runs(lines, source):
        problems = [item for item in body if isinstance(item, Problem)]
        values = [item for item in body if not isinstance(item, Problem)]
        yield from _feed(values, source, problems, collector)


def _is_complete_json(line: str) -> bool:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict | list)


def _feed(
    values: list[tuple[Any, int | None]],
    source: str,
    problems: list[Problem],
    collector: Collector,
    *,
    fast: bool = False,
    raw: bytes | None = None,
) -> list[Trace | Problem]:
    """The problems of unnesting one top-level value's runs, then what the collector gives for them
    (a list: a generator per record cost more)."""
    records = flatten(values, source, problems, fast=fast, raw=raw)
    out = collector.add(records)
    if problems:
        out[:0] = problems
        problems.clear()
    return out


def _read_jsonl(
    lines: Iterator[tuple[int, bytes]], data: Bytes, collector: Collector
) -> Iterator[Trace | Problem]:
    source = data.source
    for number, raw in lines:
        if not raw or raw.isspace():
            continue
        problems: list[Problem] = []
        try:
            value, fast = loads_fast_writable(raw)
        except ValueError:  # not surely read as json.loads would: read it so, with its messages
            fast = False
            line = data.decode(raw, number, problems)
            if number == 1:
                line = line.removeprefix("\ufeff")
            try:
                value = json.loads(line)
            except RecursionError:
                problems.append(Problem(file=source, line=number, reason=f"{TOO_DEEP}; line skipped"))
                yield from problems
                continue
            except ValueError as exc:
                problems.append(
                    Problem(file=source, line=number, reason=f"malformed JSON line skipped: {exc}")
                )
                yield from problems
                continue
        values = _expand(value, number, source, problems)
        # The line's bytes go with a line that is one run (flatten keeps them for a run without children).
        whole = raw if fast and len(values) == 1 and values[0][0] is value else None
        yield from _feed(values, source, problems, collector, fast=fast, raw=whole)


def _read_document(
    data: Bytes, head: bytes, first: list[str], collector: Collector
) -> Iterator[Trace | Problem]:
    """One or more top-level JSON values; the elements of a top-level array (or of the ``runs``
    array of a LangSmith export that starts with it) are read one at a time."""
    source = data.source
    problems: list[Problem] = []
    text = Text(data, head, problems)
    fed = collector.tick
    while True:
        char = text.skip_ws()
        if not char:
            break
        if char == "[":
            text.pos += 1
            if not (yield from _read_array(text, source, problems, collector)):
                return
            continue
        text.ensure(64)
        match = _RUNS_PREFIX.match(text.buf, text.pos)
        if match is not None:
            text.pos = match.end()
            if not (yield from _read_array(text, source, problems, collector)):
                return
            yield from _close_export(text, source)
            continue
        line = text.line()
        try:
            value = text.value()
        except RecursionError:
            if not (yield from _skip_deep(text, source, line, problems)):
                return
            continue
        except ValueError as exc:
            if collector.tick == fed and any(_is_complete_json(candidate) for candidate in first[1:]):
                # JSON Lines whose first line is broken: read again, line by line.
                yield from (p for p in problems if p.reason.startswith("invalid UTF-8"))
                rest = text.buf.encode("utf-8") + text.decoder.getstate()[0] + data.readline()
                lines = itertools.chain(io.BytesIO(rest), data.lines())
                yield from _read_jsonl(enumerate(lines, start=text.line_base), data, collector)
                return
            problems.append(_json_problem(source, exc, text.error_line(exc)))
            yield from problems
            return
        yield from _feed(_expand(value, line, source, problems), source, problems, collector)
    yield from problems


def _read_array(
    text: Text, source: str, problems: list[Problem], collector: Collector
) -> Generator[Trace | Problem, None, bool]:
    """Read the elements of an array one at a time, so memory holds one run (and a truncated file
    keeps its first runs)."""
    count = 0
    while True:
        char = text.skip_ws()
        if char == "]":
            text.pos += 1
            return True
        if count and char == ",":
            text.pos += 1
            text.skip_ws()
        line = text.line()
        try:
            value = text.value()
        except RecursionError:
            if not (yield from _skip_deep(text, source, line, problems)):
                return False
            count += 1
            continue
        except ValueError as exc:
            problem = _json_problem(source, exc, text.error_line(exc))
            reason = (
                f"{problem.reason}; the file looks truncated or malformed, {count} run(s) before it were read"
            )
            problems.append(problem.model_copy(update={"reason": reason}))
            yield from problems
            return False
        yield from _feed(
            _expand(value, line, source, problems, inside_array=True), source, problems, collector
        )
        count += 1


def _close_export(text: Text, source: str) -> Iterator[Problem]:
    """After the ``runs`` array of an export: the end of the object, or its other keys (ignored)."""
    char = text.skip_ws()
    if char == "}":
        text.pos += 1
        return
    if char == ",":  # read the remaining keys as an object of their own
        text.buf = text.buf[: text.pos] + "{" + text.buf[text.pos + 1 :]
    try:
        text.value()
    except (ValueError, RecursionError) as exc:
        yield _json_problem(source, exc, text.error_line(exc))


def _skip_deep(text: Text, source: str, line: int, problems: list[Problem]) -> Generator[Problem, None, bool]:
    """After a value too deep to decode: a problem naming its line, and the cursor past it.

    Returns False when the value does not end (the rest of the input cannot be read either).
    """
    skipped = text.skip_value()
    rest = "skipped, the rest is read" if skipped else "the rest of the file cannot be read"
    problems.append(Problem(file=source, line=line, reason=f"{TOO_DEEP}; {rest}"))
    yield from problems
    problems.clear()
    return skipped


def _json_problem(source: str, exc: ValueError | RecursionError, line: int | None = None) -> Problem:
    if isinstance(exc, json.JSONDecodeError):
        return Problem(
            file=source, line=line or exc.lineno, reason=f"malformed JSON: {exc.msg} (column {exc.colno})"
        )
    if isinstance(exc, RecursionError):
        return Problem(file=source, line=line, reason=TOO_DEEP)
    return Problem(file=source, reason=f"malformed JSON: {exc}")


def _expand(
    value: Any, line: int | None, source: str, problems: list[Problem], *, inside_array: bool = False
) -> list[tuple[Any, int | None]]:
    """The runs in one top-level value: a run, a list of runs, or ``{"runs": [...]}``."""
    if isinstance(value, list) and not inside_array:
        out: list[tuple[Any, int | None]] = []
        for item in value:
            out.extend(_expand(item, line, source, problems, inside_array=True))
        return out
    if isinstance(value, dict):
        if isinstance(value.get("runs"), list) and "run_type" not in value:
            return [(item, line) for item in value["runs"]]
        batch = batch_runs(value)
        if batch is not None:  # a LangSmith /runs/batch body: posts, then the patches that end them
            return [(item, line) for item in batch]
        # A run's own type first, without the generator (nearly every run has one).
        if "run_type" in value or any(key in value for key in _RUN_FIELDS):
            return [(value, line)]
    problems.append(
        Problem(file=source, line=line, reason=f"expected a run object, found {describe(value)}; skipped")
    )
    return []
