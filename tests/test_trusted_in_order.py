"""``trusted`` given every field in the model's order takes the call's own dict as it is: the model
is the one built from the same fields in any other order, or by validation."""

from __future__ import annotations

import pickle
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from auditor.trace import (
    Document,
    Message,
    SourceRef,
    Span,
    SpanEvent,
    SpanKind,
    ToolCall,
    ToolInvocation,
    Trace,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
CALL = ToolCall(id="c", name="f", arguments={"a": 1})
SPAN = Span(trace_id="t", span_id="s", name="x", start=NOW, end=NOW)
SAMPLES: list[tuple[type[Any], dict[str, Any]]] = [
    (SpanEvent, {"name": "start", "time": NOW, "attributes": {"k": [1, {"v": None}]}}),
    (SourceRef, {"file": "f.jsonl", "line": 3}),
    (ToolCall, {"id": None, "name": "f", "arguments": "raw"}),
    (
        Message,
        {"role": "assistant", "content": "hi", "name": None, "tool_calls": (CALL,), "tool_call_id": None},
    ),
    (Document, {"id": "d", "text": "t", "metadata": {"m": 1}, "score": 0.5}),
    (ToolInvocation, {"name": "f", "call_id": "c", "arguments": {"a": 1}, "result": "r"}),
    (
        Span,
        {
            "trace_id": "t",
            "span_id": "s",
            "parent_id": None,
            "name": "x",
            "kind": SpanKind.LLM,
            "start": NOW,
            "end": NOW,
            "status": Span.model_fields["status"].default,
            "status_message": None,
            "input_messages": (Message(role="user", content="q"),),
            "output_messages": (),
            "tool": None,
            "query": None,
            "documents": (),
            "input_text": "in",
            "output_text": None,
            "conversation_id": "c",
            "model": "m",
            "entity_name": None,
            "attributes": {"a": 1},
            "events": (SpanEvent(name="e", time=NOW),),
            "source": SourceRef(file="f", line=1),
        },
    ),
    (
        Trace,
        {
            "trace_id": "t",
            "spans": (SPAN,),
            "conversation_id": None,
            "source_format": "otlp-json",
            "convention": "",
            "detached_parents": {"s": "p"},
        },
    ),
]


def _same(a: Any, b: Any) -> None:
    assert a == b
    assert repr(a) == repr(b)
    assert list(a.__dict__.items()) == list(b.__dict__.items())
    assert a.model_fields_set == b.model_fields_set
    assert a.model_dump_json() == b.model_dump_json()
    assert (a.__pydantic_extra__, a.__pydantic_private__) == (None, None)
    assert pickle.loads(pickle.dumps(a)) == b
    assert a.model_copy(update={}) == b


@pytest.mark.parametrize(("model", "fields"), SAMPLES, ids=[m.__name__ for m, _ in SAMPLES])
def test_every_field_in_order_builds_what_any_order_and_validation_build(
    model: type[Any], fields: dict[str, Any]
) -> None:
    assert list(fields) == list(model.model_fields)  # the sample gives every field, in order
    in_order = model.trusted(**fields)
    rng = random.Random(14)
    for _ in range(5):
        names = list(fields)
        rng.shuffle(names)
        _same(in_order, model.trusted(**{name: fields[name] for name in names}))
    _same(in_order, model(**fields))
    some = {name: value for name, value in fields.items() if model.model_fields[name].is_required()}
    _same(model.trusted(**some), model(**some))


def test_the_callers_mapping_is_not_kept() -> None:
    fields = {"name": "start", "time": NOW, "attributes": {}}
    event = SpanEvent.trusted(**fields)
    fields["name"] = "changed"
    assert event.name == "start"
    assert event.__dict__ is not fields


def test_every_field_but_in_another_order_still_refuses_unknown_ones() -> None:
    with pytest.raises(TypeError, match="unknown fields \\['nmae'\\]"):
        SpanEvent.trusted(nmae="x", time=None, attributes={})
    with pytest.raises(TypeError, match="missing fields \\['name'\\]"):
        SpanEvent.trusted(time=None, attributes={})


def test_models_given_every_field_share_one_fields_set_that_nothing_changes() -> None:
    # ``trusted`` given every field in order shares one fields set per class (built once); pydantic
    # changes a fields set only on assignment (refused: frozen) or in a copy (a set of its own).
    first = SpanEvent.trusted(name="a", time=NOW, attributes={})
    second = SpanEvent.trusted(name="b", time=NOW, attributes={})
    assert first.model_fields_set == second.model_fields_set == set(SpanEvent.model_fields)
    copied = first.model_copy(update={"name": "c"})
    copied.model_fields_set.add("extra")  # the copy's own set
    with pytest.raises(ValidationError):
        second.name = "d"  # type: ignore[misc]
    assert first.model_fields_set == second.model_fields_set == set(SpanEvent.model_fields)
    assert SpanEvent(name="a", time=NOW, attributes={}).model_fields_set == first.model_fields_set


@pytest.mark.parametrize(("model", "fields"), SAMPLES, ids=[m.__name__ for m, _ in SAMPLES])
def test_a_handed_over_dict_builds_what_keywords_build(model: type[Any], fields: dict[str, Any]) -> None:
    given = dict(fields)
    built = model.trusted(given)
    _same(built, model.trusted(**fields))
    assert built.__dict__ is given  # every field in order: the handed-over dict is the model's own
    rng = random.Random(15)
    names = list(fields)
    rng.shuffle(names)
    shuffled = {name: fields[name] for name in names}
    _same(model.trusted(dict(shuffled)), model.trusted(**fields))
    some = {name: value for name, value in fields.items() if model.model_fields[name].is_required()}
    handed = dict(some)
    _same(model.trusted(handed), model(**some))
    assert handed == some  # filled in a dict of its own, the handed one left as it was


def test_a_handed_over_dict_still_refuses_unknown_and_missing_fields() -> None:
    with pytest.raises(TypeError, match="unknown fields \\['nmae'\\]"):
        SpanEvent.trusted({"nmae": "x", "time": None, "attributes": {}})
    with pytest.raises(TypeError, match="missing fields \\['name'\\]"):
        SpanEvent.trusted({"time": None, "attributes": {}})
