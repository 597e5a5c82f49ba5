"""OTLP/gRPC (``auditor serve --grpc``) against a real server process: the real SDK gRPC exporter's
spans audited as ``auditor audit`` audits the same spans from a file; the token in metadata; every
status of the OTLP/gRPC retry contract, with ``RetryInfo`` exactly where a retry is allowed; size
limits before and after gzip; hostile bodies refused while the server keeps serving.
"""

from __future__ import annotations

import gzip
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import grpc  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk.trace.export import SpanExportResult

from auditor.cli import cli
from auditor.run import audit
from auditor.serve._grpc import METHOD, SERVICE
from tests.conftest import FIXTURES
from tests.support.otlp_replay import sdk_spans, write_pb
from tests.support.serve import Server, running_server
from tests.test_serve import answers_of
from tests.test_serve_otlp import deep_protobuf

FIXTURE = FIXTURES / "single_retrieval" / "openinference.otlp.jsonl"
PB = (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()
TOKEN = "grpc-s3cret"
LIMIT = 200_000


def export_grpc(server: Server, spans: list[object], token: str | None = TOKEN) -> SpanExportResult:
    exporter = OTLPSpanExporter(
        endpoint=f"127.0.0.1:{server.grpc_port}",
        insecure=True,
        headers={"authorization": f"Bearer {token}"} if token else None,
        compression=grpc.Compression.Gzip,
        timeout=5,
    )
    try:
        return exporter.export(spans)  # type: ignore[arg-type]
    finally:
        exporter.shutdown()


def call(
    server: Server, body: bytes, token: str | None = TOKEN, gzip_it: bool = False
) -> tuple[grpc.StatusCode, bytes | None, dict[str, bytes]]:
    """One raw Export call: its status code, the reply body (when OK) and the trailing metadata."""
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        export = channel.unary_unary(f"/{SERVICE}/{METHOD}")
        metadata = (("authorization", f"Bearer {token}"),) if token else None
        compression = grpc.Compression.Gzip if gzip_it else None
        try:
            reply, outcome = export.with_call(body, metadata=metadata, timeout=10, compression=compression)
        except grpc.RpcError as err:
            return err.code(), None, dict(err.trailing_metadata() or ())
        return outcome.code(), reply, dict(outcome.trailing_metadata() or ())


def retry_delay(trailers: dict[str, bytes]) -> float | None:
    """The RetryInfo delay in both places the server puts it (they must agree), or None if absent."""
    if "grpc-status-details-bin" not in trailers:
        assert "google.rpc.retryinfo-bin" not in trailers
        return None
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    (detail,) = status.details
    info = error_details_pb2.RetryInfo()
    assert detail.Unpack(info)
    assert error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]) == info
    return info.retry_delay.seconds + info.retry_delay.nanos / 1e9


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = f"sqlite:///{tmp_path_factory.mktemp('grpc') / 'serve.db'}"
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_MAX_BODY": str(LIMIT)}
    with running_server(db, env=env, token=TOKEN, grpc=True) as running:
        yield running


def test_the_service_is_the_one_opentelemetry_proto_defines() -> None:
    service = trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"]
    assert service.full_name == SERVICE and METHOD in service.methods_by_name


def test_grpc_audit_equals_the_file_audit(tmp_path: Path) -> None:
    spans = sdk_spans(FIXTURE)
    expected = audit([write_pb(spans, tmp_path / "same-spans.pb")], store=False)
    assert expected.answers
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    with running_server(db, env={"AUDITOR_SERVE_QUIET": "0.3"}, grpc=True) as server:
        assert export_grpc(server, spans, token=None) is SpanExportResult.SUCCESS  # type: ignore[arg-type]
        audits = server.wait_for("/api/audits", lambda d: len(d["audits"]) == 1)["audits"]
        assert audits[0]["spans"] == 17 and audits[0]["error"] is None
        served = server.get("/api/answers", run_id=audits[0]["run_id"])
        assert answers_of(served["answers"]) == answers_of(expected.answers)


def test_the_token_is_required_in_metadata(server: Server) -> None:
    assert call(server, PB, token=None)[0] is grpc.StatusCode.UNAUTHENTICATED
    assert call(server, PB, token="wrong")[0] is grpc.StatusCode.UNAUTHENTICATED
    code, reply, _ = call(server, PB)
    assert code is grpc.StatusCode.OK and reply is not None
    assert not trace_service_pb2.ExportTraceServiceResponse.FromString(reply).HasField("partial_success")
    # The generated stub (the SDK's own client code) gets the same answer.
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(PB)
        stub.Export(request, metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=10)


def test_partial_success_and_bad_bodies(server: Server) -> None:
    request = trace_service_pb2.ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    scope.spans.add(trace_id=b"\x05" * 16, span_id=b"\x06" * 8, name="ok")
    scope.spans.add(trace_id=b"", span_id=b"\x06" * 8, name="no trace id")
    code, reply, _ = call(server, request.SerializeToString())
    assert code is grpc.StatusCode.OK and reply is not None
    partial = trace_service_pb2.ExportTraceServiceResponse.FromString(reply).partial_success
    assert partial.rejected_spans == 1 and "traceId" in partial.error_message
    for hostile in (b"\xff\xfe not protobuf", deep_protobuf(500)):
        code, _, trailers = call(server, hostile)
        assert code is grpc.StatusCode.INVALID_ARGUMENT and retry_delay(trailers) is None
    assert call(server, PB)[0] is grpc.StatusCode.OK  # still serving


def test_over_the_size_limit_is_resource_exhausted_without_retry_info(server: Server) -> None:
    code, _, trailers = call(server, b"\x00" * (LIMIT + 1))
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and retry_delay(trailers) is None
    bomb = b"\x0a" + b"\x00" * (LIMIT * 50)  # small once gzipped, 10 MB once inflated
    assert len(gzip.compress(bomb)) < LIMIT
    code, _, trailers = call(server, bomb, gzip_it=True)
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and retry_delay(trailers) is None
    assert call(server, PB)[0] is grpc.StatusCode.OK


def test_a_full_queue_is_unavailable_and_a_fast_client_is_throttled_both_with_retry_info(
    tmp_path: Path,
) -> None:
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_QUEUE": "1", "AUDITOR_SERVE_RATE": "1"}
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=env, grpc=True) as server:
        assert call(server, PB, token=None)[0] is grpc.StatusCode.OK
        time.sleep(1.1)  # the client's bucket refills (one request a second)
        code, _, trailers = call(server, PB, token=None)
        assert code is grpc.StatusCode.UNAVAILABLE and retry_delay(trailers) == 5.0
        codes = [call(server, b"", token=None) for _ in range(3)]  # right after: over the rate
        throttled = [t for c, _, t in codes if c is grpc.StatusCode.RESOURCE_EXHAUSTED]
        assert throttled, [c for c, _, _ in codes]
        delay = retry_delay(throttled[0])
        assert delay is not None and 0 < delay <= 1.0


def test_a_taken_grpc_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli,
            [
                "serve",
                "--db",
                f"sqlite:///{tmp_path / 's.db'}",
                "--port",
                "0",
                "--grpc",
                "--grpc-port",
                str(port),
            ],
        )
    assert result.exit_code == 2 and f"127.0.0.1:{port}" in result.output and "--grpc-port" in result.output
    assert "Traceback" not in result.output
