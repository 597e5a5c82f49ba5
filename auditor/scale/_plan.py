"""The input side of a batch audit at scale: index the files, plan the shards, read one shard.

A job over thousands of files cannot hold every trace on the driver, and it cannot hand files to
workers blindly either: the Collector's file exporter rotates its files, so a trace's spans can
straddle two of them, and the traces of one conversation (one session id) must be audited together
for multi-turn evidence to stay causal. The work is split in three steps, each a plain function the
engine runs where it likes (a Ray task, the driver, a test):

1. :func:`scan_file` reads one file with the same adapters, problems and digest as
   :func:`auditor.trace.read_traces` (no second parser) and keeps only its index: each trace's id,
   conversation id and span count (a :class:`FileScan`). The file's problems are reported here,
   once.
2. :func:`plan_shards` groups the traces into conversations with the key evidence reconstruction
   pools them by (:func:`auditor.evidence.conversation_key`, after the parts of a trace found in
   several files are joined, :func:`auditor.trace.merged_conversation`), and cuts the
   conversations, in input order, into at most ``shards`` contiguous runs balanced by spans. A
   conversation, and so each of its traces whole, is on one shard; a shard reads the files its
   conversations touch, and consecutive conversations of the same files stay together, so a file
   is read by one shard, or by the two whose boundary falls inside it. Deterministic: the same
   scans give the same shards.
3. :func:`read_shard` reads a shard's files with the adapter its scan used, keeps the shard's
   traces and merges the parts of each (:func:`auditor.trace.merge_split_traces`), so the shards
   together hold exactly the traces :func:`~auditor.trace.read_traces` gives for the same files,
   and the scans' problems with the shards' make exactly its problems.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.errors import UsageError
from auditor.evidence import conversation_key
from auditor.trace import (
    IngestResult,
    InputFile,
    Problem,
    Trace,
    merge_split_traces,
    merged_conversation,
    read_file,
)


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One trace of a file, as the index keeps it (a trace listed in parts is one entry)."""

    trace_id: str
    conversation_id: str | None
    spans: int


@dataclass(frozen=True)
class FileScan:
    """One file read for its index: its record, its traces' ids and sizes, its problems."""

    input: InputFile
    traces: tuple[TraceEntry, ...]
    problems: tuple[Problem, ...]


@dataclass(frozen=True)
class Shard:
    """The work of one task: the files to read (in input order) and the traces to keep from them.

    ``inputs`` are the files' records from their scans (same order as ``files``): the adapter to
    read each with and the digest the run recorded.
    """

    files: tuple[str, ...]
    trace_ids: frozenset[str]
    spans: int
    inputs: tuple[InputFile, ...] = field(default=(), compare=False)


def scan_file(path: str, format: str | None) -> FileScan:
    """Index one file: its record, each trace's id, conversation id and span count, its problems.

    The traces are read by the same adapter and through the same checks as
    :func:`auditor.trace.read_traces` and dropped as soon as they are counted, so memory holds the
    index only. The parts of a trace listed twice in the file are one entry (spans added up).

    Raises:
        UsageError: no such file, not a regular file, ``format`` names no installed adapter, or a
            URL that cannot be read.
        InputReadError: the operating system failed to read the file.
    """
    entries: dict[str, TraceEntry] = {}

    def index(trace: Trace) -> None:
        seen = entries.get(trace.trace_id)
        if seen is None:
            entries[trace.trace_id] = TraceEntry(trace.trace_id, trace.conversation_id, len(trace.spans))
        else:
            conversation = merged_conversation((seen.conversation_id, trace.conversation_id))
            entries[trace.trace_id] = TraceEntry(trace.trace_id, conversation, seen.spans + len(trace.spans))

    record, problems = read_file(path, format, index)
    return FileScan(record, tuple(entries.values()), tuple(problems))


@dataclass
class _Conversation:
    files: set[int] = field(default_factory=set)  # numbers (input order) of the files it is in
    trace_ids: list[str] = field(default_factory=list)
    spans: int = 0


def _conversations(scans: Sequence[FileScan]) -> list[_Conversation]:
    """The conversations of the scans, in order of first appearance, each with its traces' files."""
    # trace id -> [numbers of the files holding it, spans, conversation id]
    traces: dict[str, list[Any]] = {}
    for number, scan in enumerate(scans):
        for entry in scan.traces:
            found = traces.get(entry.trace_id)
            if found is None:
                traces[entry.trace_id] = [[number], entry.spans, entry.conversation_id]
                continue
            if found[0][-1] != number:
                found[0].append(number)
            found[1] += entry.spans
            found[2] = merged_conversation((found[2], entry.conversation_id))
    groups: dict[str, _Conversation] = {}
    for trace_id, (numbers, spans, conversation) in traces.items():
        key = conversation_key(TraceEntry(trace_id, conversation, spans))
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Conversation()
        group.trace_ids.append(trace_id)
        group.files.update(numbers)
        group.spans += spans
    return list(groups.values())  # in order of first appearance


def plan_shards(scans: Sequence[FileScan], shards: int) -> list[Shard]:
    """Cut the scanned traces into at most ``shards`` shards, a conversation whole on one.

    Conversations are taken in input order (by the first file that holds one of their traces) and
    cut into contiguous runs of about equal spans, so a shard reads few files and a file is read by
    few shards; a conversation larger than a share is a shard alone. Fewer shards come back when
    there are fewer conversations; none when the scans hold no trace.

    Raises:
        UsageError: ``shards`` is less than 1.
    """
    if shards < 1:
        raise UsageError(f"shards: {shards} is not a number of shards; give 1 or more.")
    groups = _conversations(scans)
    total = sum(max(g.spans, 1) for g in groups)
    runs: list[list[_Conversation]] = [[] for _ in range(shards)]
    done = 0
    for group in groups:
        weight = max(group.spans, 1)
        # The share its middle falls in: monotone in the input order, so every run is contiguous.
        runs[min(shards - 1, (2 * done + weight) * shards // (2 * total))].append(group)
        done += weight
    return [_shard(run, scans) for run in runs if run]


def _shard(run: Iterable[_Conversation], scans: Sequence[FileScan]) -> Shard:
    run = list(run)
    numbers = sorted({n for g in run for n in g.files})
    return Shard(
        files=tuple(scans[n].input.path for n in numbers),
        trace_ids=frozenset(t for g in run for t in g.trace_ids),
        spans=sum(g.spans for g in run),
        inputs=tuple(scans[n].input for n in numbers),
    )


def read_shard(shard: Shard, format: str | None) -> IngestResult:
    """The shard's traces, whole: its files read, its traces kept, the parts of each merged.

    Each file is read with the adapter its scan used (``shard.inputs``), else ``format``, else by
    sniffing, exactly as :func:`auditor.trace.read_traces` reads it. The files' problems are not
    in the result: :func:`scan_file` reported them once, and a file read by two shards must not
    report them twice. The result's ``problems`` are only those the merge alone can see (a span
    listed again with different content, :func:`auditor.trace.merge_split_traces`), each on the
    one shard that holds its trace, so empty for well-formed inputs. Its ``inputs`` are the files
    read, each with the traces kept from it.

    Raises:
        UsageError: as :func:`scan_file`, or a file no longer holds a trace the plan put on this
            shard (it changed after it was scanned).
        InputReadError: the operating system failed to read a file.
    """
    planned = {i.path: i for i in shard.inputs}
    kept: list[Trace] = []
    inputs: list[InputFile] = []

    def keep(trace: Trace) -> None:
        if trace.trace_id in shard.trace_ids:
            kept.append(trace)

    for path in shard.files:
        scanned = planned.get(path)
        before = len(kept)
        adapter = (scanned.format if scanned else None) or format
        record, _ = read_file(path, adapter, keep, digest=scanned is None)
        sha256 = scanned.sha256 if scanned else record.sha256
        inputs.append(InputFile(record.path, sha256, record.format, len(kept) - before))
    merged: list[Problem] = []
    traces = merge_split_traces(kept, merged)
    missing = shard.trace_ids - {t.trace_id for t in traces}
    if missing:
        raise UsageError(
            f"{', '.join(shard.files)}: {len(missing)} trace(s) planned for this shard are not in the "
            f"file(s) any more (the first: {min(missing)}); they changed after they were scanned. "
            "Leave the inputs alone while they are audited, and run the audit again."
        )
    return IngestResult(traces=traces, problems=merged, inputs=inputs)
