"""A trace whose text the OTLP JSON typed reader vouches for is repaired exactly as before.

The typed reader (``auditor_otel.otlp_typed``) decodes strictly: msgspec refuses invalid UTF-8
(CESU-8 included) and escaped lone surrogates, so its strings are valid text, and the attribute
values it builds nest no deeper than the AnyValue decoder's own bound. A convention reader that
parses a string again (JSON, a Python literal) counts the texts whose escapes could spell a
surrogate (``conventions.common.escaped_parses``). When nothing was counted for any span of a
trace, ``repair_trace(valid_text=True)`` checks only the free-form values the readers parse (tool
and tool-call arguments, document metadata) for depth. These tests read the same bytes with the
check in full (the vouching ignored) and compare everything, and pin what the shortcut relies on.
"""

from __future__ import annotations

import json
import threading
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auditor_otel.conventions import common
from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_typed import typed_spans
from otel_samples.otlp import anyvalue, request, span
from pydantic import BaseModel

from auditor.trace import MAX_DEPTH
from auditor.trace._repair import _MODELS
from tests.conftest import ROOT
from tests.support.faults import corpus
from tests.support.repair import read, same_both_ways

FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("*/*.otlp.jsonl"))


def _read(data: bytes, vouched: bool) -> list[str]:
    return read(OtlpJsonAdapter(), data, "t.jsonl", vouched=vouched)


def _same_both_ways(data: bytes) -> list[str]:
    return same_both_ways(OtlpJsonAdapter(), data, "t.jsonl")


def _typed_line(obj: Any) -> bytes:
    data = json.dumps(obj).encode()
    assert typed_spans(data, 1)  # read by the typed reader, which vouches: the path under test
    return data + b"\n"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _one_span(attrs: dict[str, Any], events: list[dict[str, Any]] | None = None) -> bytes:
    root = span(1, "root", start=0, end=1, attrs=attrs)
    if events is not None:
        root["events"] = events
    return _typed_line(request([root]))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixtures_read_the_same_vouched_or_checked_in_full(path: Path) -> None:
    assert any(item.startswith("{") for item in _same_both_ways(path.read_bytes()))


@pytest.mark.slow
def test_fault_corpus_otlp_files_read_the_same_vouched_or_checked_in_full() -> None:
    adapter = OtlpJsonAdapter()
    read = 0
    for case in corpus().values():
        for name, data in case.files.items():
            if name.endswith((".jsonl", ".json")) and adapter.sniff(data[:4096]):
                _same_both_ways(data)
                read += 1
    assert read >= 20


@pytest.mark.parametrize(
    "attrs",
    [
        {  # lands in the tool's arguments (a free-form value, checked anyway)
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup",
            "input.value": json.dumps({"q": "a\ud800b"}),
            "output.value": "done",
        },
        {  # lands in the tool's result, plain text the shortcut alone would not look at
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup",
            "input.value": "{}",
            "output.value": json.dumps({"type": "tool", "content": "a\ud800b", "tool_call_id": "c1"}),
        },
    ],
    ids=["in-arguments", "in-result"],
)
def test_a_surrogate_spelled_in_parsed_json_is_still_repaired(attrs: dict[str, Any]) -> None:
    # The JSON text holds an escaped lone surrogate: the line itself is valid for msgspec (the
    # escape's backslash is escaped), the convention reader's parse spells the surrogate.
    items = _same_both_ways(_one_span(attrs))
    assert any("lone UTF-16 surrogates" in item for item in items)


@pytest.mark.parametrize(
    "attrs",
    [
        {  # tool-call arguments, four levels below the span
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "f",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
                '{"a": ' + _nested(MAX_DEPTH) + "}"
            ),
        },
        {  # a tool's arguments, one level below the span
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup",
            "input.value": '{"a": ' + _nested(MAX_DEPTH) + "}",
            "output.value": "done",
        },
        {  # document metadata, two levels below the span
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": "text",
            "retrieval.documents.0.document.metadata": '{"a": ' + _nested(MAX_DEPTH) + "}",
        },
    ],
    ids=["tool-call-arguments", "tool-arguments", "document-metadata"],
)
def test_free_form_values_nested_too_deep_are_still_cut(attrs: dict[str, Any]) -> None:
    items = _same_both_ways(_one_span(attrs))
    assert any(f"nested more than {MAX_DEPTH} levels" in item for item in items)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 12, MAX_DEPTH - 6])
def test_free_form_values_just_within_the_bound_are_kept(depth: int) -> None:
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "f",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
            '{"a": ' + _nested(depth) + "}"
        ),
    }
    items = _same_both_ways(_one_span(attrs))
    assert not any("nested more than" in item for item in items)
    assert any(_nested(depth).replace("]", "") in item.replace(" ", "") for item in items)


def _deep_anyvalue(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = anyvalue("leaf")
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


def test_attribute_values_nested_deep_read_the_same_vouched() -> None:
    # The AnyValue decoder's bound (MAX_DEPTH - 8 levels) is what lets the check skip attributes
    # and events: a value nested beyond it, on a span and on an event, reads the same either way.
    deep = {"key": "deep", "value": _deep_anyvalue(MAX_DEPTH + 8)}
    root = span(1, "root", start=0, end=1, attrs={"gen_ai.system": "openai"})
    root["attributes"].append(deep)
    root["events"] = [{"name": "e", "timeUnixNano": root["startTimeUnixNano"], "attributes": [deep]}]
    items = _same_both_ways(_typed_line(request([root])))
    assert any("nested more than" in item for item in items)  # the decoder's own note
    assert not any(f"nested more than {MAX_DEPTH} levels" in item for item in items)  # not the repair's


def test_parses_that_may_spell_surrogates_are_counted() -> None:
    before = common.escaped_parses()
    assert common.loads('{"a": ["b", 1]}') == {"a": ["b", 1]}
    assert common.literal("{'a': 'b\\n'}") == {"a": "b\n"}
    assert common.escaped_parses() == before
    common.loads('{"a": "\\ud800"}')
    assert common.escaped_parses() == before + 1
    common.loads('{"a": "\\u0041"}')  # spells "A", which is harmless, but counted: conservative
    for text in ("'\\ud800'", "'\\U0000d800'", "'\\x41'", "'\\101'", "'\\N{BULLET}'"):
        common.literal(text)
    assert common.escaped_parses() == before + 7


def test_each_thread_counts_its_own_parses_from_zero() -> None:
    common.loads('{"a": "\\u0041"}')  # this thread has counted something
    seen: list[int] = []

    def other() -> None:
        seen.append(common.escaped_parses())  # nothing parsed in this thread yet: 0
        common.loads('{"a": "\\u0041"}')
        seen.append(common.escaped_parses())

    main = common.escaped_parses()
    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert seen == [0, 1]
    assert common.escaped_parses() == main


def _annotation_types(annotation: Any) -> Iterator[Any]:
    yield annotation
    for argument in typing.get_args(annotation):
        yield from _annotation_types(argument)


def test_the_free_form_fields_the_shortcut_checks_are_the_models_only_ones() -> None:
    # repair_trace(valid_text=True) checks tool arguments, tool-call arguments and document
    # metadata, and trusts the caller for attributes and events: a new field able to hold a
    # free-form (dict or Any) value must be added to _bounded_free_form, and here.
    free_form = set()
    for model in _MODELS:
        assert issubclass(model, BaseModel)
        for name, info in model.model_fields.items():
            if any(t is Any or t is dict for t in _annotation_types(info.annotation)) or any(
                typing.get_origin(t) is dict for t in _annotation_types(info.annotation)
            ):
                free_form.add(f"{model.__name__}.{name}")
    assert free_form == {
        "ToolCall.arguments",
        "ToolInvocation.arguments",
        "Document.metadata",
        "SpanEvent.attributes",
        "Span.attributes",
        "Trace.detached_parents",
    }
