"""The ``langchain`` trace adapter: LangChain / LangSmith run trees exported as JSON.

Layouts read (detected from the content, not the file name):

- a JSON list of runs, as ``LangChainTracer`` posts them (flat, linked by ``parent_run_id`` and
  ``dotted_order``), or as a ``BaseTracer`` subclass collects them;
- one root run with its descendants nested in ``child_runs``;
- a LangSmith export ``{"runs": [...]}``;
- JSONL, one run (or one list of runs) per line; a LangSmith create record and its later
  update for the same run id are merged.

Runs are grouped by trace: the run's ``trace_id``, else the root of its ``parent_run_id`` chain
or of its ``dotted_order``, else the enclosing root of ``child_runs``. Each trace is checked by
:func:`auditor.assemble.assemble_trace`. Ids keep LangSmith's canonical dashed lower-case UUID
form (see :func:`auditor_langchain.runs.normalise_id`).

Guarantees: never raises on bad input. Invalid UTF-8 is replaced (one warning); a malformed JSONL
line is skipped with its line number; a truncated JSON list keeps the runs before the break; a
run without an id or a readable ``start_time`` is skipped; each becomes a
:class:`~auditor.problems.Problem`. This module imports nothing from LangChain.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from auditor.assemble import assemble_trace
from auditor.problems import Problem, Severity
from auditor.trace import Span, Trace
from auditor_langchain.runs import RunContext, normalise_id, parse_time, run_to_span

SOURCE_FORMAT = "langchain-runtree"
CONVENTION = "langchain"

_RUN_KEY = re.compile(rb'"(run_type|child_runs|dotted_order|parent_run_id)"\s*:')
_RUNS_PREFIX = re.compile(r'\s*\{\s*"runs"\s*:\s*\[')
_DOTTED_SEGMENT = re.compile(r"^\d{8}T\d{6,12}Z(.+)$")
_RUN_FIELDS = ("run_type", "child_runs", "dotted_order", "parent_run_id", "start_time", "id")
_DECODER = json.JSONDecoder()


@dataclass
class _Record:
    run: dict[str, Any]
    line: int | None
    parent_hint: str | None = None
    root_hint: str | None = None


class _Lines:
    """Offset to line number, for problems and source references."""

    def __init__(self, text: str) -> None:
        self._starts = [m.start() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset - 1) + 1


class RunTreeAdapter:
    """Reads LangChain run trees (``langsmith.RunTree`` serialised as JSON or JSONL)."""

    name = "langchain"
    description = "LangChain / LangSmith run trees: JSON list, nested child_runs, {'runs': [...]}, JSONL"

    def sniff(self, first_bytes: bytes) -> bool:
        """True for JSON or JSONL whose first object looks like a LangChain run."""
        try:
            head = first_bytes.lstrip(b"\xef\xbb\xbf \t\r\n")
            if head[:1] not in (b"[", b"{"):
                return False
            if b'"resourceSpans"' in head or b'"resource_spans"' in head:
                return False
            return _RUN_KEY.search(head) is not None
        except Exception:  # the contract: sniff never raises
            return False

    def parse(self, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]:
        """Yield every trace in ``stream``, and a problem for anything skipped or repaired."""
        problems: list[Problem] = []
        try:
            data = stream.read()
        except (OSError, EOFError) as exc:  # EOFError: a truncated gzip stream
            yield Problem(file=source, reason=f"could not read the file: {exc}")
            return
        text = _decode(data, source, problems)
        records = _read(text, source, problems)
        runs = _flatten(records, source, problems)
        yield from problems
        yield from _traces(runs, source)


def _decode(data: bytes, source: str, problems: list[Problem]) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(
            Problem(
                file=source,
                line=line,
                severity=Severity.WARNING,
                reason="invalid UTF-8; undecodable bytes replaced with U+FFFD",
            )
        )
    return text.removeprefix("\ufeff")


def _read(text: str, source: str, problems: list[Problem]) -> list[tuple[Any, int | None]]:
    """Every top-level run candidate with the line it starts on."""
    if not text.strip():
        problems.append(Problem(file=source, reason="file is empty"))
        return []
    lines = [line for line in text.splitlines() if line.strip()][:5]
    if len(lines) > 1 and _is_complete_json(lines[0]):
        return _read_jsonl(text, source, problems)
    attempt: list[Problem] = []
    values = _read_document(text, source, attempt)
    if not values and attempt and any(_is_complete_json(line) for line in lines[1:]):
        return _read_jsonl(text, source, problems)  # JSONL whose first line is broken
    problems.extend(attempt)
    return values


def _is_complete_json(line: str) -> bool:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict | list)


def _read_jsonl(text: str, source: str, problems: list[Problem]) -> list[tuple[Any, int | None]]:
    values: list[tuple[Any, int | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(Problem(file=source, line=number, reason=f"malformed JSON line skipped: {exc}"))
            continue
        values.extend(_expand(value, number, source, problems))
    return values


def _read_document(text: str, source: str, problems: list[Problem]) -> list[tuple[Any, int | None]]:
    lines = _Lines(text)
    values: list[tuple[Any, int | None]] = []
    pos = _skip_ws(text, 0)
    while pos < len(text):
        if text[pos] == "[":
            pos, ok = _read_array(text, pos + 1, lines, source, problems, values)
            if not ok:
                return values
        else:
            try:
                value, end = _DECODER.raw_decode(text, pos)
            except (ValueError, RecursionError) as exc:
                match = _RUNS_PREFIX.match(text, pos)
                if match is not None:
                    _read_array(text, match.end(), lines, source, problems, values)
                else:
                    problems.append(_json_problem(source, exc))
                return values
            values.extend(_expand(value, lines.at(pos), source, problems))
            pos = end
        pos = _skip_ws(text, pos)
    return values


def _read_array(
    text: str,
    pos: int,
    lines: _Lines,
    source: str,
    problems: list[Problem],
    out: list[tuple[Any, int | None]],
) -> tuple[int, bool]:
    """Read the elements of an array one at a time, so a truncated file keeps its first runs."""
    count = 0
    while True:
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == "]":
            return pos + 1, True
        if count and pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            problem = _json_problem(source, exc)
            reason = (
                f"{problem.reason}; the file looks truncated or malformed, {count} run(s) before it were read"
            )
            problems.append(problem.model_copy(update={"reason": reason}))
            return pos, False
        out.extend(_expand(value, lines.at(pos), source, problems, inside_array=True))
        pos = end
        count += 1


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _json_problem(source: str, exc: ValueError | RecursionError) -> Problem:
    if isinstance(exc, json.JSONDecodeError):
        return Problem(file=source, line=exc.lineno, reason=f"malformed JSON: {exc.msg} (column {exc.colno})")
    if isinstance(exc, RecursionError):
        return Problem(file=source, reason="JSON nested too deeply to read")
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
        if any(key in value for key in _RUN_FIELDS):
            return [(value, line)]
    problems.append(
        Problem(file=source, line=line, reason=f"expected a run object, found {_describe(value)}; skipped")
    )
    return []


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:5])
        return f"an object with keys {keys}" if keys else "an empty object"
    return f"a JSON {type(value).__name__}"


def _flatten(values: list[tuple[Any, int | None]], source: str, problems: list[Problem]) -> list[_Record]:
    """Unnest ``child_runs`` and merge repeated records of one run; drop runs without an id."""
    flat: list[_Record] = []
    stack: list[tuple[Any, int | None, str | None, str | None]] = [
        (v, line, None, None) for v, line in reversed(values)
    ]
    while stack:
        run, line, parent, root = stack.pop()
        if not isinstance(run, dict):
            problems.append(
                Problem(
                    file=source, line=line, reason=f"expected a run object, found {_describe(run)}; skipped"
                )
            )
            continue
        run_id = normalise_id(run.get("id"))
        if run_id is None:
            name = run.get("name")
            problems.append(
                Problem(
                    file=source, line=line, reason=f"run {name!r} has no id; skipped (its children are kept)"
                )
            )
        else:
            flat.append(_Record(run=run, line=line, parent_hint=parent, root_hint=root))
        children = run.get("child_runs")
        if isinstance(children, list):
            here = run_id or parent
            for child in reversed(children):
                stack.append((child, line, here, root or here))
        elif children is not None:
            problems.append(
                Problem(
                    file=source,
                    line=line,
                    severity=Severity.WARNING,
                    reason="child_runs is not a list; ignored",
                )
            )
    return _merge(flat, source, problems)


def _merge(records: list[_Record], source: str, problems: list[Problem]) -> list[_Record]:
    merged: dict[str, _Record] = {}
    for record in records:
        run_id = normalise_id(record.run.get("id"))
        if run_id is None:  # _flatten dropped these already
            continue
        earlier = merged.get(run_id)
        if earlier is None:
            merged[run_id] = record
            continue
        later = {k: v for k, v in record.run.items() if v is not None and k != "child_runs"}
        if (
            earlier.run.get("end_time") is not None
            and later.get("end_time") is not None
            and any(earlier.run.get(k) != v for k, v in later.items())
        ):
            problems.append(
                Problem(
                    file=source,
                    line=record.line,
                    severity=Severity.WARNING,
                    span_id=run_id,
                    reason=f"run {run_id} appears twice with different contents; the later record's fields win",
                )
            )
        earlier.run = {**earlier.run, **later}
        earlier.parent_hint = earlier.parent_hint or record.parent_hint
        earlier.root_hint = earlier.root_hint or record.root_hint
    return list(merged.values())


def _dotted_ids(run: dict[str, Any]) -> list[str]:
    dotted = run.get("dotted_order")
    if not isinstance(dotted, str):
        return []
    ids: list[str] = []
    for segment in dotted.split("."):
        match = _DOTTED_SEGMENT.match(segment)
        if match is None:
            return []
        run_id = normalise_id(match.group(1))
        if run_id is None:
            return []
        ids.append(run_id)
    return ids


def _parent(record: _Record) -> str | None:
    explicit = normalise_id(record.run.get("parent_run_id"))
    if explicit is not None:
        return explicit
    if record.parent_hint is not None:
        return record.parent_hint
    dotted = _dotted_ids(record.run)
    return dotted[-2] if len(dotted) >= 2 else None


def _trace_ids(records: list[_Record]) -> dict[str, str]:
    """Each run's trace: its own ``trace_id``, else that of the root it descends from."""
    by_id = {normalise_id(r.run.get("id")) or "": r for r in records}

    def own(record: _Record) -> str | None:
        dotted = _dotted_ids(record.run)
        return normalise_id(record.run.get("trace_id")) or record.root_hint or (dotted[0] if dotted else None)

    result: dict[str, str] = {}
    for run_id in by_id:
        chain: list[str] = []
        current: str | None = run_id
        found: str | None = None
        while current is not None and current in by_id and current not in chain:
            if current in result:
                found = result[current]
                break
            chain.append(current)
            found = own(by_id[current])
            if found is not None:
                break
            current = _parent(by_id[current])
        trace_id = found or chain[-1]
        for member in chain:
            result[member] = trace_id
    return result


def _traces(records: list[_Record], source: str) -> Iterator[Trace | Problem]:
    trace_of = _trace_ids(records)
    grouped: dict[str, list[Span]] = {}
    for record in records:
        run_id = normalise_id(record.run.get("id")) or ""
        trace_id = trace_of[run_id]
        ctx = RunContext(trace_id=trace_id, parent_id=_parent(record), source=source, line=record.line)
        start = parse_time(record.run.get("start_time"))
        if start is None:
            raw = record.run.get("start_time")
            what = "no start_time" if raw is None else f"an unreadable start_time {raw!r}"
            ctx.warn(run_id, f"run has {what}; skipped", Severity.ERROR)
            yield from ctx.problems
            grouped.setdefault(trace_id, [])
            continue
        try:
            span = run_to_span(record.run, run_id, start, ctx)
        except Exception as exc:  # a shape this adapter did not foresee must not end the file
            ctx.warn(run_id, f"run could not be read ({type(exc).__name__}: {exc}); skipped", Severity.ERROR)
            yield from ctx.problems
            grouped.setdefault(trace_id, [])
            continue
        yield from ctx.problems
        grouped.setdefault(trace_id, []).append(span)
    for trace_id, spans in grouped.items():
        if not spans:
            yield Problem(file=source, trace_id=trace_id, reason="trace has no readable runs; skipped")
            continue
        trace, problems = assemble_trace(
            trace_id, spans, source, source_format=SOURCE_FORMAT, convention=CONVENTION
        )
        yield from problems
        yield trace
