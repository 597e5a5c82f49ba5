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

Streaming (memory is bounded by the open traces, not by the file): JSONL is read line by line; a
top-level JSON list, and a ``{"runs": [...]}`` export whose first key is ``runs``, are read one
element at a time with the standard library's decoder over a sliding window of about 1 MB (not
``ijson``, which gives no offsets: problems and span sources carry line numbers). A nested root with
``child_runs`` is one trace and is read as one value, as is an export whose ``runs`` key is not
first. Runs are grouped by trace as they arrive, and a trace is yielded (and its buffers freed) when

- its root run (no parent) is present, every run has an ``end_time`` (a LangSmith create record
  waits for the update that ends it; create and update are merged as before), and the parent of
  every run is present; and
- no run of it has arrived in the last ``quiet_records`` top-level records (default
  :data:`QUIET_RECORDS`), since tracers write a root first (a ``BaseTracer`` collection) as often
  as last (runs persisted when they end).

A run of an already yielded trace that arrives later is yielded as a later part with the same
trace id (warning "trace continued after its root run; audited in parts"; evidence reconstruction
pools traces by conversation id, else trace id, so the parts are audited together); a repeated
record (an update) of a run already yielded is ignored with a warning. The last
:data:`REMEMBER_TRACES` yielded traces are remembered for this. A trace that never completes is
yielded at end of file; beyond :data:`MAX_OPEN_RUNS` runs in open traces the least recently
extended one is yielded early, with a warning. A legacy run naming only a parent that has not
arrived (no ``trace_id``, no ``dotted_order``) waits for it, or for the end of the file.

Guarantees: never raises on bad input. Invalid UTF-8 is replaced (one warning); a malformed JSONL
line is skipped with its line number; a truncated JSON list keeps the runs before the break; a
run without an id or a readable ``start_time`` is skipped; each becomes a
:class:`~auditor.problems.Problem`. This module imports nothing from LangChain.
"""

from __future__ import annotations

import codecs
import io
import itertools
import json
import re
from collections import OrderedDict
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from auditor.trace import Problem, Severity, Span, Trace, assemble_trace
from auditor_langchain.runs import RunContext, normalise_id, parse_time, run_to_span

SOURCE_FORMAT = "langchain-runtree"
CONVENTION = "langchain"

_RUN_KEY = re.compile(rb'"(run_type|child_runs|dotted_order|parent_run_id)"\s*:')
_RUNS_PREFIX = re.compile(r'\s*\{\s*"runs"\s*:\s*\[')
_DOTTED_SEGMENT = re.compile(r"^\d{8}T\d{6,12}Z(.+)$")
_RUN_FIELDS = ("run_type", "child_runs", "dotted_order", "parent_run_id", "start_time", "id")
_DECODER = json.JSONDecoder()
_CHUNK = 1 << 20

#: Top-level records (lines, array elements) without a run of a complete trace before it is emitted.
QUIET_RECORDS = 1_000
#: Runs held in open traces before the least recently extended one is emitted early.
MAX_OPEN_RUNS = 20_000
#: Emitted traces remembered so that a late run is recognised as a later part of its trace.
REMEMBER_TRACES = 1_024
PART_REASON = "trace continued after its root run; audited in parts"
EVICTED_REASON = (
    "trace emitted before it completed: more than {cap} runs were waiting in open traces; "
    "any later runs of it are audited as a later part"
)


@dataclass
class _Record:
    run: dict[str, Any]
    line: int | None
    parent_hint: str | None = None
    root_hint: str | None = None


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

    #: Streaming limits (see the module docstring); instance attributes may be changed.
    quiet_records = QUIET_RECORDS
    max_open_runs = MAX_OPEN_RUNS
    remember_traces = REMEMBER_TRACES

    def parse(self, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]:
        """Yield each trace once it is complete, and a problem for anything skipped or repaired."""
        collector = _Collector(source, self.quiet_records, self.max_open_runs, self.remember_traces)
        try:
            yield from _read(_Bytes(stream, source), source, collector)
        except (OSError, EOFError) as exc:  # EOFError: a truncated gzip stream
            yield Problem(file=source, reason=f"could not read the file: {exc}")
        yield from collector.finish()


def _read(data: _Bytes, source: str, collector: _Collector) -> Iterator[Trace | Problem]:
    """Pick the layout from the first lines, then stream it."""
    head: list[bytes] = []
    nonblank = 0
    while nonblank < 5:
        line = data.readline(_CHUNK)
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
    if len(first) > 1 and _is_complete_json(first[0]):
        yield from _read_jsonl(enumerate(itertools.chain(head, data.lines()), start=1), data, collector)
        return
    yield from _read_document(data, b"".join(head), first, collector)


def _is_complete_json(line: str) -> bool:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict | list)


def _feed(
    values: list[tuple[Any, int | None]], source: str, problems: list[Problem], collector: _Collector
) -> Iterator[Trace | Problem]:
    records = _flatten(values, source, problems)
    yield from problems
    problems.clear()
    yield from collector.add(records)


def _read_jsonl(
    lines: Iterator[tuple[int, bytes]], data: _Bytes, collector: _Collector
) -> Iterator[Trace | Problem]:
    source = data.source
    for number, raw in lines:
        if not raw.strip():
            continue
        problems: list[Problem] = []
        line = data.decode(raw, number, problems)
        if number == 1:
            line = line.removeprefix("\ufeff")
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(Problem(file=source, line=number, reason=f"malformed JSON line skipped: {exc}"))
            yield from problems
            continue
        yield from _feed(_expand(value, number, source, problems), source, problems, collector)


def _read_document(
    data: _Bytes, head: bytes, first: list[str], collector: _Collector
) -> Iterator[Trace | Problem]:
    """One or more top-level JSON values; the elements of a top-level array (or of the ``runs``
    array of a LangSmith export that starts with it) are read one at a time."""
    source = data.source
    problems: list[Problem] = []
    text = _Text(data, head, problems)
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
        except (ValueError, RecursionError) as exc:
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
    text: _Text, source: str, problems: list[Problem], collector: _Collector
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
        except (ValueError, RecursionError) as exc:
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


def _close_export(text: _Text, source: str) -> Iterator[Problem]:
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


def _json_problem(source: str, exc: ValueError | RecursionError, line: int | None = None) -> Problem:
    if isinstance(exc, json.JSONDecodeError):
        return Problem(
            file=source, line=line or exc.lineno, reason=f"malformed JSON: {exc.msg} (column {exc.colno})"
        )
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
        _merge_into(merged, record, source, problems)
    return list(merged.values())


def _merge_into(merged: dict[str, _Record], record: _Record, source: str, problems: list[Problem]) -> None:
    """Add ``record`` to ``merged`` (by run id), merging a repeated record of a run into the first."""
    run_id = normalise_id(record.run.get("id"))
    if run_id is None:  # _flatten dropped these already
        return
    earlier = merged.get(run_id)
    if earlier is None:
        merged[run_id] = record
        return
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
    """Group runs into traces by :func:`_trace_ids` and build each one (the end-of-file path)."""
    trace_of = _trace_ids(records)
    grouped: dict[str, list[_Record]] = {}
    for record in records:
        grouped.setdefault(trace_of[normalise_id(record.run.get("id")) or ""], []).append(record)
    for trace_id, members in grouped.items():
        yield from _build(trace_id, members, source)


def _build(
    trace_id: str, records: list[_Record], source: str, earlier: _Emitted | None = None
) -> Iterator[Trace | Problem]:
    """One trace from its runs; ``earlier`` when it is a later part of an emitted trace."""
    spans: list[Span] = []
    for record in records:
        run_id = normalise_id(record.run.get("id")) or ""
        ctx = RunContext(trace_id=trace_id, parent_id=_parent(record), source=source, line=record.line)
        start = parse_time(record.run.get("start_time"))
        if start is None:
            raw = record.run.get("start_time")
            what = "no start_time" if raw is None else f"an unreadable start_time {raw!r}"
            ctx.warn(run_id, f"run has {what}; skipped", Severity.ERROR)
            yield from ctx.problems
            continue
        try:
            span = run_to_span(record.run, run_id, start, ctx)
        except Exception as exc:  # a shape this adapter did not foresee must not end the file
            ctx.warn(run_id, f"run could not be read ({type(exc).__name__}: {exc}); skipped", Severity.ERROR)
            yield from ctx.problems
            continue
        yield from ctx.problems
        spans.append(span)
    if not spans:
        yield Problem(file=source, trace_id=trace_id, reason="trace has no readable runs; skipped")
        return
    trace, problems = assemble_trace(
        trace_id,
        spans,
        source,
        source_format=SOURCE_FORMAT,
        convention=CONVENTION,
        conversation_id=earlier.conversation_id if earlier is not None else None,
    )
    if earlier is not None:
        linked = {s.span_id for s in spans if s.parent_id in earlier.run_ids}
        problems = [p for p in problems if not (p.span_id in linked and p.reason.startswith("parent span "))]
        lines = [r.line for r in records if r.line is not None]
        yield Problem(
            file=source,
            line=min(lines) if lines else None,
            severity=Severity.WARNING,
            trace_id=trace_id,
            reason=PART_REASON,
        )
    yield from problems
    yield trace


# --- streaming: group runs into traces as they arrive --------------------------------------------


@dataclass
class _Emitted:
    conversation_id: str | None
    run_ids: frozenset[str]


@dataclass
class _OpenTrace:
    first: int
    earlier: _Emitted | None
    records: dict[str, _Record] = field(default_factory=dict)
    last: int = 0

    def complete(self) -> bool:
        """Root run present, every run ended, every parent present (here or in an earlier part)."""
        earlier_ids = self.earlier.run_ids if self.earlier is not None else frozenset()
        has_root = self.earlier is not None
        for record in self.records.values():
            if record.run.get("end_time") is None:
                return False
            parent = _parent(record)
            if parent is None:
                has_root = True
            elif parent not in self.records and parent not in earlier_ids:
                return False
        return has_root


class _Collector:
    """Runs in, complete traces out: the streaming rule described in the module docstring."""

    def __init__(self, source: str, quiet: int, max_open: int, remember: int) -> None:
        self.source = source
        self.quiet = quiet
        self.max_open = max_open
        self.remember = remember
        self.tick = 0
        self._open: OrderedDict[str, _OpenTrace] = OrderedDict()  # least recently extended first
        self._waiting: dict[str, _OpenTrace] = {}  # quiet but not complete
        self._open_runs = 0
        self._run_trace: dict[str, str] = {}  # run id -> trace id, runs in open traces
        self._unresolved: dict[str, list[_Record]] = {}  # parent run id -> runs waiting for it
        self._emitted: OrderedDict[str, _Emitted] = OrderedDict()
        self._emitted_runs: dict[str, str] = {}
        self._out: list[Trace | Problem] = []

    def add(self, records: list[_Record]) -> Iterator[Trace | Problem]:
        """Add the runs of one top-level record, then yield the traces that are complete."""
        problems: list[Problem] = []
        for record in records:
            self._add(record, problems)
        yield from problems
        out, self._out = self._out, []
        yield from out
        self.tick += 1
        while self._open:
            trace_id, entry = next(iter(self._open.items()))
            if self.tick - entry.last <= self.quiet:
                break
            del self._open[trace_id]
            if entry.complete():
                yield from self._emit(trace_id, entry)
            else:
                self._waiting[trace_id] = entry

    def _trace_of(self, record: _Record, run_id: str) -> str | None:
        known = self._run_trace.get(run_id) or self._emitted_runs.get(run_id)
        if known is not None:
            return known
        dotted = _dotted_ids(record.run)
        own = normalise_id(record.run.get("trace_id")) or record.root_hint or (dotted[0] if dotted else None)
        if own is not None:
            return own
        parent = _parent(record)
        if parent is None:
            return run_id
        return self._run_trace.get(parent) or self._emitted_runs.get(parent)

    def _add(self, record: _Record, problems: list[Problem]) -> None:
        run_id = normalise_id(record.run.get("id")) or ""
        trace_id = self._trace_of(record, run_id)
        if trace_id is None:  # a legacy run naming only a parent not seen yet
            self._unresolved.setdefault(_parent(record) or "", []).append(record)
            return
        entry = self._open.get(trace_id)
        if entry is None:
            entry = self._waiting.pop(trace_id, None)
            if entry is None:
                earlier = self._emitted.get(trace_id)
                if earlier is not None and run_id in earlier.run_ids:
                    problems.append(
                        Problem(
                            file=self.source,
                            line=record.line,
                            severity=Severity.WARNING,
                            trace_id=trace_id,
                            span_id=run_id,
                            reason=f"run {run_id} appears again after its trace was complete and audited; "
                            "this later record is ignored",
                        )
                    )
                    return
                entry = _OpenTrace(first=self.tick, earlier=earlier)
            self._open[trace_id] = entry
        else:
            self._open.move_to_end(trace_id)
        entry.last = self.tick
        before = len(entry.records)
        _merge_into(entry.records, record, self.source, problems)
        self._open_runs += len(entry.records) - before
        self._run_trace[run_id] = trace_id
        for child in self._unresolved.pop(run_id, []):
            self._add(child, problems)
        while self._open_runs > self.max_open and len(self._open) + len(self._waiting) > 1:
            oldest = next(iter(self._waiting)) if self._waiting else next(iter(self._open))
            if oldest == trace_id:
                break
            evicted = self._waiting.pop(oldest, None) or self._open.pop(oldest)
            self._out.append(
                Problem(
                    file=self.source,
                    severity=Severity.WARNING,
                    trace_id=oldest,
                    reason=EVICTED_REASON.format(cap=self.max_open),
                )
            )
            self._out.extend(self._emit(oldest, evicted))

    def _emit(self, trace_id: str, entry: _OpenTrace) -> list[Trace | Problem]:
        self._open_runs -= len(entry.records)
        for run_id in entry.records:
            self._run_trace.pop(run_id, None)
        out = list(_build(trace_id, list(entry.records.values()), self.source, entry.earlier))
        earlier = entry.earlier
        conversation = next((t.conversation_id for t in out if isinstance(t, Trace)), None)
        ids = frozenset(entry.records) | (earlier.run_ids if earlier is not None else frozenset())
        self._emitted[trace_id] = _Emitted(
            conversation or (earlier.conversation_id if earlier else None), ids
        )
        self._emitted.move_to_end(trace_id)
        self._emitted_runs.update(dict.fromkeys(entry.records, trace_id))
        while len(self._emitted) > self.remember:
            old_id, old = self._emitted.popitem(last=False)
            for run_id in old.run_ids:
                if self._emitted_runs.get(run_id) == old_id:
                    del self._emitted_runs[run_id]
        return out

    def finish(self) -> Iterator[Trace | Problem]:
        """At end of input: every open trace (complete or not), then runs whose trace never resolved."""
        yield from self._out
        self._out = []
        entries = sorted([*self._waiting.items(), *self._open.items()], key=lambda item: item[1].first)
        self._waiting.clear()
        self._open.clear()
        for trace_id, entry in entries:
            yield from self._emit(trace_id, entry)
        rest = [record for records in self._unresolved.values() for record in records]
        self._unresolved.clear()
        if rest:
            problems: list[Problem] = []
            merged = _merge(rest, self.source, problems)
            yield from problems
            yield from _traces(merged, self.source)


class _Bytes:
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
        data = self.stream.read(_CHUNK)
        if not data:
            self.eof = True
        return data

    def readline(self, limit: int = -1) -> bytes:
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


class _NeedMore(Exception):
    pass


class _Text:
    """A sliding window of decoded text over :class:`_Bytes`, for reading one JSON value at a time.

    Consumed text is dropped, so the window holds about one chunk plus the value being read.
    """

    def __init__(self, data: _Bytes, head: bytes, problems: list[Problem]) -> None:
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
        if self.pos > _CHUNK:
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

    def error_line(self, exc: ValueError | RecursionError) -> int | None:
        if isinstance(exc, json.JSONDecodeError):
            return self.line_base + exc.doc.count("\n", 0, exc.pos)
        return None
