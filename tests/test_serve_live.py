"""A real agent exporting to ``auditor serve``: a LangGraph ReAct loop instrumented with
OpenInference, its spans sent by the OTel SDK's ``BatchSpanProcessor`` through the real OTLP
exporters, over HTTP (protobuf, gzip) for one run and over gRPC for another, to one server
(``--grpc``). The same spans, kept by an in-memory exporter beside it, are written to a file; the
server's audit of each trace must equal ``auditor audit`` of that file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]
import pytest
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from auditor.run import audit
from tests.support import gen_traces, live_agent
from tests.support.serve import Server, running_server
from tests.test_serve import answers_of

pytestmark = pytest.mark.serve_live


def run_agent(name: str, exporter: SpanExporter, path: Path) -> str:
    """Run scenario ``name`` instrumented, exporting through ``exporter``; its spans also to ``path``.

    Returns the run's trace id.
    """
    kept = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=100))
    instrumentor = LangChainInstrumentor()
    # Separate from the runtime context: an instrumentation another test left behind (OpenLLMetry
    # does not fully unwrap) would otherwise parent this run's root to a span never sent here.
    instrumentor.instrument(tracer_provider=provider, separate_trace_from_runtime_context=True)
    try:
        agent, sc = live_agent.scenario_agent(name)
        out = agent.invoke(live_agent.question(sc), live_agent.config(sc))
        assert out["messages"][-1].content == sc.turns[0].answer
        assert provider.force_flush(10_000)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = kept.get_finished_spans()
    path.write_text("\n".join(gen_traces.spans_to_otlp_lines(spans)) + "\n", encoding="utf-8")
    trace_ids = {format(s.context.trace_id, "032x") for s in spans if s.context is not None}
    assert len(trace_ids) == 1
    return trace_ids.pop()


def served(server: Server, trace_id: str) -> list[dict[str, Any]]:
    # A generous wait: on a loaded machine an audit's first judge use (loading its model) takes a while.
    audits = server.wait_for("/api/audits", lambda d: len(d["audits"]) == 1, timeout=120, trace_id=trace_id)[
        "audits"
    ]
    assert audits[0]["error"] is None
    return answers_of(server.get("/api/answers", trace_id=trace_id, limit=500)["answers"])


def test_an_instrumented_agent_over_http_and_grpc_is_audited_as_its_file_is(tmp_path: Path) -> None:
    env = {"AUDITOR_SERVE_QUIET": "0.3"}
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=env, token="live", grpc=True) as server:
        over_http = HttpExporter(
            endpoint=server.url + "/v1/traces",
            headers=server.headers,
            compression=Compression.Gzip,
            timeout=10,
        )
        over_grpc = GrpcExporter(
            endpoint=f"127.0.0.1:{server.grpc_port}",
            insecure=True,
            headers={"authorization": "Bearer live"},
            compression=grpc.Compression.Gzip,
            timeout=10,
        )
        http_file, grpc_file = tmp_path / "http.otlp.jsonl", tmp_path / "grpc.otlp.jsonl"
        http_trace = run_agent("changed_figure", over_http, http_file)
        grpc_trace = run_agent("parallel_tools", over_grpc, grpc_file)
        for trace_id, path in ((http_trace, http_file), (grpc_trace, grpc_file)):
            expected = audit([path], store=False).answers
            assert expected, f"{path.name} has answers to compare"
            assert served(server, trace_id) == answers_of(expected)
