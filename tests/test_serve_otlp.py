"""The OTLP/HTTP receiver's answers, against a real server: every status code of the retry contract,
``partial_success`` in both encodings, size limits before and after gzip, the bearer token, and the
refusal to listen beyond loopback without one.
"""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from auditor.cli import cli
from auditor.errors import UsageError
from auditor.serve import serve_config
from tests.conftest import FIXTURES
from tests.support.serve import Server, running_server

TOKEN = "s3cret-token"
LIMIT = 200_000
PB = (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()
PROTO, JSON = {"Content-Type": "application/x-protobuf"}, {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = f"sqlite:///{tmp_path_factory.mktemp('serve') / 'serve.db'}"
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_MAX_BODY": str(LIMIT)}
    with running_server(db, env=env, token=TOKEN) as running:
        yield running


def post(server: Server, body: bytes, headers: dict[str, str], auth: bool = True) -> httpx.Response:
    sent = {**headers, **(server.headers if auth else {})}
    return httpx.post(server.url + "/v1/traces", content=body, headers=sent, timeout=10)


def span_json(trace_id: str, span_id: str) -> dict[str, object]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": "s",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
    }


def _field(number: int, payload: bytes) -> bytes:
    size, length = len(payload), bytearray()
    while True:
        length.append((size & 0x7F) | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            break
    return bytes([number << 3 | 2]) + bytes(length) + payload


def deep_protobuf(depth: int) -> bytes:
    """A span attribute whose value is a key-value list nested ``depth`` times (past protobuf's limit)."""
    value = _field(1, b"leaf")  # AnyValue.string_value
    for _ in range(depth):
        value = _field(6, _field(1, _field(1, b"k") + _field(2, value)))  # kvlist_value -> values -> value
    span = _field(1, b"\x01" * 16) + _field(2, b"\x02" * 8) + _field(9, _field(1, b"k") + _field(2, value))
    return _field(1, _field(2, _field(2, span)))  # resource_spans -> scope_spans -> spans


def test_protobuf_and_json_bodies_are_acknowledged_with_an_empty_response(server: Server) -> None:
    accepted = post(server, gzip.compress(PB), {**PROTO, "Content-Encoding": "gzip"})
    assert accepted.status_code == 200 and accepted.headers["content-type"] == "application/x-protobuf"
    response = trace_service_pb2.ExportTraceServiceResponse.FromString(accepted.content)
    assert not response.HasField("partial_success")
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span_json("ab" * 16, "cd" * 8)]}]}]}
    as_json = post(server, json.dumps(request).encode(), JSON)
    assert (as_json.status_code, as_json.json()) == (200, {})
    # two traces stored (once their bodies are read), waiting for their quiet window
    assert server.wait_for("/healthz", lambda d: d["backlog"]["bodies"] == 0)["pending"] == 2


def test_partly_bad_payloads_get_partial_success_in_the_request_encoding(server: Server) -> None:
    good, bad = span_json("12" * 16, "34" * 8), span_json("not-hex", "34" * 8)
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [good, bad, "nonsense"]}]}]}
    answer = post(server, json.dumps(request).encode(), JSON)
    assert answer.status_code == 200
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2" and "traceId" in partial["errorMessage"]

    proto = trace_service_pb2.ExportTraceServiceRequest()
    scope = proto.resource_spans.add().scope_spans.add()
    scope.spans.append(trace_pb2.Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="ok"))
    scope.spans.append(trace_pb2.Span(trace_id=b"", span_id=b"\x02" * 8, name="no trace id"))
    answer = post(server, proto.SerializeToString(), PROTO)
    assert answer.status_code == 200
    response = trace_service_pb2.ExportTraceServiceResponse.FromString(answer.content)
    assert response.partial_success.rejected_spans == 1
    assert "traceId" in response.partial_success.error_message


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (b"\xff\xfe not protobuf", PROTO),
        (b"{not json", JSON),
        (b"[1, 2]", JSON),
        (b"[" * 100_000, JSON),
        (deep_protobuf(500), PROTO),
        (b"\x1f\x8b\x08 broken gzip", {**PROTO, "Content-Encoding": "gzip"}),
        (gzip.compress(PB)[:-20], {**PROTO, "Content-Encoding": "gzip"}),
    ],
    ids=["protobuf", "json", "not-a-request", "deep-json", "deep-protobuf", "gzip", "truncated-gzip"],
)
def test_an_unreadable_body_is_400_with_a_status(
    server: Server, body: bytes, headers: dict[str, str]
) -> None:
    answer = post(server, body, headers)
    assert answer.status_code == 400
    if headers is JSON:
        assert answer.json()["code"] == 3 and answer.json()["message"]
    else:
        assert answer.headers["content-type"] == "application/x-protobuf" and answer.content


def test_other_content_types_are_415(server: Server) -> None:
    answer = post(server, b"hello", {"Content-Type": "text/plain"})
    assert answer.status_code == 415 and "application/x-protobuf" in answer.json()["message"]
    assert post(server, PB, {**PROTO, "Content-Encoding": "br"}).status_code == 415


def test_bodies_over_the_limit_are_413_before_and_after_gzip(server: Server) -> None:
    assert post(server, b"\x00" * (LIMIT + 1), PROTO).status_code == 413
    bomb = gzip.compress(b"\x00" * (LIMIT * 50))  # a few kB that would inflate to 10 MB
    assert len(bomb) < LIMIT
    answer = post(server, bomb, {**PROTO, "Content-Encoding": "gzip"})
    assert answer.status_code == 413
    assert server.get("/healthz")["status"] == "ok"


def test_the_token_is_enforced_on_otlp_and_the_api(server: Server) -> None:
    assert post(server, PB, PROTO, auth=False).status_code == 401
    assert post(server, PB, {**PROTO, "Authorization": "Bearer wrong"}, auth=False).status_code == 401
    for path in ("/api/answers", "/api/runs", "/api/audits", "/api/answers/x"):
        refused = httpx.get(server.url + path, timeout=10)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert server.get("/api/answers") == {"answers": [], "next": None}
    assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200  # probes need no token
    assert httpx.get(server.url + "/openapi.json", timeout=10).json()["paths"]["/api/answers"]


def test_a_full_audit_queue_is_503_with_retry_after(tmp_path: Path) -> None:
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_QUEUE": "1"}
    with running_server(f"sqlite:///{tmp_path / 'serve.db'}", env=env) as server:
        assert post(server, PB, PROTO).status_code == 200
        full = post(server, PB, PROTO)
        assert full.status_code == 503 and int(full.headers["retry-after"]) > 0
        assert (
            full.headers["content-type"] == "application/x-protobuf"
            and b"waiting for an audit" in full.content
        )


def test_a_public_host_needs_a_token_or_insecure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDITOR_SERVE_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "AUDITOR_SERVE_TOKEN" in result.output
    assert "Traceback" not in result.output
    assert serve_config(host="0.0.0.0", insecure=True).token is None
    monkeypatch.setenv("AUDITOR_SERVE_TOKEN", "t")
    assert serve_config(host="0.0.0.0").token == "t"
    assert serve_config(host="::1").host == "::1"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--judge", "bogus"], "Unknown judge 'bogus'"),
        (["--judge", "openai:gpt-4.1-mini"], "No key found"),
        (["--policy", "no-such-policy"], "no-such-policy"),
    ],
)
def test_a_bad_judge_or_policy_stops_the_start_up_in_one_line(
    args: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(cli, ["serve", "--db", f"sqlite:///{tmp_path / 's.db'}", *args])
    assert result.exit_code == 2 and expected in result.output and "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli, ["serve", "--db", f"sqlite:///{tmp_path / 's.db'}", "--port", str(port)]
        )
    assert result.exit_code == 2 and f"127.0.0.1:{port}" in result.output and "--port" in result.output
    assert "Traceback" not in result.output


def test_bad_serve_settings_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDITOR_SERVE_QUIET", "soon")
    with pytest.raises(UsageError, match="AUDITOR_SERVE_QUIET='soon'"):
        serve_config()
