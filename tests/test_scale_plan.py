"""The input side of a batch audit at scale: scan each file, plan the shards, read a shard.

No Ray here: these are the plain functions the engine runs on its workers and driver. The inputs
are the fixtures the real instrumentations wrote, and files cut from them line by line the way
the Collector's file exporter rotates its output (one trace's spans in two files; the traces of one
conversation in files far apart). What the shards read together must be what the single process
reads: the same traces, the same spans and parent links, the same answers and evidence.
"""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from auditor.errors import UsageError
from auditor.evidence import conversation_key, reconstruct
from auditor.scale._plan import FileScan, Shard, TraceEntry, plan_shards, read_shard, scan_file
from auditor.trace import (
    Span,
    Trace,
    assemble_trace,
    file_digest,
    merge_split_traces,
    read_traces,
)
from tests.conftest import FIXTURES

MULTI_TURN = FIXTURES / "multi_turn" / "openinference.otlp.jsonl"  # two traces, one session
OPENINFERENCE = sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))

Shape = list[tuple[str, str | None, tuple[tuple[str, str | None], ...]]]


def shape(traces: list[Trace]) -> Shape:
    """Each trace's id, conversation and (span id, parent id) in order: what a merge must get right."""
    return sorted(
        (t.trace_id, t.conversation_id, tuple((s.span_id, s.parent_id) for s in t.spans)) for t in traces
    )


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def write(path: Path, chunks: list[bytes], gz: bool = False) -> str:
    data = b"".join(chunks)
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def scans_of(files: list[str]) -> list[FileScan]:
    return [scan_file(f, None) for f in files]


def shards_read(files: list[str], shards: int) -> list[Trace]:
    return [t for shard in plan_shards(scans_of(files), shards) for t in read_shard(shard, None).traces]


def answers(traces: list[Trace]) -> list[tuple[str, str, tuple[str, ...]]]:
    found = reconstruct(traces)
    return sorted((a.answer_id, a.text, tuple(e.evidence_id for e in a.evidence)) for a in found)


@pytest.fixture
def rotated(tmp_path: Path) -> list[str]:
    """The multi-turn capture cut into three files as a rotating exporter would: the first trace
    straddles files 1 and 2, the second straddles files 2 and 3 (children first, roots later)."""
    rows = lines(MULTI_TURN)
    return [
        write(tmp_path / "part-1.otlp.jsonl", rows[:3]),
        write(tmp_path / "part-2.otlp.jsonl", rows[3:8], gz=True),
        write(tmp_path / "part-3.otlp.jsonl", rows[8:]),
    ]


# -- scan ----------------------------------------------------------------------------------------


def test_a_scan_is_the_index_of_what_read_traces_reads() -> None:
    for path in [*OPENINFERENCE[:4], MULTI_TURN]:
        scan = scan_file(str(path), None)
        whole = read_traces([path])
        assert [(e.trace_id, e.conversation_id, e.spans) for e in scan.traces] == [
            (t.trace_id, t.conversation_id, len(t.spans)) for t in whole.traces
        ]
        assert scan.input == whole.inputs[0]
        assert scan.input.sha256 == file_digest(path)
        assert scan.input.format == "otlp-json"
        assert list(scan.problems) == whole.problems


def test_a_scan_reports_a_bad_line_and_read_shard_does_not(tmp_path: Path) -> None:
    rows = lines(MULTI_TURN)
    bad = write(tmp_path / "bad.otlp.jsonl", [*rows[:4], b'{"resourceSpans": [\n', *rows[4:]])
    scan = scan_file(bad, None)
    single = read_traces([bad])
    assert [p.line for p in scan.problems] == [p.line for p in single.problems] == [5]
    shards = plan_shards([scan], 2)
    results = [read_shard(s, None) for s in shards]
    assert all(r.problems == [] for r in results)  # reported once, by the scan
    assert shape([t for r in results for t in r.traces]) == shape(single.traces)


def test_a_scan_of_an_unknown_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no such file") as err:
        scan_file(str(tmp_path / "missing.otlp.jsonl"), None)
    assert "\n" not in str(err.value)


# -- a trace in several files ----------------------------------------------------------------------


def test_read_traces_merges_a_trace_split_over_files_into_the_whole_trace(rotated: list[str]) -> None:
    whole = read_traces([MULTI_TURN])
    split = read_traces(rotated)
    assert shape(split.traces) == shape(whole.traces)  # parent links across files restored
    assert [i.traces for i in split.inputs] == [1, 2, 1]  # each file gave its parts
    assert answers(split.traces) == answers(whole.traces)


def test_the_shards_together_read_what_read_traces_reads(rotated: list[str]) -> None:
    single = read_traces(rotated)
    scans = scans_of(rotated)
    for count in (1, 2, 3, 8):
        results = [read_shard(shard, None) for shard in plan_shards(scans, count)]
        traces = [t for r in results for t in r.traces]
        assert shape(traces) == shape(single.traces), count
        assert answers(traces) == answers(single.traces), count
        problems = [p for s in scans for p in s.problems] + [p for r in results for p in r.problems]
        assert sorted(map(str, problems)) == sorted(map(str, single.problems)), count


def test_a_split_trace_goes_whole_to_one_shard_with_all_its_files(tmp_path: Path) -> None:
    # Without the session attribute each trace is a conversation of its own, so only the split
    # keeps the first trace's files together.
    rows = [row.replace(b'"session.id"', b'"x.renamed"') for row in lines(MULTI_TURN)]
    files = [
        write(tmp_path / "a.otlp.jsonl", rows[:3]),
        write(tmp_path / "b.otlp.jsonl", rows[3:]),
    ]
    first, second = (t.trace_id for t in read_traces([MULTI_TURN]).traces)
    scans = scans_of(files)
    assert {e.trace_id for e in scans[0].traces} == {first}
    assert {e.trace_id for e in scans[1].traces} == {first, second}
    assert all(e.conversation_id is None for s in scans for e in s.traces)
    shards = plan_shards(scans, 4)
    assert [(s.files, s.trace_ids) for s in shards] == [
        (tuple(files), frozenset({first})),
        ((files[1],), frozenset({second})),
    ]
    assert sorted(len(t.spans) for s in shards for t in read_shard(s, None).traces) == sorted(
        len(t.spans) for t in read_traces([MULTI_TURN]).traces
    )


def test_merge_restores_links_keeps_a_repeated_span_once_and_takes_the_first_conversation() -> None:
    whole = read_traces([MULTI_TURN]).traces[0]
    spans = list(whole.spans)
    root = next(s for s in spans if s.parent_id is None)
    children = [s for s in spans if s is not root]
    early: list[Span] = children[: len(children) // 2]
    late: list[Span] = [*children[len(children) // 2 :], root, early[0]]  # early[0] listed twice
    part_a, problems_a = assemble_trace(whole.trace_id, early, "a", source_format="otlp-json")
    part_b, _ = assemble_trace(whole.trace_id, late, "b", source_format="otlp-json", conversation_id="s-b")
    assert part_a.detached_parents  # the parts lost links to each other
    assert any(p.reason.startswith("parent span ") for p in problems_a)
    other = Trace(trace_id="other", spans=())
    merged = merge_split_traces([part_a, other, part_b])
    assert [t.trace_id for t in merged] == [whole.trace_id, "other"]  # the first part's place
    assert [(s.span_id, s.parent_id) for s in merged[0].spans] == [(s.span_id, s.parent_id) for s in spans]
    assert merged[0].detached_parents == {}
    assert merged[0].conversation_id == (part_a.conversation_id or "s-b")
    assert merge_split_traces([part_a])[0] is part_a  # a trace in one piece is passed through


# -- the plan ------------------------------------------------------------------------------------


def test_the_plan_keeps_each_conversation_on_one_shard(tmp_path: Path) -> None:
    rows = lines(MULTI_TURN)
    first, second = read_traces([MULTI_TURN]).traces
    assert first.conversation_id == second.conversation_id is not None
    # The session's two turns far apart: turn one first, other sessions between, turn two last.
    files = [write(tmp_path / "000-turn-one.otlp.jsonl", rows[:5])]
    files += [str(p) for p in OPENINFERENCE if p != MULTI_TURN]
    files.append(write(tmp_path / "999-turn-two.otlp.jsonl", rows[5:]))
    scans = scans_of(files)
    for count in (2, 3, 5, 12):
        shards = plan_shards(scans, count)
        assert 1 <= len(shards) <= count
        keys: dict[str, set[int]] = {}
        for number, shard in enumerate(shards):
            for scan in scans:
                for entry in scan.traces:
                    if entry.trace_id in shard.trace_ids:
                        keys.setdefault(conversation_key(entry), set()).add(number)
        assert all(len(on) == 1 for on in keys.values()), keys
        session = next(s for s in shards if first.trace_id in s.trace_ids)
        assert second.trace_id in session.trace_ids
        assert files[0] in session.files and files[-1] in session.files
        traces = [t for s in shards for t in read_shard(s, None).traces]
        assert shape(traces) == shape(read_traces(files).traces)


def test_the_plan_is_balanced_by_spans_and_reads_few_files() -> None:
    files = [str(p) for p in OPENINFERENCE]
    scans = scans_of(files)
    total = sum(e.spans for s in scans for e in s.traces)
    biggest = max(e.spans for s in scans for e in s.traces)
    for count in (2, 3, 4):
        shards = plan_shards(scans, count)
        assert len(shards) == count
        assert sum(s.spans for s in shards) == total
        assert max(s.spans for s in shards) <= total / count + biggest
        reads = Counter(f for s in shards for f in s.files)
        assert sum(reads.values()) == len(files)  # one conversation per file here: no file read twice
        assert [f for s in shards for f in s.files] == files  # contiguous runs, in input order


def test_the_plan_is_deterministic(rotated: list[str]) -> None:
    files = [*rotated, *(str(p) for p in OPENINFERENCE[:5])]
    first = plan_shards(scans_of(files), 3)
    again = plan_shards(scans_of(files), 3)
    assert first == again
    assert [s.inputs for s in first] == [s.inputs for s in again]


def test_the_plan_is_at_most_the_shards_asked_for_and_fails_cleanly_below_one() -> None:
    scans = scans_of([str(MULTI_TURN)])
    assert len(plan_shards(scans, 4)) == 1  # one conversation: one shard
    assert plan_shards([], 3) == []
    with pytest.raises(UsageError, match="shards: 0"):
        plan_shards(scans, 0)


def test_a_planned_trace_missing_at_read_time_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "x.otlp.jsonl"
    path.write_bytes(MULTI_TURN.read_bytes())
    (shard,) = plan_shards(scans_of([str(path)]), 1)
    path.write_bytes(b"".join(lines(MULTI_TURN)[:5]))  # changed after the scan: one trace left
    with pytest.raises(UsageError, match=r"not in the file\(s\) any more") as err:
        read_shard(shard, None)
    assert "\n" not in str(err.value)


def test_a_shard_built_by_hand_reads_with_sniffing() -> None:
    ids = frozenset(t.trace_id for t in read_traces([MULTI_TURN]).traces)
    result = read_shard(Shard(files=(str(MULTI_TURN),), trace_ids=ids, spans=0), None)
    assert {t.trace_id for t in result.traces} == ids
    assert result.inputs[0].sha256 == file_digest(MULTI_TURN)
    assert result.inputs[0].format == "otlp-json"
    assert TraceEntry("t", None, 1) == TraceEntry("t", None, 1)


def test_a_trace_id_repeated_with_other_content_is_reported_once_on_either_path(tmp_path: Path) -> None:
    record = '{{"id": "q1", "question": "{q}", "sources": [{{"id": "d", "text": "{a}"}}], "answer": "{a}"}}\n'
    files = [
        write(tmp_path / "a.jsonl", [record.format(q="A?", a="Alpha is 1.").encode()]),
        write(tmp_path / "b.jsonl", [record.format(q="B?", a="Beta is 2.").encode()]),
    ]
    single = read_traces(files)
    assert [a.text for a in reconstruct(single.traces)] == ["Alpha is 1."]  # the first is kept...
    conflicts = [p for p in single.problems if "listed again with different content" in p.reason]
    assert {(p.file, p.line, p.trace_id) for p in conflicts} == {(files[1], 1, "q1")}  # ...and it is said
    assert all(f"first at {files[0]}:1" in p.reason for p in conflicts)
    scans = scans_of(files)
    shards = plan_shards(scans, 2)
    assert len(shards) == 1  # one trace id: one conversation
    read = read_shard(shards[0], None)
    scanned = [p for s in scans for p in s.problems]
    assert sorted(map(str, scanned + read.problems)) == sorted(map(str, single.problems))
    assert shape(read.traces) == shape(single.traces)


def test_the_same_span_listed_twice_is_kept_once_without_a_problem(tmp_path: Path) -> None:
    rows = lines(MULTI_TURN)
    files = [write(tmp_path / "a.otlp.jsonl", rows[:6]), write(tmp_path / "b.otlp.jsonl", rows[4:])]
    single = read_traces(files)
    assert shape(single.traces) == shape(read_traces([MULTI_TURN]).traces)
    assert not [p for p in single.problems if "listed again" in p.reason]
    assert shape(shards_read(files, 2)) == shape(single.traces)


def test_urls_are_scanned_planned_and_read_like_local_files(rotated: list[str], tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    root = f"/{tmp_path.name}"
    for path in rotated:
        fs.pipe(f"{root}/{Path(path).name}", Path(path).read_bytes())
    try:
        urls = [f"memory://{root}/{Path(p).name}" for p in rotated]
        scans = scans_of(urls)
        assert [s.input.sha256 for s in scans] == [file_digest(Path(p)) for p in rotated]
        shards = plan_shards(scans, 2)
        assert all(f.startswith("memory://") for s in shards for f in s.files)
        traces = [t for s in shards for t in read_shard(s, None).traces]
        assert shape(traces) == shape(read_traces(rotated).traces)
    finally:
        fs.rm(root, recursive=True)
