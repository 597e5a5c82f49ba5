"""The fast paths of ingest give what the general paths give: the JSON reader, the trusted span
constructor, the repair check, the adapters' caches and shortcuts. Speed itself is measured in
``benchmarks/ingest.py``; these tests pin that nothing read, repaired or reported changed."""

from __future__ import annotations

import json
import pickle
import random
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from auditor_langchain import ids
from auditor_otel import ids as otel_ids
from auditor_otel.anyvalue import decode_json_attributes
from auditor_otel.conventions.common import indexed
from auditor_otel.spans import RawSpan, build_span

from auditor.trace import (
    Message,
    SourceRef,
    Span,
    SpanKind,
    Trace,
    assemble_trace,
    dumps_fast,
    loads_fast,
    loads_fast_writable,
    repair_trace,
)
from auditor.trace._ingest import iter_file
from tests.conftest import ROOT

SAME = [
    b'{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
    b"123456789012345678901234567890",
    b"-123456789012345678901234567890",
    b"[0.1, 2.5e-308, 5e-324, 1e22, -0.0, 1.7976931348623157e308, 9007199254740993.0, 1E5]",
    b'{"a": 1, "b": 2, "a": 3}',
    '"caf\u00e9 \u2028 \U0001f600"'.encode(),
    b'"\\ud83d\\ude00 \\u0000 \\n \\/ \\""',
    b" \t[]\r\n",
]
REFUSED = [
    b"NaN",
    b"[Infinity]",
    b"1e400",
    b'"\\ud800"',
    b'"\\udc00 x"',
    b'"\xed\xa0\x80"',
    b'"\xff"',
    b"\xef\xbb\xbf{}",
    b"1 2",
    b"1, 2",
    b"1], [2",
    b"[1]], [[2]",
    b"",
    b"   ",
    b"[1,]",
]


@pytest.mark.parametrize("text", SAME)
def test_the_fast_reader_gives_what_json_loads_gives(text: bytes) -> None:
    fast, slow = loads_fast(text), json.loads(text.decode())
    assert repr(fast) == repr(slow)
    assert type(fast) is type(slow)


@pytest.mark.parametrize("text", REFUSED)
def test_texts_the_fast_reader_may_read_otherwise_are_left_to_json_loads(text: bytes) -> None:
    with pytest.raises(ValueError):
        loads_fast(text)


def test_random_numbers_read_the_same() -> None:
    rng = random.Random(14)
    for _ in range(2000):
        number = rng.choice([rng.uniform(-1e6, 1e6), rng.random() * 10 ** rng.randint(-300, 300)])
        text = repr(number).encode()
        assert loads_fast(text) == json.loads(text)
        big = str(rng.getrandbits(rng.randint(1, 200))).encode()
        assert loads_fast(big) == json.loads(big)


@pytest.mark.slow
def test_the_fast_reader_gives_up_on_deep_nesting_before_json_loads_would() -> None:
    # Where json.loads gives up depends on the stack; from the same place, the fast reader must
    # never read a value json.loads would refuse (it would turn a recorded problem into a read).
    refused = 0
    for depth in range(900, 1100):
        for text in (b"[" * depth + b"]" * depth, b'{"a": ' * depth + b"1" + b"}" * depth):
            try:
                loads_fast(text)
            except ValueError:
                refused += 1
                continue
            json.loads(text.decode())
    assert refused  # the band is crossed


def test_deep_lines_are_problems_where_json_loads_gives_up(tmp_path: Path) -> None:
    def refused(depth: int) -> bool:
        try:
            json.loads("[" * depth + "]" * depth)
        except RecursionError:
            return True
        return False

    limit = next(d for d in range(500, 2000) if refused(d))  # json.loads's limit, from here
    depths = range(limit - 24, limit + 4)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(b"[" * d + b"]" * d + b"\n" for d in depths))
    problems = [p for p in iter_file(path, "otlp-json")]
    too_deep = {depths[p.line - 1] for p in problems if p.line and "nested too deeply" in p.reason}
    # The adapter reads from a few frames deeper than this test: it may give up a few levels
    # sooner, never later, and reads what is well below the limit.
    assert {d for d in depths if d >= limit} <= too_deep
    assert min(too_deep) >= limit - 12


def _spans() -> list[Span]:
    path = ROOT / "tests" / "fixtures" / "multi_hop" / "openinference.otlp.jsonl"
    return [s for t in iter_file(path, "otlp-json") if isinstance(t, Trace) for s in t.spans]


def test_a_trusted_span_is_the_span_validation_builds() -> None:
    for span in _spans():
        fields = {name: getattr(span, name) for name in span.model_fields_set}
        trusted, validated = Span.trusted(**fields), Span(**fields)
        assert trusted == validated
        assert repr(trusted) == repr(validated)
        assert trusted.model_fields_set == validated.model_fields_set
        assert trusted.model_dump_json() == validated.model_dump_json()
        assert list(trusted.__dict__) == list(validated.__dict__)
        # the slots set through BaseModel's descriptors hold what validation puts there
        assert (trusted.__pydantic_extra__, trusted.__pydantic_private__) == (None, None)
        assert pickle.loads(pickle.dumps(trusted)) == validated
        assert trusted.model_copy(update={"name": "n"}) == validated.model_copy(update={"name": "n"})


def test_a_trusted_span_still_refuses_unknown_and_missing_fields() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(TypeError, match="unknown fields \\['nmae'\\]"):
        Span.trusted(trace_id="t", span_id="s", nmae="x", name="x", start=now, end=now)
    with pytest.raises(TypeError, match="missing fields \\['end'\\]"):
        Span.trusted(trace_id="t", span_id="s", name="x", start=now)
    first = Span.trusted(trace_id="t", span_id="s", name="x", start=now, end=now)
    second = Span.trusted(trace_id="t", span_id="s", name="x", start=now, end=now)
    assert first.attributes == {} and first.attributes is not second.attributes  # a fresh default
    assert first.kind is SpanKind.OTHER and first.source is None


def _nested(levels: int, leaf: Any) -> Any:
    for n in range(levels):
        leaf = {"k": leaf} if n % 2 else [leaf]
    return leaf


# Levels of wrapping at which the leaf is cut: a container at depth 64 is dropped (the attributes
# dict is depth 0), so an empty one at 63 levels, a string's container at 64, and a message's
# (empty) tool calls, one level inside it, at 62.
@pytest.mark.parametrize(
    ("leaf", "cut"), [({}, 63), ([], 63), ((), 63), ("x", 64), (Message(role="user", content="m"), 62)]
)
def test_nesting_is_bounded_at_the_same_depth_by_the_quick_check_and_the_repair(leaf: Any, cut: int) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for levels in range(60, 66):
        span = Span(
            trace_id="t",
            span_id="s",
            name="x",
            start=now,
            end=now,
            attributes={"a": _nested(levels, leaf)},
            source=SourceRef(file="f.jsonl", line=1),
        )
        trace = Trace(trace_id="t", spans=(span,))
        fixed, problems = repair_trace(trace, "f.jsonl")
        deep = levels >= cut
        assert (fixed is not trace) is deep, (levels, leaf)
        assert bool(problems) is deep


def test_a_lone_surrogate_anywhere_is_still_found() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for value in ("\ud800", ["ok", "\udc00"], {"\ud800": 1}, {"k": ("x", "\ud800")}):
        span = Span(trace_id="t", span_id="s", name="x", start=now, end=now, attributes={"a": value})
        _, problems = repair_trace(Trace(trace_id="t", spans=(span,)), "f")
        assert problems and "surrogates" in problems[0].reason


def test_attribute_values_read_by_the_shortcut_match_the_general_rules() -> None:
    items = [
        {"key": "s", "value": {"stringValue": "text"}},
        {"key": "i", "value": {"intValue": "42"}},
        {"key": "n", "value": {"intValue": 7}},
        {"key": "b", "value": {"boolValue": True}},
        {"key": "d", "value": {"doubleValue": 2}},
        {"key": "not-a-string", "value": {"stringValue": 5}},
        {"key": "bool-as-int", "value": {"intValue": True}},
        {"key": "snake", "value": {"string_value": "x"}},
        {"key": "two", "value": {"foo": 1, "stringValue": "y"}},
    ]
    notes: list[str] = []
    assert decode_json_attributes(items, notes) == {
        "s": "text",
        "i": 42,
        "n": 7,
        "b": True,
        "d": 2.0,
        "not-a-string": "5",
        "bool-as-int": None,
        "snake": "x",
        "two": "y",
    }
    assert len(notes) == 2


def test_indexed_keys_are_found_whatever_the_other_keys_hold() -> None:
    attrs = {
        "x\nllm.input_messages.0.message.role": "decoy",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.0.message.content": "hi",
        "other": 1,
    }
    assert indexed(attrs, "llm.input_messages") == [{"message.content": "hi"}, {"message.role": "user"}]
    assert indexed(attrs, "llm.output_messages") == []
    assert indexed({"x\nllm.output_messages.0.a": 1}, "llm.output_messages") == []


def test_a_span_is_built_the_same_with_or_without_attributes() -> None:
    raw = RawSpan(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="n", start_ns=10**18, end_ns=None)
    span, convention, problems = build_span(raw, "f.jsonl")
    assert span is not None and convention is None
    assert span == Span(
        trace_id="a" * 32,
        span_id="b" * 16,
        name="n",
        start=span.start,
        end=span.start,
        source=SourceRef(file="f.jsonl", line=None),
    )
    assert [p.reason for p in problems] == ["span 'n' has no end time; its start time is used"]


def test_langchain_ids_and_times_read_from_the_caches_are_the_ones_read_afresh() -> None:
    samples: list[Any] = [
        "11111111-2222-3333-4444-555555555555",
        "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE",
        "{aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee}",
        "urn:uuid:aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
        "aaaaaaaabbbbccccddddeeeeeeeeeeee",
        " Run-7 ",
        "",
        "   ",
        7,
        None,
        True,
    ]
    for _ in range(2):  # the second time from the cache
        for value in samples:
            expected = None
            if value is not None and not isinstance(value, bool) and str(value).strip():
                try:
                    expected = str(uuid.UUID(str(value).strip()))
                except ValueError:
                    expected = str(value).strip().lower()
            assert ids.normalise_id(value) == expected, value
        assert ids.parse_time("2026-11-29T13:44:35.961528+01:00") == datetime(
            2026, 11, 29, 12, 44, 35, 961528, tzinfo=UTC
        )
        assert ids.parse_time("2026-11-29T13:44:35") == datetime(2026, 11, 29, 13, 44, 35, tzinfo=UTC)
        assert ids.parse_time("not a time") is None


def test_the_langchain_caches_stay_bounded() -> None:
    for n in range(ids._KEPT + 10):
        ids.normalise_id(f"run-{n}")
        ids.parse_time(f"2026-01-01T00:00:{n % 60:02d}.{n:06d}")
    assert len(ids._IDS) <= ids._KEPT
    assert len(ids._TIMES) <= ids._KEPT


WRITTEN: list[Any] = [
    {"a": {}, "b": [], "c": [{}], "d": "", "e": [[]], "f": {"g": {"h": [None, True, False]}}},
    [1, -0.0, 2.5, 0.1, 1e15, 123456789.125, 10**40, -(10**40)],
    'caf\u00e9 \u2028 \U0001f600 \x7f \x00 \n \t " \\ /',
    {"key, with: separators": "value, with: separators", "1e5": "0.00001"},
    [],
    {},
]


@pytest.mark.parametrize("value", WRITTEN)
def test_the_fast_writer_gives_what_json_dumps_gives(value: Any) -> None:
    assert dumps_fast(value) == json.dumps(value, ensure_ascii=False)


def test_the_fast_writer_refuses_what_it_cannot_write_as_json_dumps_would() -> None:
    for value in ("\ud800", {"\udc00": 1}, [object()]):
        with pytest.raises(ValueError):
            dumps_fast(value)


def test_floats_the_fast_writer_spells_otherwise_are_found_as_they_are_read() -> None:
    rng = random.Random(14)
    for _ in range(3000):
        number = rng.random() * 10 ** rng.randint(-30, 30) * rng.choice([1, -1])
        text = json.dumps({"x": [number, "1e5"]}).encode()
        value, writable = loads_fast_writable(text)
        assert value == json.loads(text)
        if writable:
            assert dumps_fast(value) == json.dumps(value, ensure_ascii=False)
        else:
            assert "e" in repr(number)  # 1e-05, 1e+16: exponent form, which msgspec spells otherwise
    assert loads_fast_writable(b'{"a": 1.5, "b": "1e16", "c": 10000000000000000}') == (
        {"a": 1.5, "b": "1e16", "c": 10**16},
        True,
    )
    assert loads_fast_writable(b"[1e16]")[1] is False
    with pytest.raises(ValueError):
        loads_fast_writable(b"[1e400]")  # beyond the float range: json.loads decides


def test_the_fast_writer_gives_up_on_deep_nesting_before_json_dumps_would() -> None:
    written = 0
    for depth in range(900, 1100):
        value: Any = "x"
        for _ in range(depth):
            value = [value]
        try:
            text = dumps_fast(value)
        except ValueError:
            continue
        written += 1
        assert text == json.dumps(value, ensure_ascii=False)
    assert written  # the band is crossed


def test_otlp_ids_read_from_the_cache_are_the_ones_read_afresh() -> None:
    samples = ["A" * 32, "0" * 32, "ab" * 16, " " + "cd" * 16, "ef" * 8, "0" * 16, "zz" * 8, "q83vEjRWeJA="]
    for _ in range(2):  # the second time from the cache
        for value in samples:
            for size in (8, 16):
                assert otel_ids.from_text(value, size) == _fresh_otel_id(value, size), (value, size)


def _fresh_otel_id(value: str, size: int) -> tuple[str | None, bool]:
    otel_ids._KNOWN.clear()
    return otel_ids.from_text(value, size)


def test_a_run_read_fast_is_rendered_as_a_run_read_by_json_loads(tmp_path: Path) -> None:
    # The same runs read by the fast reader (written by the fast writer, or by json.dumps when a
    # float is spelled otherwise) and by json.loads (a NaN on the line sends it there): every
    # span's text is json.dumps's.
    def run(n: int, numbers: list[Any]) -> dict[str, Any]:
        return {
            "id": f"{n:08d}-2222-3333-4444-555555555555",
            "name": "chain",
            "run_type": "chain",
            "start_time": "2026-11-29T13:44:35.961528+00:00",
            "end_time": "2026-11-29T13:44:36.961528+00:00",
            "inputs": {"question": "caf\u00e9?", "numbers": numbers, "nested": {"a": [{}]}},
            "outputs": {"answer": "ok", "scores": [0.25]},
        }

    runs = [run(1, [2.5, 10**30, -0.0]), run(2, [1e-05, 1e16])]
    lines = [json.dumps(r) for r in runs]
    assert [loads_fast_writable(line.encode())[1] for line in lines] == [True, False]
    path = tmp_path / "runs.jsonl"
    slow = [
        json.dumps({**r, "id": f"{n + 3:08d}{r['id'][8:]}", "extra": {"t": float("nan")}})
        for n, r in enumerate(runs)
    ]
    path.write_text("\n".join([*lines, *slow]) + "\n")
    texts = [
        (s.input_text, s.output_text)
        for t in iter_file(path, "langchain")
        if isinstance(t, Trace)
        for s in t.spans
    ]
    expected = [
        (json.dumps(r["inputs"], ensure_ascii=False), json.dumps(r["outputs"], ensure_ascii=False))
        for r in runs
    ]
    assert sorted(texts) == sorted(expected * 2)


def test_an_assembled_trace_is_the_trace_validation_builds() -> None:
    spans = _spans()
    for fields in ({}, {"source_format": "otlp-json", "convention": "mixed"}, {"conversation_id": "c-1"}):
        trace, _ = assemble_trace(spans[0].trace_id, spans, "f.jsonl", **fields)
        validated = Trace(**{name: getattr(trace, name) for name in trace.model_fields_set})
        assert trace == validated
        assert trace.model_fields_set == validated.model_fields_set
        assert list(trace.__dict__) == list(validated.__dict__)
        assert trace.model_dump_json() == validated.model_dump_json()
    with pytest.raises(ValueError):  # a value of the wrong type is still validated, and refused
        assemble_trace(spans[0].trace_id, spans, "f.jsonl", source_format=None)


def test_a_time_in_nanoseconds_reads_as_before() -> None:
    from datetime import timedelta

    from auditor_otel.spans import to_datetime

    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for ns in (1, 999, 1_772_000_000_123_456_789, -5_000, 253_402_300_799_999_999_000):
        assert to_datetime(ns) == epoch + timedelta(microseconds=ns // 1000)
    for ns in (10**22, 10**30):  # beyond datetime's range: the same error as before
        with pytest.raises(OverflowError) as new:
            to_datetime(ns)
        with pytest.raises(OverflowError) as old:
            _ = epoch + timedelta(microseconds=ns // 1000)
        assert str(new.value) == str(old.value)


def test_indexed_keys_follow_the_pattern_rule_for_any_key() -> None:
    import re

    rule = re.compile(r"^(\d+)\.(.+)$")

    def by_rule(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
        groups: dict[int, dict[str, Any]] = {}
        for key, value in attrs.items():
            match = rule.match(key[len(prefix) + 1 :]) if key.startswith(prefix + ".") else None
            if match:
                groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
        return [groups[i] for i in sorted(groups)]

    rng = random.Random(7)
    alphabet = ["0", "1", "9", ".", "a", "\n", "\u0663", "\u00b2", " ", "-", "_"]
    for _ in range(5000):
        keys = ["p." + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(4)]
        attrs = {key: n for n, key in enumerate(keys)}
        assert indexed(attrs, "p") == by_rule(attrs, "p"), attrs


def test_a_run_is_told_from_other_objects_as_by_the_field_rule() -> None:
    # _expand looks for ``run_type`` first: the same objects are runs as by any of _RUN_FIELDS.
    from auditor_langchain.layouts import _RUN_FIELDS, _expand

    rng = random.Random(14)
    names = [*_RUN_FIELDS, "runs", "name", "inputs", "x"]
    for _ in range(2000):
        value = {name: rng.choice([None, 1, [], "r"]) for name in rng.sample(names, rng.randint(0, 5))}
        problems: list[Any] = []
        found = _expand(value, 1, "f.jsonl", problems)
        if isinstance(value.get("runs"), list) and "run_type" not in value:
            assert found == [(item, 1) for item in value["runs"]]
        else:
            assert (found == [(value, 1)]) is any(key in value for key in _RUN_FIELDS), value
            assert bool(problems) is not any(key in value for key in _RUN_FIELDS)
