"""Reading a file raises the young and oldest generations' GC thresholds while it reads, then restores them."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from auditor.trace import GC_THRESHOLD, OLD_THRESHOLD, fewer_collections, read_traces
from auditor.trace._ingest import iter_file
from tests.conftest import ROOT

FILE = ROOT / "tests" / "fixtures" / "multi_hop" / "openinference.otlp.jsonl"


@pytest.fixture
def low_threshold() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def test_iter_file_reads_with_fewer_collections_and_restores(low_threshold: None) -> None:
    items = iter_file(FILE)
    seen = [(item, gc.get_threshold()) for item in items]
    assert seen and all(threshold == (GC_THRESHOLD, 10, OLD_THRESHOLD) for _, threshold in seen)
    assert gc.get_threshold() == (700, 10, 10)
    first = iter_file(FILE)
    next(first)
    assert gc.get_threshold()[0] == GC_THRESHOLD
    first.close()  # a reader left early restores too
    assert gc.get_threshold() == (700, 10, 10)


def test_read_traces_restores_and_leaves_an_outer_user_alone(low_threshold: None) -> None:
    assert read_traces([FILE]).traces
    assert gc.get_threshold() == (700, 10, 10)
    with fewer_collections():  # a run on, reading its traces: the run's threshold stays
        assert read_traces([FILE]).traces
        assert gc.get_threshold() == (GC_THRESHOLD, 10, OLD_THRESHOLD)
    assert gc.get_threshold() == (700, 10, 10)
