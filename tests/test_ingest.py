"""Reading input files: what is not a trace file, or not readable, says so in one line; a bad start
(a byte-order mark, a damaged or overlong first line, a truncated gzip stream) loses no good trace."""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from otel_samples.otlp import line, span

from auditor.cli import cli
from auditor.errors import InputReadError, NothingReadError, UsageError
from auditor.trace import Problem, Trace, read_traces
from auditor.trace import _input as input_module
from auditor.trace._ingest import iter_file
from tests.conftest import ROOT

BOM = b"\xef\xbb\xbf"


def record(n: int) -> bytes:
    passage = f"Refunds for order {n} are accepted within {n % 40 + 1} days of purchase."
    data = {"id": f"r{n}", "question": f"Refund window {n}?", "sources": [passage], "answer": passage}
    return json.dumps(data).encode() + b"\n"


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def one_line(err: BaseException) -> str:
    message = str(err)
    assert "\n" not in message, message
    return message


# --- a bad start ---------------------------------------------------------------------------------


def test_a_truncated_gzip_stream_is_named_and_the_traces_before_the_cut_are_read(tmp_path: Path) -> None:
    whole = gzip.compress(b"".join(record(n) for n in range(200)))
    path = write(tmp_path / "records.jsonl.gz", whole[: len(whole) // 2])
    result = read_traces([path])  # no --format: detection must see the decompressed start
    assert result.inputs[0].format == "records"
    assert 20 < len(result.traces) < 200
    [cut] = [p for p in result.problems if "gzip" in p.reason]
    assert str(cut).startswith(f"{path}: error: truncated gzip stream")


def test_a_damaged_gzip_stream_keeps_what_came_before_the_damage(tmp_path: Path) -> None:
    noise = random.Random(7)  # incompressible padding, so the damage falls among the records
    rows = b"".join(
        record(n) + json.dumps({"pad": noise.randbytes(300).hex()}).encode() + b"\n" for n in range(100)
    )
    data = bytearray(gzip.compress(rows))
    data[len(data) * 3 // 4] ^= 0xFF
    result = read_traces([write(tmp_path / "records.jsonl.gz", bytes(data))])
    assert 30 < len(result.traces) < 100
    assert any(
        str(p).startswith(f"{tmp_path / 'records.jsonl.gz'}: error: damaged gzip stream")
        for p in result.problems
    )


def test_concatenated_gzip_members_are_all_read(tmp_path: Path) -> None:
    data = gzip.compress(record(1)) + gzip.compress(record(2) + record(3))
    result = read_traces([write(tmp_path / "two.jsonl.gz", data)])
    assert [t.trace_id for t in result.traces] == ["r1", "r2", "r3"] and result.problems == []


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        ("records.jsonl", record(1) + record(2), "records"),
        ("otlp.jsonl", line([span(1, "root")]).encode() + b"\n", "otlp-json"),
    ],
)
def test_a_byte_order_mark_hides_no_format(tmp_path: Path, name: str, body: bytes, expected: str) -> None:
    result = read_traces([write(tmp_path / name, BOM + body)])
    assert result.inputs[0].format == expected
    assert result.traces and result.problems == []


def test_a_damaged_overlong_first_line_hides_no_format(tmp_path: Path) -> None:
    records = write(tmp_path / "records.jsonl", b'{"id": "x", ' + b"x" * 6000 + b"\n" + record(2))
    result = read_traces([records])
    assert result.inputs[0].format == "records"
    assert [t.trace_id for t in result.traces] == ["r2"]
    assert [p.line for p in result.problems] == [1]
    otlp = write(
        tmp_path / "otlp.jsonl", b"garbage " * 1000 + b"\n" + line([span(1, "root")]).encode() + b"\n"
    )
    result = read_traces([otlp])
    assert result.inputs[0].format == "otlp-json"
    assert len(result.traces) == 1 and [p.line for p in result.problems] == [1]


def test_blank_lines_before_records_are_not_read_as_protobuf(tmp_path: Path) -> None:
    # A newline is 0x0a, the protobuf tag of field 1: the proto sniffer used to claim this file.
    result = read_traces([write(tmp_path / "records.jsonl", b"\n\n\n" + record(1))])
    assert result.inputs[0].format == "records" and len(result.traces) == 1


# --- not a trace file ----------------------------------------------------------------------------


@pytest.mark.parametrize("body", [b"", b"\n\n \t\r\n" * 50, BOM, BOM + b"\n\n"])
def test_an_empty_or_blank_file_says_so(tmp_path: Path, body: bytes) -> None:
    path = write(tmp_path / "empty.jsonl", body)
    with pytest.raises(NothingReadError) as caught:
        read_traces([path])
    message = one_line(caught.value)
    assert f"{path} (no traces: the file is empty)" in message


def test_a_gzip_of_newlines_is_empty_not_corrupt_protobuf(tmp_path: Path) -> None:
    path = write(tmp_path / "blank.gz", gzip.compress(b"\n" * 5_000_000))
    with pytest.raises(NothingReadError) as caught:
        read_traces([path])
    assert "no traces: the file is empty" in one_line(caught.value)
    assert "protobuf" not in str(caught.value) and "ExportTraceServiceRequest" not in str(caught.value)


def test_an_empty_file_beside_a_good_one_is_a_problem_and_the_good_one_is_read(tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", record(1))
    empty = write(tmp_path / "empty.jsonl", b"")
    result = read_traces([empty, good])
    assert len(result.traces) == 1
    assert [str(p) for p in result.problems] == [f"{empty}: error: no traces: the file is empty"]
    assert [(i.path, i.format, i.traces) for i in result.inputs] == [
        (str(empty), None, 0),
        (str(good), "records", 1),
    ]


def test_nothing_read_names_every_file_and_what_was_tried(tmp_path: Path) -> None:
    blob = write(tmp_path / "blob.bin", b"\x00\x01\x02 not a trace")
    otlp = write(tmp_path / "bad.jsonl", b'{"resourceSpans": [{"scopeSpans": {}}]}\n')
    with pytest.raises(NothingReadError) as caught:
        read_traces([blob, otlp])
    message = one_line(caught.value)
    assert message.startswith("No trace could be read from any of the 2 inputs: ")
    assert f"{blob} (no installed adapter recognises this file (tried langchain, otlp-json" in message
    assert (
        f"{otlp} (read as otlp-json: 1 problem(s), the first: line 1: resourceSpans[].scopeSpans" in message
    )


def test_a_character_device_is_not_a_regular_file() -> None:
    with pytest.raises(UsageError) as caught:
        read_traces([Path("/dev/zero")])
    assert one_line(caught.value) == (
        "/dev/zero: not a regular file (a character device); pass a trace file saved on disk."
    )


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    done = subprocess.run(  # opening a FIFO with no writer blocks: the timeout is the hang bound
        [sys.executable, "-c", "from auditor.cli import main; main()", "evidence", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip()
        == f"Error: {fifo}: not a regular file (a FIFO (named pipe)); pass a trace file saved on disk."
    )


# --- read errors ---------------------------------------------------------------------------------


class FailingFile(io.RawIOBase):
    """A file whose reads fail with EIO once ``good`` bytes have been read."""

    def __init__(self, data: bytes, good: int) -> None:
        self._data = io.BytesIO(data)
        self._good = good

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._data.tell() >= self._good:
            raise OSError(errno.EIO, "Input/output error")
        chunk = self._data.read(min(len(buffer), self._good - self._data.tell()))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def fail_reads(monkeypatch: pytest.MonkeyPatch, good: int) -> None:
    real = open

    def fake_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "b" in mode and str(path).endswith(".jsonl"):
            return FailingFile(Path(path).read_bytes(), good)
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(input_module, "open", fake_open, raising=False)


@pytest.mark.parametrize("good", [0, 600])
def test_a_read_error_is_one_line_naming_the_file_and_the_os_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, good: int
) -> None:
    path = write(tmp_path / "records.jsonl", b"".join(record(n) for n in range(20)))
    fail_reads(monkeypatch, good)
    with pytest.raises(InputReadError) as caught:
        read_traces([path], "records" if good else None)
    assert one_line(caught.value).startswith(f"{path}: could not read the file: Input/output error (EIO).")
    out = CliRunner().invoke(cli, ["evidence", str(path)])
    assert out.exit_code == 2 and out.exception is not None and isinstance(out.exception, SystemExit)
    assert out.output.strip().splitlines() == [f"Error: {caught.value}"]


def test_a_read_error_is_reported_even_when_the_adapter_catches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = {"id": "0b9f1a9e-0000-4000-8000-000000000001", "name": "r", "run_type": "chain"}
    runs = [{**run, "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01Z"}]
    path = write(tmp_path / "runs.jsonl", b"".join(json.dumps(r).encode() + b"\n" for r in runs * 400))
    fail_reads(monkeypatch, 5000)
    with pytest.raises(InputReadError):  # the langchain adapter turns OSError into a problem itself
        list(iter_file(path, "langchain"))


def test_iter_file_yields_a_problem_for_an_empty_file(tmp_path: Path) -> None:
    items = list(iter_file(write(tmp_path / "e.jsonl", b"\n")))
    assert items == [Problem(file=str(tmp_path / "e.jsonl"), reason="no traces: the file is empty")]
    assert not any(isinstance(i, Trace) for i in items)
