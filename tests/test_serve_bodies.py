"""Hostile but well-formed OTLP bodies against a real server, on SQLite and PostgreSQL, over HTTP
and (where the body can be protobuf) gRPC: each gets a clear answer and the good spans beside it
are stored.

- a time at or past 2^63 ns (valid in OTLP's fixed64, past a signed 64-bit column) is stored;
- a lone UTF-16 surrogate in OTLP/JSON text is repaired, as the file adapters repair it;
- a wrong-typed ``resourceSpans`` / ``scopeSpans`` / ``spans`` is a 400 or a partial success
  counting what it rejected, never ``200 {}`` over nothing stored;
- a gzip body of several members is read whole, within the size limit.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Any

import grpc  # type: ignore[import-untyped]
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from auditor.store import Store, received_traces, upgrade
from tests.support.serve import Server, drain, running_server
from tests.test_serve_grpc import call
from tests.test_store import pg_schema, pg_url  # noqa: F401  (the session's PostgreSQL server)

TOKEN = "grpc-s3cret"  # the token tests.test_serve_grpc.call sends
LIMIT = 200_000
JSON = {"Content-Type": "application/json"}
PROTO = {"Content-Type": "application/x-protobuf"}
HUGE = 2**64 - 1  # the largest fixed64: year 2554


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('bodies') / 'serve.db'}"
        return
    with pg_schema(request.getfixturevalue("pg_url")) as url:
        upgrade(url)  # serve does not create a PostgreSQL schema: `auditor db upgrade` does
        yield url


@pytest.fixture(scope="module")
def server(db: str) -> Iterator[Server]:
    env = {"AUDITOR_SERVE_QUIET": "600", "AUDITOR_SERVE_MAX_BODY": str(LIMIT)}
    with running_server(db, env=env, token=TOKEN, grpc=True) as running:
        yield running


def post(server: Server, body: bytes, headers: dict[str, str]) -> httpx.Response:
    sent = {**headers, **server.headers}
    return httpx.post(server.url + "/v1/traces", content=body, headers=sent, timeout=10)


def stored(db: str) -> dict[str, int]:
    """Trace id -> spans stored, read from the store the server writes."""
    with Store(db) as store:
        drain(store)
        return {t.trace_id: t.spans for t in received_traces(store, 1000)}


def span(trace: str, span_id: str, end: object = "2000", **more: Any) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span_id,
        "name": "s",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": end,
        **more,
    }


def request(*spans: dict[str, Any]) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}).encode()


def test_a_time_past_signed_64_bits_is_stored_over_http(server: Server, db: str) -> None:
    answer = post(server, request(span("a1" * 16, "01" * 8, str(HUGE)), span("a2" * 16, "02" * 8)), JSON)
    assert answer.status_code == 200, answer.text
    assert answer.json().get("partialSuccess", {}).get("rejectedSpans", "0") == "0"
    have = stored(db)
    assert have["a1" * 16] == 1 and have["a2" * 16] == 1


def test_a_time_past_signed_64_bits_is_stored_over_grpc(server: Server, db: str) -> None:
    proto = trace_service_pb2.ExportTraceServiceRequest()
    scope = proto.resource_spans.add().scope_spans.add()
    scope.spans.add(trace_id=b"\xb1" * 16, span_id=b"\x01" * 8, name="late", end_time_unix_nano=HUGE)
    scope.spans.add(trace_id=b"\xb2" * 16, span_id=b"\x02" * 8, name="ok", end_time_unix_nano=2000)
    code, reply, _ = call(server, proto.SerializeToString())
    assert code is grpc.StatusCode.OK and reply is not None
    response = trace_service_pb2.ExportTraceServiceResponse.FromString(reply)
    assert response.partial_success.rejected_spans == 0
    have = stored(db)
    assert have["b1" * 16] == 1 and have["b2" * 16] == 1
    # The protobuf route of OTLP/HTTP takes the same body the same way.
    again = proto.SerializeToString().replace(b"\xb1" * 16, b"\xb3" * 16)
    assert post(server, again, PROTO).status_code == 200
    assert stored(db)["b3" * 16] == 1


def test_a_lone_surrogate_in_json_text_is_repaired_and_stored(server: Server, db: str) -> None:
    attributes = [{"key": "input.value", "value": {"stringValue": "caf\\ud800e"}}]
    body = request(span("c1" * 16, "01" * 8, attributes=attributes), span("c2" * 16, "02" * 8))
    # json.dumps escaped the backslash: undo it so the body spells the escape \ud800 itself.
    body = body.replace(b"\\\\ud800", b"\\ud800")
    assert b"\\ud800" in body and json.loads(body)  # a lone surrogate, valid JSON
    answer = post(server, body, JSON)
    assert answer.status_code == 200, answer.text
    have = stored(db)
    assert have["c1" * 16] == 1 and have["c2" * 16] == 1


@pytest.mark.parametrize(
    ("body", "rejected"),
    [
        ({"resourceSpans": [{"scopeSpans": "x"}]}, 1),
        ({"resourceSpans": [{"scopeSpans": [{"spans": {"traceId": "x"}}]}]}, 1),
        ({"resourceSpans": [{"scopeSpans": [{"spans": 7}, {"spans": [span("d1" * 16, "01" * 8)]}]}]}, 1),
        ({"resourceSpans": [3, {"scopeSpans": [{"spans": [span("d2" * 16, "01" * 8)]}]}]}, 1),
        ({"resourceSpans": [{"scopeSpans": [None, True]}]}, 2),
    ],
    ids=["scopeSpans-string", "spans-object", "spans-number", "resource-number", "scope-not-object"],
)
def test_wrong_typed_lists_are_a_partial_success_naming_them(
    server: Server, body: dict[str, Any], rejected: int
) -> None:
    answer = post(server, json.dumps(body).encode(), JSON)
    assert answer.status_code == 200, answer.text
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == str(rejected)
    assert "not a list" in partial["errorMessage"] or "not an object" in partial["errorMessage"]


@pytest.mark.parametrize("value", ['"x"', "{}", "7", "true"])
def test_a_wrong_typed_resource_spans_is_400(server: Server, value: str) -> None:
    answer = post(server, b'{"resourceSpans": ' + value.encode() + b"}", JSON)
    assert answer.status_code == 400
    assert answer.json()["code"] == 3 and "resourceSpans" in answer.json()["message"]


def test_the_good_spans_beside_wrong_typed_ones_are_stored(server: Server, db: str) -> None:
    body = {"resourceSpans": [{"scopeSpans": [{"spans": "x"}, {"spans": [span("e1" * 16, "01" * 8)]}]}]}
    answer = post(server, json.dumps(body).encode(), JSON)
    assert answer.json()["partialSuccess"]["rejectedSpans"] == "1"
    assert stored(db)["e1" * 16] == 1


def test_every_gzip_member_is_read(server: Server, db: str) -> None:
    # Two members hold one JSON document of two spans: the first member stops in the middle of it.
    whole = request(span("f1" * 16, "01" * 8), span("f3" * 16, "03" * 8))
    cut = len(whole) // 2
    answer = post(
        server,
        gzip.compress(whole[:cut]) + gzip.compress(whole[cut:]),
        {**JSON, "Content-Encoding": "gzip"},
    )
    assert answer.status_code == 200, answer.text
    have = stored(db)
    assert have["f1" * 16] == 1 and have["f3" * 16] == 1


def test_gzip_members_together_are_held_to_the_size_limit(server: Server) -> None:
    member = gzip.compress(b" " * (LIMIT // 2))
    answer = post(server, member * 3 + gzip.compress(b"{}"), {**JSON, "Content-Encoding": "gzip"})
    assert answer.status_code == 413
    trailing = gzip.compress(b"{}") + b"not gzip"
    assert post(server, trailing, {**JSON, "Content-Encoding": "gzip"}).status_code == 400
