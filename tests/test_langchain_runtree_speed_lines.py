"""Lines read from the chunked input with the shortcut for a line whole in its chunk are the lines
the general loop reads (kept here as the reference), whatever the chunk size, line lengths and limit."""

from __future__ import annotations

import io
import random

import pytest
from auditor_langchain import buffers
from auditor_langchain.buffers import Bytes


def _former_readline(data: Bytes, limit: int = -1) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        if data.off >= len(data.buf):
            data.buf, data.off = data.chunk(), 0
            if not data.buf:
                break
        cut = data.buf.find(b"\n", data.off)
        if cut >= 0:
            parts.append(data.buf[data.off : cut + 1])
            data.off = cut + 1
            break
        parts.append(data.buf[data.off :])
        size += len(data.buf) - data.off
        data.buf, data.off = b"", 0
        if 0 <= limit <= size:
            break
    return b"".join(parts)


def _text(rng: random.Random) -> bytes:
    lines = [b"x" * rng.choice([0, 1, 5, 17, 40]) for _ in range(rng.randrange(1, 30))]
    text = b"\n".join(lines)
    return text + (b"\n" if rng.random() < 0.5 else b"")


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 16, 64])
def test_lines_are_read_as_the_general_loop_reads_them(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(buffers, "CHUNK", chunk)
    rng = random.Random(chunk)
    for _ in range(200):
        text = _text(rng)
        now, former = Bytes(io.BytesIO(text), "f"), Bytes(io.BytesIO(text), "f")
        while True:
            limit = rng.choice([-1, -1, 0, 1, 4, 20])
            line = now.readline(limit)
            assert line == _former_readline(former, limit)
            assert (now.buf[now.off :], now.eof) == (former.buf[former.off :], former.eof)
            if not line:
                break
        assert b"".join(Bytes(io.BytesIO(text), "f").lines()) == text
