"""Runs as records: ``child_runs`` unnested, repeated records of a run merged, parent and trace found.

A run's parent is its ``parent_run_id``, else the run it was nested in, else its ``dotted_order``;
its trace is its own ``trace_id``, else that of the root it descends from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from auditor.trace import MAX_DEPTH, Problem, Severity, Span, loads_fast_writable, quote_value
from auditor_langchain.ids import normalise_id

_DOTTED_SEGMENT = re.compile(r"^\d{8}T\d{6,12}Z(.+)$")
#: Brackets (``[`` and ``{``) a line may hold for its run's span to be vouched for (see
#: :func:`plain_line`): a container read from it then nests at most this many levels. The adapter
#: puts the run's containers at most two levels deep in a span outside the free-form values the
#: repair check still looks at (``attributes`` one level, an event's attributes two), so they end
#: within ``MAX_DEPTH``.
VOUCH_BRACKETS = MAX_DEPTH - 4
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[{")


@dataclass(slots=True)
class Record:
    """One run as read, and where.

    A run read whole from a line of its own (``raw``, read by the fast reader) may be built into
    its span as soon as it has ended (:meth:`keep_built`), while it waits for the rest of its
    trace: its JSON is then dropped, so that the runs waiting in open traces hold their spans and
    their lines' bytes rather than every object of their JSON (less memory, and less for the
    garbage collector to walk again and again). Should the JSON be needed after all (a later
    record of the same run, to merge), :attr:`run` reads it again from ``raw``: the same value.
    """

    _run: dict[str, Any] | None
    line: int | None
    parent_hint: str | None = None
    root_hint: str | None = None
    #: Read by the fast JSON reader (``auditor.trace.loads_fast``): JSON's types only, no NaN or
    #: infinity, so its values may be written back by ``auditor.trace.dumps_fast``.
    fast: bool = False
    #: The line the run was read from, when it held this run alone and the fast reader read it.
    raw: bytes | None = None
    #: The span built from the run (None when it was skipped) and the problems found building it.
    built: tuple[Span | None, list[Problem]] | None = None
    #: The run's parent, read when it was built.
    built_parent: str | None = None
    #: Its span may be vouched for to the repair check (:func:`plain_line` of ``raw``).
    vouched: bool = False

    @property
    def run(self) -> dict[str, Any]:
        if self._run is None:
            if self.raw is None:  # not reachable: only a run with its line is dropped
                raise ValueError("run dropped without its line")
            value, _ = loads_fast_writable(self.raw)
            self._run = value
        return self._run

    @run.setter
    def run(self, value: dict[str, Any]) -> None:
        self._run = value
        self.built = None  # a changed run is built again
        self.vouched = False  # merged from another record: not the one line's any more

    def keep_built(self, built: tuple[Span | None, list[Problem]], parent: str | None) -> None:
        """Keep the span built from this (ended) run, and drop its JSON (read again if needed)."""
        self.built, self.built_parent = built, parent
        self._run = None


def plain_line(raw: bytes) -> bool:
    """Whether the span of a run read strictly (``loads_fast``) from the line ``raw`` alone may be
    vouched for to the repair check (``auditor.trace.repair_trace``'s ``vouched``), provided
    nothing the adapter parses again while building it could spell a surrogate
    (:func:`auditor_langchain.messages.escaped_literals`).

    Its strings are valid text: the strict reader refuses invalid UTF-8 and escaped lone
    surrogates. With at most :data:`VOUCH_BRACKETS` brackets, no container read from the line
    nests deep enough to be cut where the adapter puts it; what the adapter parses again (a tool
    call's arguments) lands in the free-form values the check still looks at, but for a prompt's
    tool-call ids and names, which that count covers.
    """
    return len(raw.translate(None, _NOT_BRACKETS)) <= VOUCH_BRACKETS  # one pass (two counts take two)


def describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:5])
        return f"an object with keys {keys}" if keys else "an empty object"
    return f"a JSON {type(value).__name__}"


def flatten(
    values: list[tuple[Any, int | None]],
    source: str,
    problems: list[Problem],
    *,
    fast: bool = False,
    raw: bytes | None = None,
) -> list[Record]:
    """Unnest ``child_runs`` and merge repeated records of one run; drop runs without an id.

    ``fast``: the values were read by the fast JSON reader (:attr:`Record.fast`); ``raw``: the
    line the one value was read from (kept by a run without children: :attr:`Record.raw`).
    """
    if len(values) == 1:  # the common line, one run without children: what flatten_all gives it
        run, line = values[0]
        if type(run) is dict and run.get("child_runs") is None and normalise_id(run.get("id")) is not None:
            whole = raw if fast else None
            return [Record(run, line, fast=fast, raw=whole, vouched=whole is not None and plain_line(whole))]
    return flatten_all(values, source, problems, fast=fast, raw=raw)


def flatten_all(
    values: list[tuple[Any, int | None]],
    source: str,
    problems: list[Problem],
    *,
    fast: bool = False,
    raw: bytes | None = None,
) -> list[Record]:
    """:func:`flatten` without its shortcut for a lone run (``tests/test_langchain_runtree_early.py``
    compares the two)."""
    flat: list[Record] = []
    stack: list[tuple[Any, int | None, str | None, str | None]] = [
        (v, line, None, None) for v, line in reversed(values)
    ]
    while stack:
        run, line, parent, root = stack.pop()
        if not isinstance(run, dict):
            problems.append(
                Problem(
                    file=source, line=line, reason=f"expected a run object, found {describe(run)}; skipped"
                )
            )
            continue
        run_id = normalise_id(run.get("id"))
        if run_id is None:
            name = run.get("name")
            problems.append(
                Problem(
                    file=source,
                    line=line,
                    reason=f"run {quote_value(name)} has no id; skipped (its children are kept)",
                )
            )
        else:
            alone = len(values) == 1 and run is values[0][0] and run.get("child_runs") is None
            whole = raw if fast and alone else None
            vouched = whole is not None and plain_line(whole)
            flat.append(
                Record(run, line, parent_hint=parent, root_hint=root, fast=fast, raw=whole, vouched=vouched)
            )
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
    return merge(flat, source, problems)


def merge(records: list[Record], source: str, problems: list[Problem]) -> list[Record]:
    merged: dict[str, Record] = {}
    for record in records:
        merge_into(merged, record, source, problems)
    return list(merged.values())


def merge_into(
    merged: dict[str, Record],
    record: Record,
    source: str,
    problems: list[Problem],
    run_id: str | None = None,
) -> None:
    """Add ``record`` to ``merged`` (by run id), merging a repeated record of a run into the first.

    ``run_id``: the record's normalised id, when the caller has read it already.
    """
    run_id = run_id or normalise_id(record.run.get("id"))
    if run_id is None:  # flatten dropped these already
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
    earlier.fast = earlier.fast and record.fast


def dotted_ids(run: dict[str, Any]) -> list[str]:
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


def dotted_root(record: Record) -> str | None:
    """The first run of the record's ``dotted_order`` (its trace's root), if it reads."""
    dotted = dotted_ids(record.run)
    return dotted[0] if dotted else None


def parent_of(record: Record) -> str | None:
    explicit = normalise_id(record.run.get("parent_run_id"))
    if explicit is not None:
        return explicit
    if record.parent_hint is not None:
        return record.parent_hint
    dotted = dotted_ids(record.run)
    return dotted[-2] if len(dotted) >= 2 else None


def trace_ids(records: list[Record]) -> dict[str, str]:
    """Each run's trace: its own ``trace_id``, else that of the root it descends from."""
    by_id = {normalise_id(r.run.get("id")) or "": r for r in records}

    def own(record: Record) -> str | None:
        return normalise_id(record.run.get("trace_id")) or record.root_hint or dotted_root(record)

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
            current = parent_of(by_id[current])
        trace_id = found or chain[-1]
        for member in chain:
            result[member] = trace_id
    return result
