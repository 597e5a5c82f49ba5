"""The peers harness's server (benchmarks/peers/server.py) answers any structured-output request.

The harness itself needs RAGAS and DeepEval in a venv of their own and is not run here; what it
relies on is: the schema is found where each peer puts it, and the answer follows it.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from benchmarks.peers.server import instance, schema_of


class Verdict(BaseModel):
    statement: str
    verdict: int
    label: str | None = None


class Verdicts(BaseModel):
    statements: list[Verdict]


SENTENCES = ["Store 1 accepts returns within 10 days.", "Refunds go to the original card."]


def test_an_instance_follows_a_pydantic_schema_with_refs() -> None:
    schema = Verdicts.model_json_schema()
    value = instance(schema, schema["$defs"], list(SENTENCES))
    parsed = Verdicts.model_validate(value)
    assert len(parsed.statements) == 2
    assert {s.statement for s in parsed.statements} <= set(SENTENCES)
    assert all(s.verdict == 1 for s in parsed.statements)


def test_enums_take_their_first_value() -> None:
    schema = {"type": "object", "properties": {"verdict": {"enum": ["yes", "no", "idk"]}}}
    assert instance(schema, {}, list(SENTENCES)) == {"verdict": "yes"}


def test_the_schema_is_read_from_response_format_or_from_instructors_json_mode_message() -> None:
    schema = Verdicts.model_json_schema()
    as_format = {"response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": schema}}}
    assert schema_of(as_format) == schema
    message = (
        "As a genius expert, ... match the following json_schema:\n\n" + json.dumps(schema) + "\n\nMake sure"
    )
    in_messages = {
        "response_format": {"type": "json_object"},
        "messages": [{"role": "system", "content": message}],
    }
    assert schema_of(in_messages) == schema
    assert schema_of({"messages": [{"role": "user", "content": "no schema here"}]}) is None
