"""The ingest worker's two halves: reading claimed bodies in the process while a thread stores the
batch before (``auditor.serve._ingest``), on a real store and the real OTLP reader."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from auditor.serve import _ingest
from auditor.store import BodyQueue, Store, new_owner, received_traces
from tests.conftest import FIXTURES

BODY = (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()


def _copy(trace: int) -> bytes:
    """The fixture's request under a trace id of its own."""
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(BODY)
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                span.trace_id = trace.to_bytes(16, "big")
    return request.SerializeToString()


def test_batches_read_ahead_are_stored_in_order_and_their_bodies_deleted(tmp_path: Path) -> None:
    readers = _ingest.span_readers()
    owner = new_owner()
    with Store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        bodies = BodyQueue(store)
        for trace in range(1, 7):
            bodies.put("otlp-proto", _copy(trace), 17)
        ready: queue.Queue[list[_ingest.Read] | None] = queue.Queue(maxsize=1)
        storer = threading.Thread(target=_ingest._store_batches, args=(bodies, ready, owner))
        storer.start()
        for _ in range(3):  # a batch is claimed and read while the one before may still be stored
            held = bodies.claim_many(owner, 30.0, 2)
            _ingest._hand_over(ready, _ingest._read(readers, held), storer)
        ready.put(None)
        storer.join(timeout=30)
        assert not storer.is_alive()
        assert bodies.backlog() == (0, 0)
        traces = received_traces(store)
    assert sorted(t.trace_id for t in traces) == [f"{n:032x}" for n in range(1, 7)]
    assert all(t.spans == 17 for t in traces)


def test_a_batch_is_not_handed_to_a_storer_that_has_died() -> None:
    ready: queue.Queue[list[_ingest.Read] | None] = queue.Queue(maxsize=1)
    ready.put([])  # the storer took nothing more before it died
    dead = threading.Thread(target=lambda: None)
    dead.start()
    dead.join()
    with pytest.raises(RuntimeError, match="storing received spans has stopped"):
        _ingest._hand_over(ready, [], dead)
