"""The typed OTLP JSON reader (``auditor_otel.otlp_typed``) gives what the general reader gives.

A line in the standard shape is read into structs; any other line is refused and read by the
general reader. Either way the spans, traces and problems must be the very ones the general reader
alone produces (the typed reader made to refuse every line), for lines that fit, lines that do not, and a
file that mixes them.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest
from auditor_otel import otlp_json
from auditor_otel.otlp_json import OtlpJsonAdapter, raw_spans
from auditor_otel.otlp_typed import typed_spans
from otel_samples.otlp import request, sid, span

from auditor.trace import Trace, loads_fast
from tests.conftest import ROOT

FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("*/*.otlp.jsonl"))


def _refuse(data: bytes, line: int | None) -> list[Any]:
    raise ValueError("refused, as a line that does not fit would be")


@contextmanager
def _general_reader_only() -> Iterator[None]:
    """Every line read by the general reader, as before the typed reader existed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(otlp_json, "typed_spans", _refuse)
        yield


def _read(data: bytes, typed: bool) -> list[str]:
    """Everything the adapter yields for ``data``, as comparable text."""
    with nullcontext() if typed else _general_reader_only():
        items = list(OtlpJsonAdapter().parse(io.BytesIO(data), "t.jsonl"))
    return [
        item.model_dump_json() + repr(item.detached_parents) if isinstance(item, Trace) else repr(item)
        for item in items
    ]


def _same_both_ways(data: bytes) -> list[str]:
    typed, general = _read(data, True), _read(data, False)
    assert typed == general
    return typed


def _line(obj: Any) -> bytes:
    return json.dumps(obj).encode()


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_lines_fit_the_schema_and_give_the_general_readers_spans(path: Path) -> None:
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    for number, data in enumerate(lines, start=1):
        typed = typed_spans(data, number)  # fits: no ValueError
        assert repr(typed) == repr(list(raw_spans(loads_fast(data), number)))
        assert typed
    assert _same_both_ways(path.read_bytes())


def _base() -> dict[str, Any]:
    child = span(2, "child", parent=1, start=1, end=2, attrs={"gen_ai.system": "openai", "n": 3})
    child["events"] = [
        {"name": "gen_ai.content.prompt", "timeUnixNano": "1772000001000000000", "attributes": []}
    ]
    root = span(1, "root", start=0, end=3, attrs={"llm.request.type": "chat", "x": [1, "a"]})
    return request([child, root])


def _with(edit: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_base())
    edit(doc)
    return doc


def _spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return spans


def _attr(doc: dict[str, Any], value: Any, key: str = "odd") -> None:
    _spans(doc)[0]["attributes"].append({"key": key, "value": value})


# Lines the typed reader reads itself: unusual values, read by the general reader's own rules.
FITTING = {
    # An AnyValue is decoded as a dict and read by the general reader's function, whatever its keys.
    "an AnyValue with two value keys": lambda d: _attr(d, {"intValue": "1", "stringValue": "one"}),
    "an AnyValue with two value keys, a string last": lambda d: _attr(
        d, {"boolValue": True, "stringValue": "o"}
    ),
    "an AnyValue spelt in snake_case": lambda d: _attr(d, {"string_value": "x"}),
    "an AnyValue with an unknown key only": lambda d: _attr(d, {"fooValue": "x"}),
    "int64 as a string and as a number": lambda d: (
        _attr(d, {"intValue": "42"}),
        _attr(d, {"intValue": 7}, "b"),
    ),
    "an intValue that is not an integer": lambda d: _attr(d, {"intValue": "4x2"}),
    "an intValue that is a float": lambda d: _attr(d, {"intValue": 5.0}),
    "a boolValue as text": lambda d: _attr(d, {"boolValue": "true"}),
    "a doubleValue as an integer and as text": lambda d: (
        _attr(d, {"doubleValue": 2}),
        _attr(d, {"doubleValue": "NaN"}, "b"),
    ),
    "a stringValue that is a number": lambda d: _attr(d, {"stringValue": 5}),
    "bytes, good and bad": lambda d: (_attr(d, {"bytesValue": "aGk="}), _attr(d, {"bytesValue": "**"}, "b")),
    "an empty AnyValue": lambda d: _attr(d, {}),
    "a bare scalar, a null and no value": lambda d: (
        _attr(d, "bare"),
        _attr(d, None, "b"),
        _spans(d)[0]["attributes"].append({"key": "c"}),
    ),
    "nested arrays and key-value lists": lambda d: _attr(
        d,
        {
            "kvlistValue": {
                "values": [{"key": "k", "value": {"arrayValue": {"values": [{"intValue": "1"}, {}]}}}]
            }
        },
    ),
    "an arrayValue without values": lambda d: _attr(d, {"arrayValue": {"values": 3}}),
    "a repeated attribute key": lambda d: (
        _attr(d, {"stringValue": "a"}, "k"),
        _attr(d, {"stringValue": "b"}, "k"),
    ),
    "status by name and by number": lambda d: (
        _spans(d)[0].update(status={"code": "STATUS_CODE_ERROR", "message": "boom", "extra": 1}),
        _spans(d)[1].update(status={"code": 7, "message": 3}),
    ),
    "a bad parent id and an upper-case trace id": lambda d: (
        _spans(d)[0].update(parentSpanId="zz"),
        _spans(d)[1].update(traceId=_spans(d)[1]["traceId"].upper()),
    ),
    "no start time, an end time as a number": lambda d: (
        _spans(d)[0].pop("startTimeUnixNano"),
        _spans(d)[1].update(endTimeUnixNano=1772000003000000000),
    ),
    "a name that is not a string, no scope": lambda d: (
        _spans(d)[0].update(name=5),
        d["resourceSpans"][0]["scopeSpans"][0].pop("scope"),
    ),
    "an event without time or name": lambda d: _spans(d)[0]["events"].append({"attributes": None}),
    "null lists": lambda d: _spans(d)[0].update(events=None, attributes=None, status=None),
    "no resource spans at all": lambda d: d.update(resourceSpans=[]),
    "a repeated field": lambda d: None,  # written below, as text
}


@pytest.mark.parametrize("name", list(FITTING))
def test_lines_that_fit_are_read_by_the_typed_reader_as_the_general_one_reads_them(name: str) -> None:
    data = _line(_with(FITTING[name]))
    if name == "a repeated field":
        data = data.replace(b'"name": "child"', b'"name": "first", "name": "child"', 1)
    # repr, not ==: a NaN read both ways is the same NaN, but not equal to itself
    assert repr(typed_spans(data, 3)) == repr(list(raw_spans(loads_fast(data), 3)))
    _same_both_ways(data + b"\n" + _line(_base()).replace(b"0af76519", b"1af76519") + b"\n")


# Lines the typed reader refuses, to be read by the general reader.
MISFITS = {
    "snake_case keys": lambda d: _spans(d)[0].update(trace_id=_spans(d)[0].pop("traceId")),
    "snake_case envelope": lambda d: d.update(resource_spans=d.pop("resourceSpans")),
    "an old scope key": lambda d: d["resourceSpans"][0].update(
        instrumentationLibrarySpans=d["resourceSpans"][0].pop("scopeSpans")
    ),
    "an unknown span field": lambda d: _spans(d)[0].update(unknownField={"x": 1}),
    "an attribute value that is a list": lambda d: _attr(d, [1, 2]),
    "an attribute without a key": lambda d: _spans(d)[0]["attributes"].append(
        {"value": {"stringValue": "x"}}
    ),
    "a span that is not an object": lambda d: _spans(d).append("span"),
    "events that are not a list": lambda d: _spans(d)[0].update(events={"name": "e"}),
    "an event that is not an object": lambda d: _spans(d)[0]["events"].append(3),
    "attributes that are not a list": lambda d: _spans(d)[0].update(attributes={"k": "v"}),
    "a status that is not an object": lambda d: _spans(d)[0].update(status="OK"),
    "no resourceSpans list": lambda d: d.update(resourceSpans=None),
}


@pytest.mark.parametrize("name", list(MISFITS))
def test_lines_that_do_not_fit_are_refused_and_read_as_before(name: str) -> None:
    data = _line(_with(MISFITS[name]))
    with pytest.raises(ValueError):
        typed_spans(data, 1)
    _same_both_ways(data + b"\n" + _line(_base()).replace(b"0af76519", b"1af76519") + b"\n")


@pytest.mark.parametrize(
    "data",
    [
        b"[" + _line(_base()) + b"]",  # a list of requests
        _line(_base()).replace(b'"child"', b'"\\ud800child"'),  # a lone surrogate
        _line(_base()).replace(b'"child"', b'"\xffchild"'),  # invalid UTF-8
        _line(_base()).replace(b'"child"', b'"child"', 1) + b" {}",  # two values on a line
        _line(_base())[:-5],  # truncated
        _line(_base()).replace(b'"intValue": "3"', b'"intValue": NaN'),
    ],
    ids=["list", "surrogate", "utf-8", "two-values", "truncated", "nan"],
)
def test_what_the_fast_json_reader_refuses_the_typed_reader_refuses_too(data: bytes) -> None:
    with pytest.raises(ValueError):
        typed_spans(data, 1)
    _same_both_ways(data + b"\n")


def test_deep_attribute_values_give_the_same_problems_both_ways() -> None:
    # Around the depth where the JSON readers give up, the typed reader must not read a line the
    # general one reports as too deep (nor the other way round).
    lines = []
    for k, depth in enumerate(range(900, 1010, 3)):
        levels = depth // 3  # each level is an object, an object and a list
        value = b'{"arrayValue": {"values": [' * levels + b'{"stringValue": "leaf"}' + b"]}}" * levels
        doc = request([span(1, "root", attrs={}, trace=f"{k + 1:032x}")])
        _attr(doc, "VALUE")
        lines.append(_line(doc).replace(b'"VALUE"', value))
    out = _same_both_ways(b"\n".join(lines) + b"\n")
    assert any("nested too deeply" in item for item in out)
    assert any(item.startswith("{") for item in out)  # and shallower lines are read


def test_a_file_mixing_lines_that_fit_and_lines_that_do_not_reads_as_before() -> None:
    parts = []
    for k, edit in enumerate([*FITTING.values(), *MISFITS.values()]):
        text = _line(_with(edit)).replace(b"0af7651916cd43dd", f"{k + 1:016x}".encode())
        parts.append(text)
    parts.insert(3, b"not json")
    data = b"\n".join(parts) + b"\n"
    out = _same_both_ways(data)
    assert sum(item.startswith("{") for item in out) >= len(FITTING)
    assert any("not valid JSON" in item for item in out)


def test_spans_of_a_split_trace_merge_the_same_way(tmp_path: Path) -> None:
    from auditor.trace import read_traces

    child = request([span(2, "child", parent=1, start=1, end=2)])
    root = request([span(1, "root", start=0, end=3)])
    (tmp_path / "a.jsonl").write_bytes(_line(child) + b"\n")
    (tmp_path / "b.jsonl").write_bytes(_line(root) + b"\n")
    results = []
    for typed in (True, False):
        with nullcontext() if typed else _general_reader_only():
            result = read_traces([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], "otlp-json")
        [trace] = result.traces
        assert [s.parent_id for s in trace.spans] == [None, sid(1)]
        results.append(trace.model_dump_json())
    assert results[0] == results[1]
