"""The OTel readers build spans (and the OpenInference reader its messages and tool calls) with
``trusted``, without validation: they must be the very models validation builds. Every OTLP fixture,
and spans written to exercise each GenAI, OpenInference and OpenLLMetry reader, is read twice, once
with ``trusted`` validating, and the traces and problems compared (``repr`` tells a tuple from a
list)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auditor.trace import Trace
from auditor.trace._ingest import iter_file
from auditor.trace._model import _Frozen
from tests.conftest import ROOT
from tests.otel_samples.otlp import line, span

FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("*/*.otlp.*"))
MESSAGES = [
    {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
    {"role": "user", "parts": [{"type": "text", "content": "caf\u00e9 \\ud800?"}, {"type": "reasoning"}]},
    {
        "role": "assistant",
        "name": "agent",
        "parts": [
            {"type": "tool_call", "id": " c1 ", "name": "lookup", "arguments": {"q": [1, 2.5, None]}},
            {"type": "tool_call", "id": 7, "name": 3, "arguments": '{"x": "y"}'},
            {"type": "tool_call", "name": "raw", "arguments": "not json"},
        ],
    },
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": {"ok": True}}]},
    {"role": "user", "parts": "not a list"},
    {"role": "assistant", "content": "openai style", "tool_calls": [{"id": "c2", "function": {"name": "f"}}]},
    {"message": {"content": [{"type": "text", "text": "a choice"}, "plain"]}},
    "not a message",
]


def _genai_spans() -> list[dict[str, Any]]:
    def one(n: int, name: str, attrs: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return span(n, name, None if n == 1 else 1, start=n, end=n + 1, attrs=attrs, **extra)

    return [
        one(1, "invoke_agent support", {"gen_ai.operation.name": "invoke_agent", "session.id": "s1"}),
        one(
            2,
            "chat model",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "sys"}]),
                "gen_ai.input.messages": json.dumps(MESSAGES),
                "gen_ai.output.messages": json.dumps(MESSAGES[2:4]),
                "gen_ai.response.model": "m",
            },
        ),
        one(3, "chat other", {"gen_ai.operation.name": "chat", "gen_ai.system_instructions": "plain text"}),
        one(
            4,
            "execute_tool lookup",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.call.id": " c1",
                "gen_ai.tool.call.arguments": '{"q": "x"}',
                "gen_ai.tool.call.result": {"rows": [1, 2]},
            },
        ),
        one(
            5,
            "retrieval kb",
            {
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.query.text": "q",
                "gen_ai.retrieval.documents": json.dumps(
                    [
                        {"id": "d1", "content": "text", "score": 1, "metadata": {"src": "a"}, "extra": 2},
                        {"id": "d2", "text": "t2", "score": True},
                        {"id": "d3"},
                        "not a document",
                    ]
                ),
            },
        ),
        one(
            6,
            "tool",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup",
                "input.value": "42",
                "tool.parameters": json.dumps({"properties": {"order_id": {}}}),
                "output.value": json.dumps(
                    {"type": "tool", "data": {"content": "done", "tool_call_id": "c9"}}
                ),
            },
        ),
        one(
            7,
            "retriever",
            {
                "openinference.span.kind": "RETRIEVER",
                "input.value": json.dumps({"query": "q"}),
                "retrieval.documents.0.document.content": "doc",
                "retrieval.documents.0.document.metadata": json.dumps({"id": "m1"}),
                "retrieval.documents.1.document.score": 0.5,
            },
        ),
        one(
            8,
            "vector_db_retrieve kb",
            {
                "traceloop.span.kind": "task",
                "gen_ai.operation.name": "vector_db_retrieve",
                "traceloop.entity.input": json.dumps({"inputs": {"query": "q"}}),
                "traceloop.entity.output": json.dumps(
                    {"documents": [{"page_content": "p", "metadata": {"doc_id": "x"}}, {"metadata": {}}]}
                ),
            },
        ),
    ]


def _read(path: Path) -> list[str]:
    return [
        repr(item) + repr(item.detached_parents if isinstance(item, Trace) else None)
        for item in iter_file(path)
    ]


def _validating(cls: type[_Frozen], **fields: Any) -> _Frozen:
    return cls(**fields)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "genai.otlp.jsonl"
    lines = [line([s]) for s in _genai_spans()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_otel_readers_build_what_validation_builds(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [sample, *FIXTURES]
    trusted = [_read(path) for path in paths]
    monkeypatch.setattr(_Frozen, "trusted", classmethod(_validating))
    validated = [_read(path) for path in paths]
    assert trusted == validated
    assert any("Message(" in item for item in trusted[0])
    assert any("Document(" in item for item in trusted[0])
