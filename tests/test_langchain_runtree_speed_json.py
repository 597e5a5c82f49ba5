"""The JSON reader's and writer's shortcuts give what their plain forms give: the margin levels
unwrapped in one expression, and the writer's texts kept for the same bytes written again."""

from __future__ import annotations

import json
import random
import threading
from typing import Any

from auditor.trace import _json, dumps_fast, loads_fast, loads_fast_writable


def _unwrap_by_loop(value: Any) -> Any:
    for _ in range(_json._MARGIN):
        value = value[0]
    return value


def test_the_margin_unwrapped_in_one_expression_is_the_margin_unwrapped_level_by_level() -> None:
    inner = {"inner": "value"}
    value: Any = inner
    for _ in range(_json._MARGIN):
        value = (value,)
    assert _json._unwrap(value) is _unwrap_by_loop(value) is inner
    # One level more than the margin: exactly the margin's levels are taken off, no more.
    assert _json._unwrap((value,)) == _unwrap_by_loop((value,)) == (inner,)


def test_every_margin_level_is_unwrapped_and_no_more() -> None:
    for text in (b"[]", b"[[1]]", b'{"a": [[[2]]]}', b"3", b'"x"'):
        assert loads_fast(text) == json.loads(text)
        assert type(loads_fast(text)) is type(json.loads(text))


def _values(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 4 else 4)
    if kind == 0:
        return rng.choice(["", "a, b: c", "caf\u00e9 \u2028 \U0001f600", '"quoted" \\ \n'])
    if kind == 1:
        return rng.choice([0, -1, 10**20, 1.5, -0.0, 0.1, True, False])
    if kind == 2:
        return None
    if kind == 3:
        return rng.choice([{}, [], {"k": "v"}, [1]])
    if kind == 4:
        return [_values(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice("abcd"): _values(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_texts_kept_for_bytes_written_again_are_the_texts_json_dumps_gives() -> None:
    rng = random.Random(7)
    pool = [_values(rng) for _ in range(40)]
    # Near-twins the fast writer tells apart by their bytes though Python finds them equal:
    # key order, 1 / 1.0 / True, -0.0 / 0.0.
    pool += [{"a": 1, "b": 2}, {"b": 2, "a": 1}, [1], [1.0], [True], [0.0], [-0.0], {"a": [1]}, {"a": [True]}]
    for _ in range(3000):
        value = rng.choice(pool[-12:] if rng.random() < 0.5 else pool)  # repeats close together, too
        assert dumps_fast(value) == json.dumps(value, ensure_ascii=False)


def test_the_kept_texts_follow_each_value_read_from_a_line() -> None:
    lines = [
        b'{"messages": [{"content": "a, b", "type": "human"}], "n": 1}',
        b'{"messages": [{"content": "a, b", "type": "human"}], "n": 1.0}',
        b'{"n": 1, "messages": [{"content": "a, b", "type": "human"}]}',
        b'{"messages": [{"content": "a, b", "type": "human"}], "n": 1}',
    ]
    for line in lines * 3:
        value, writable = loads_fast_writable(line)
        assert writable
        assert dumps_fast(value) == json.dumps(json.loads(line), ensure_ascii=False)


def test_each_thread_reads_and_writes_with_a_reader_of_its_own() -> None:
    lines = [json.dumps({"n": n, "x": [n * 0.5, 10**n], "s": f"caf\u00e9 {n}"}).encode() for n in range(40)]
    results: dict[int, list[tuple[Any, bool, str]]] = {}
    readers: dict[int, list[Any]] = {}

    def work(index: int) -> None:
        readers[index] = [_json._reader(), _json._reader()]
        out = []
        for line in lines[index::4] * 20:
            value, writable = loads_fast_writable(line)
            out.append((value, writable, dumps_fast(value)))
        results[index] = out

    threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index in range(4):
        first, again = readers[index]
        assert first is again  # one reader per thread, kept
        assert all(first is not readers[other][0] for other in range(4) if other != index)
        for line, (value, writable, text) in zip(lines[index::4] * 20, results[index], strict=True):
            assert value == json.loads(line) and writable
            assert text == json.dumps(json.loads(line), ensure_ascii=False)
