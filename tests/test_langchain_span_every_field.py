"""``run_to_span`` gives ``Span.trusted`` every field in model order (the call's dict is kept as the
span's): each span read is the span validation builds from the same values, on the repository's
run trees and on the fault corpus's run-tree files (bad inputs of every kind)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from auditor_langchain.runtree import RunTreeAdapter
from test_langchain_runtree import parse, sample_runs

from auditor.trace import Span, Trace
from tests.conftest import ROOT as REPO
from tests.support.faults import run_tree_files

RUNTREES = sorted((REPO / "tests" / "fixtures").glob("*/runtree.json"))


def _spans(data: bytes) -> list[Span]:
    items = RunTreeAdapter().parse(io.BytesIO(data), "runs.json")
    return [span for item in items if isinstance(item, Trace) for span in item.spans]


def _same_as_validated(span: Span) -> None:
    validated = Span(**{name: getattr(span, name) for name in Span.model_fields})
    assert span == validated
    assert list(span.__dict__.items()) == list(validated.__dict__.items())
    assert span.model_fields_set == validated.model_fields_set
    assert span.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize("path", RUNTREES, ids=lambda p: p.parent.name)
def test_fixture_run_tree_spans_are_what_validation_builds(path: Path) -> None:
    lines = b"".join(json.dumps(run).encode() + b"\n" for run in json.loads(path.read_bytes()))
    for data in (path.read_bytes(), lines):
        spans = _spans(data)
        assert spans
        for span in spans:
            _same_as_validated(span)


@pytest.mark.slow
def test_every_run_kind_and_fault_corpus_spans_are_what_validation_builds() -> None:
    traces, _ = parse(json.dumps(sample_runs()))
    assert {span.kind for span in traces[0].spans} >= {"chain", "llm", "tool", "retriever"}
    for span in traces[0].spans:
        _same_as_validated(span)
    files = run_tree_files()
    assert len(files) > 20
    for data in files:
        for span in _spans(data):
            _same_as_validated(span)
