"""``auditor serve`` sends its verdicts back into the telemetry stream: ``gen_ai.evaluation.result``
events over OTLP/HTTP, by the OpenTelemetry SDK's own exporter, to a configured endpoint.

The endpoint is a real OTLP/HTTP logs receiver started by the test: an HTTP server that takes
``POST /v1/logs``, decodes each body as an ``ExportLogsServiceRequest`` (``opentelemetry-proto``)
and answers as a Collector does. The events must name the answer's trace and span, and say what
the fixture's expectations say of the answer (grounded in KB-1).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from auditor.policy import load_policy
from auditor.serve import serve_config
from auditor.serve._events import event_sender
from auditor.serve._workers import AuditWorkers
from auditor.store import Intake, Store
from tests.conftest import FIXTURES
from tests.test_serve_sampling import copy_trace, fixture_spans, trace_ids

EXPECTED = json.loads((FIXTURES / "single_retrieval" / "expected.json").read_text(encoding="utf-8"))


class LogsReceiver:
    """An OTLP/HTTP logs endpoint that keeps every request it accepted, decoded."""

    def __init__(self) -> None:
        self.requests: list[logs_service_pb2.ExportLogsServiceRequest] = []
        self.paths: list[str] = []
        self.content_types: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = logs_service_pb2.ExportLogsServiceRequest()
                request.ParseFromString(body)
                owner.paths.append(self.path)
                owner.content_types.append(self.headers.get("Content-Type", ""))
                owner.requests.append(request)
                reply = logs_service_pb2.ExportLogsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1/logs"

    def records(self) -> list[tuple[str, Any]]:
        """Every log record received, with its resource's ``service.name``."""
        out = []
        for request in self.requests:
            for resource_logs in request.resource_logs:
                service = {a.key: a.value.string_value for a in resource_logs.resource.attributes}.get(
                    "service.name", ""
                )
                for scope_logs in resource_logs.scope_logs:
                    out.extend((service, record) for record in scope_logs.log_records)
        return out


@pytest.fixture
def receiver() -> Iterator[LogsReceiver]:
    server = LogsReceiver()
    server._thread.start()
    try:
        yield server
    finally:
        server._httpd.shutdown()
        server._httpd.server_close()


def attributes(record: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in record.attributes:
        kind = item.value.WhichOneof("value")
        out[item.key] = getattr(item.value, kind) if kind else None
    return out


def test_serve_sends_each_verdict_to_the_otlp_endpoint_as_an_evaluation_event(
    tmp_path: Path, receiver: LogsReceiver
) -> None:
    spans = fixture_spans()
    ids = trace_ids(3, seed=5)
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    config = serve_config(db_url=db, quiet=0.01, events_endpoint=receiver.url)
    sender = event_sender(config.events_endpoint)
    assert sender is not None
    with Store(db) as store:
        intake = Intake(store)
        intake.receive([s for t in ids for s in copy_trace(spans, t)])
        workers = AuditWorkers(config, intake, load_policy(), sender).start()
        try:
            deadline = time.monotonic() + 60
            while intake.pending():
                assert time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            workers.stop()
            sender.close()  # the SDK's batch is sent on shutdown
        answers = {a.answer_id: a for r in store.list_runs(10) for a in store.load_run(r.id).answers}

    assert set(receiver.paths) == {"/v1/logs"}
    assert set(receiver.content_types) == {"application/x-protobuf"}
    received = receiver.records()
    assert {service for service, _ in received} == {"trace-auditor"}
    verdicts = [(record, attributes(record)) for _, record in received]
    answer_events = [(r, a) for r, a in verdicts if a["gen_ai.evaluation.name"] == "groundedness"]
    claim_events = [(r, a) for r, a in verdicts if a["gen_ai.evaluation.name"] == "groundedness.claim"]
    assert all(r.event_name == "gen_ai.evaluation.result" for r, _ in verdicts)
    # One answer per trace (the fixture's one question), grounded in KB-1 as its expectations say.
    assert len(EXPECTED["answers"]) == 1 and len(answer_events) == len(ids) == len(answers)
    assert {r.trace_id.hex() for r, _ in answer_events} == set(ids)
    span_ids = {(s.trace_id, s.span_id) for t in ids for s in copy_trace(spans, t)}
    for record, attrs in answer_events:
        assert (record.trace_id.hex(), record.span_id.hex()) in span_ids  # parented to a span of the trace
        assert attrs["gen_ai.evaluation.score.label"] == "grounded"
        assert attrs["gen_ai.evaluation.score.value"] == 1.0
    stored = {(a.trace_id, a.span_id) for a in answers.values()}
    assert {(r.trace_id.hex(), r.span_id.hex()) for r, _ in answer_events} == stored
    # Each claim's verdict is sent too: "30 days" and "full refund" are both in KB-1.
    assert claim_events and {a["gen_ai.evaluation.score.label"] for _, a in claim_events} == {"supported"}
    assert len(claim_events) == sum(
        1 for a in answers.values() for c in a.claims or [] if not c.screened and c.verdict is not None
    )
