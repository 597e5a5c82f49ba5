"""The serve fault corpus: generated hostile requests for a running ``auditor serve``, and what each holds.

Like the file corpus (:mod:`tests.support.faults`), nothing is committed as data: every case is made
by a seeded generator, so a failing case is reproduced by its id alone (``serve_corpus()[id]``).

- **Bodies** (``http-json``, ``http-proto``, ``grpc``): an OTLP export request of two traces, each
  under its own ``resourceSpans`` entry, with fresh ids per case. The *victim* trace is mutated
  (wrong types anywhere inside its entry, times past 64 bits, negative or text times, bad ids,
  surrogates, NULs, deep nesting); the *good* trace beside it is untouched and must be stored
  (``keep``). Whole-body damage (truncation, byte flips, gzip variants, wrong content type or
  encoding) keeps nothing but must still get a clear answer.
- **API requests** (``api``): every query parameter of ``/api/answers``, ``/api/summary``,
  ``/api/audits``, ``/api/runs``, one answer's routes, ``/`` and ``/trend`` with hostile values,
  including crafted ``next`` cursors, alone and in seeded combinations.

``spans_in`` reads a body the way the test's own oracle does (independently of the server): the
span objects a request holds, so a ``200`` that stored and rejected nothing is caught as a silent
zero.

Run ``python -m tests.support.serve_faults`` to list the counts per family.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import random
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from auditor.serve._filters import FILTER_PARAMS
from tests.support.faults import HOSTILE_TEXT, _paths, _set, _wrong

JSON = "application/json"
PROTOBUF = "application/x-protobuf"
#: Past a signed 64-bit integer but valid in OTLP's fixed64; and one past fixed64 itself.
HUGE_NS = 2**64 - 1
OVER_NS = 2**64


@dataclass(frozen=True)
class BodyCase:
    """One OTLP request: the body, its headers (HTTP), and the trace ids that must be stored."""

    id: str
    family: str  # "http-json", "http-proto" or "grpc"
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    keep: frozenset[str] = frozenset()  # trace ids whose every span must be stored
    keep_spans: int = 0  # how many spans ``keep`` holds


@dataclass(frozen=True)
class ApiCase:
    """One GET with a raw (already percent-encoded) query string."""

    id: str
    path: str
    query: str


# -- base requests --------------------------------------------------------------------------------


def _hex(seed: str, size: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[: size * 2]


def _attributes() -> list[dict[str, Any]]:
    return [
        {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
        {"key": "input.value", "value": {"stringValue": "How long is the X200 warranty?"}},
        {"key": "output.value", "value": {"stringValue": "The X200 carries a 12-month warranty."}},
        {"key": "llm.token_count.total", "value": {"intValue": "12"}},
        {"key": "x.ratio", "value": {"doubleValue": 0.5}},
        {"key": "x.flag", "value": {"boolValue": True}},
        {"key": "x.list", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}}},
        {"key": "x.map", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}},
    ]


def _trace(seed: str) -> tuple[str, list[dict[str, Any]]]:
    """A trace id and its two spans (a root and a child with events, a link and a status)."""
    trace = _hex(seed, 16)
    root, child = _hex(seed + "/root", 8), _hex(seed + "/child", 8)
    spans = [
        {
            "traceId": trace,
            "spanId": root,
            "name": "agent",
            "kind": 1,
            "startTimeUnixNano": "1764000000000000000",
            "endTimeUnixNano": "1764000002000000000",
            "attributes": _attributes(),
            "status": {"code": 1},
        },
        {
            "traceId": trace,
            "spanId": child,
            "parentSpanId": root,
            "name": "llm",
            "kind": 3,
            "startTimeUnixNano": "1764000000500000000",
            "endTimeUnixNano": "1764000001500000000",
            "attributes": _attributes(),
            "events": [{"timeUnixNano": "1764000001000000000", "name": "e", "attributes": _attributes()[:2]}],
            "links": [{"traceId": trace, "spanId": root}],
            "status": {"code": 2, "message": "boom"},
        },
    ]
    return trace, spans


def _resource(service: str, spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "fault", "version": "1"}, "spans": spans}],
    }


def base_request(seed: str) -> tuple[dict[str, Any], str]:
    """A request whose first entry is the good trace and whose second is the victim; the good trace id."""
    good, good_spans = _trace(seed + "/good")
    _, victim_spans = _trace(seed + "/victim")
    return {"resourceSpans": [_resource("good", good_spans), _resource("victim", victim_spans)]}, good


def to_proto(request: dict[str, Any]) -> trace_service_pb2.ExportTraceServiceRequest:
    """The JSON request as protobuf (json_format wants ids in base64, OTLP JSON has them in hex)."""

    def b64(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode()
                if k in {"traceId", "spanId", "parentSpanId"}
                else b64(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [b64(v) for v in value]
        return value

    return json_format.ParseDict(b64(request), trace_service_pb2.ExportTraceServiceRequest())


# -- the oracle: spans a body holds, read independently of the server ------------------------------


def spans_in(body: bytes, media: str, encoding: str | None = None) -> int:
    """Span objects ``body`` holds as a well-formed request (0 when it is not one)."""
    if (encoding or "").strip().lower() == "gzip":
        try:
            body = gzip.decompress(body)  # every member (RFC 1952)
        except (OSError, EOFError, zlib.error):
            return 0
    if media == PROTOBUF:
        request = trace_service_pb2.ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError:
            return 0
        return sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
    try:
        data = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return 0

    def items(value: Any) -> list[Any]:
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

    def get(obj: dict[str, Any], name: str, alias: str) -> Any:  # proto3 JSON takes both names
        return obj[name] if name in obj else obj.get(alias)

    resources = items(get(data, "resourceSpans", "resource_spans")) if isinstance(data, dict) else []
    return sum(
        len(items(scope.get("spans")))
        for resource in resources
        for scope in items(get(resource, "scopeSpans", "scope_spans"))
    )


# -- body mutations -------------------------------------------------------------------------------


def _deep_value(depth: int) -> str:
    """An AnyValue nested ``depth`` deep as JSON text (``json.dumps`` would recurse too far)."""
    return '{"arrayValue": {"values": [' * depth + '{"stringValue": "leaf"}' + "]}}" * depth


#: Special values for a victim span's fields: (field, value).
_SPAN_VALUES: list[tuple[str, Any]] = [
    ("endTimeUnixNano", str(HUGE_NS)),
    ("endTimeUnixNano", HUGE_NS),
    ("endTimeUnixNano", str(OVER_NS)),
    ("endTimeUnixNano", "-1"),
    ("endTimeUnixNano", -5),
    ("endTimeUnixNano", 1e30),
    ("endTimeUnixNano", "1e30"),
    ("endTimeUnixNano", "soon"),
    ("startTimeUnixNano", str(HUGE_NS)),
    ("startTimeUnixNano", "0"),
    ("traceId", "zz" * 16),
    ("traceId", "00" * 16),
    ("traceId", "AB" * 16),
    ("traceId", base64.b64encode(b"\x07" * 16).decode()),
    ("traceId", "ab" * 17),
    ("spanId", ""),
    ("spanId", "0" * 16),
    ("spanId", "\ud800" * 16),
    ("parentSpanId", "not an id"),
    ("parentSpanId", 7),
    ("name", "\ud800"),
    ("name", "\x00"),
    ("name", HOSTILE_TEXT),
    ("name", "n" * 100_000),
    ("kind", 99),
    ("kind", "SPAN_KIND_SERVER"),
    ("status", {"code": "bad", "message": "\udfff"}),
    ("attributes", [{"key": "input.value", "value": {"stringValue": "a\x00b\ud800c"}}]),
    ("attributes", [{"key": "\ud800", "value": {"intValue": "99999999999999999999999"}}]),
    (
        "attributes",
        [{"key": "x", "value": {"doubleValue": "NaN"}}, {"key": "y", "value": {"bytesValue": "!!"}}],
    ),
    ("attributes", [{"key": "x"}, {"value": {"stringValue": "no key"}}, None, 3]),
    ("events", [{"timeUnixNano": str(OVER_NS), "name": None, "attributes": "x"}]),
    ("links", [{"traceId": "x", "spanId": None}, 5]),
]


def _dump(request: Any) -> bytes:
    return json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass")


def json_cases(rng: random.Random, count: int) -> Iterator[BodyCase]:
    """OTLP/JSON bodies: the victim trace mutated (good trace kept), then whole-body damage."""

    def case(label: str, mutate: Any) -> BodyCase:
        seed = f"json/{label}"
        request, good = base_request(seed)
        body = mutate(request)
        return BodyCase(seed, "http-json", body, {"Content-Type": JSON}, frozenset({good}), 2)

    for n, (name, value) in enumerate(_SPAN_VALUES):

        def put(request: dict[str, Any], name: str = name, value: Any = value) -> bytes:
            span = request["resourceSpans"][1]["scopeSpans"][0]["spans"][1]
            span[name] = value
            text = _dump(request)
            # A surrogate written as its JSON escape, as a client would send it.
            return text.replace("\ud800".encode("utf-8", "surrogatepass"), b"\\ud800").replace(
                "\udfff".encode("utf-8", "surrogatepass"), b"\\udfff"
            )

        yield case(f"span{n:02d}-{name}", put)

    def deep(depth: int) -> Any:
        def mutate(request: dict[str, Any]) -> bytes:
            span = request["resourceSpans"][1]["scopeSpans"][0]["spans"][0]
            span["attributes"] = [{"key": "deep", "value": "@DEEP@"}]
            return _dump(request).replace(b'"@DEEP@"', _deep_value(depth).encode())

        return mutate

    yield case("deep-attribute-200", deep(200))
    for n in range(count):

        def wrong(request: dict[str, Any], n: int = n) -> bytes:
            victim = request["resourceSpans"][1]
            paths = list(_paths(victim))[1:]
            path = rng.choice(paths)
            current: Any = victim
            for part in path:
                current = current[part]
            request["resourceSpans"][1] = _set(victim, path, _wrong(current, rng))
            return _dump(request).replace("\ud800".encode("utf-8", "surrogatepass"), b"\\ud800")

        yield case(f"wrong-type-{n}", wrong)
    yield from _whole_json(rng, count)


def _whole_json(rng: random.Random, count: int) -> Iterator[BodyCase]:
    """Damage to the whole JSON body or its headers: nothing need be kept, a clear answer is due."""
    request, good = base_request("json/whole")
    valid = _dump(request)

    def plain(label: str, body: bytes, **headers: str) -> BodyCase:
        sent = {"Content-Type": JSON, **headers}
        return BodyCase(f"json/{label}", "http-json", body, sent)

    def fresh(label: str) -> tuple[bytes, str]:
        request, good = base_request(f"json/{label}")
        return _dump(request), good

    for n in range(count):
        cut = rng.randrange(1, len(valid))
        yield plain(f"truncate-{n}", _dump(base_request(f"json/truncate-{n}")[0])[:cut])
    for n in range(count):
        flipped = bytearray(_dump(base_request(f"json/flip-{n}")[0]))
        for _ in range(rng.randint(1, 6)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        yield plain(f"flip-{n}", bytes(flipped))
    for label, top in [
        ("top-list", [request]),
        ("top-string", "resourceSpans"),
        ("top-null", None),
        ("resource-spans-object", {"resourceSpans": {"scopeSpans": []}}),
        ("resource-spans-string", {"resourceSpans": "x"}),
        ("resource-spans-null", {"resourceSpans": None}),
        ("empty-object", {}),
        ("snake-case", {"resource_spans": request["resourceSpans"]}),
    ]:
        yield plain(label, _dump(top))
    yield plain("deep-100000", b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    yield plain("empty", b"")
    yield plain("nul", b"\x00" * 64)
    yield plain("bom", b"\xef\xbb\xbf" + fresh("bom")[0])
    yield plain("utf16", json.dumps(base_request("json/utf16")[0]).encode("utf-16"))
    yield plain("cesu8-surrogate", fresh("cesu8")[0].replace(b'"name": "', b'"name": "\xed\xa0\x80', 1))
    yield plain("invalid-utf8", fresh("invalid-utf8")[0].replace(b'"name": "', b'"name": "\xff\xfe', 1))
    yield plain("nan-literal", fresh("nan")[0].replace(b"0.5", b"NaN", 1))
    yield plain("duplicate-keys", b'{"resourceSpans": [], "resourceSpans": "x"}')
    # gzip: one member (kept), several members (kept), damaged, mislabelled, bombs.
    body, good = fresh("gzip")
    yield BodyCase(
        "json/gzip",
        "http-json",
        gzip.compress(body),
        {"Content-Type": JSON, "Content-Encoding": "gzip"},
        frozenset({good}),
        2,
    )
    body, good = fresh("gzip-members")
    yield BodyCase(
        "json/gzip-members",
        "http-json",
        b"".join(gzip.compress(body[i : i + 97]) for i in range(0, len(body), 97)),
        {"Content-Type": JSON, "Content-Encoding": "GZIP"},
        frozenset({good}),
        2,
    )
    whole = gzip.compress(fresh("gzip-cut")[0])
    yield plain("gzip-truncated", whole[: len(whole) // 2], **{"Content-Encoding": "gzip"})
    yield plain(
        "gzip-trailing", gzip.compress(fresh("gzip-tail")[0]) + b"junk", **{"Content-Encoding": "gzip"}
    )
    yield plain("gzip-unlabelled", gzip.compress(fresh("gzip-unlabelled")[0]))
    yield plain("gzip-label-plain", fresh("gzip-label")[0], **{"Content-Encoding": "gzip"})
    yield plain("gzip-bomb", gzip.compress(b" " * 50_000_000), **{"Content-Encoding": "gzip"})
    yield plain("deflate", zlib.compress(fresh("deflate")[0]), **{"Content-Encoding": "deflate"})
    yield plain("br", fresh("br")[0], **{"Content-Encoding": "br"})
    yield plain("encoding-list", fresh("enc-list")[0], **{"Content-Encoding": "gzip, identity"})
    # Content types: none, wrong, with parameters, and the other encoding's body.
    yield plain("type-none", fresh("type-none")[0], **{"Content-Type": ""})
    yield plain("type-text", fresh("type-text")[0], **{"Content-Type": "text/plain"})
    yield plain(
        "type-charset", fresh("type-charset")[0], **{"Content-Type": "application/json; charset=latin-1"}
    )
    yield plain("type-upper", fresh("type-upper")[0], **{"Content-Type": "APPLICATION/JSON"})
    yield plain("type-garbage", fresh("type-garbage")[0], **{"Content-Type": ";;;\x7f"})
    yield plain("proto-as-json", to_proto(base_request("json/proto-as-json")[0]).SerializeToString())


def proto_cases(rng: random.Random, count: int, family: str) -> Iterator[BodyCase]:
    """Protobuf bodies, for OTLP/HTTP (``http-proto``) or gRPC (``grpc``)."""
    headers = {"Content-Type": PROTOBUF} if family == "http-proto" else {}

    def fresh(label: str) -> tuple[trace_service_pb2.ExportTraceServiceRequest, str, str]:
        seed = f"{family}/{label}"
        request, good = base_request(seed)
        return to_proto(request), good, seed

    def victim(message: Any) -> Any:
        return message.resource_spans[1].scope_spans[0].spans[1]

    edits: list[tuple[str, Any]] = [
        ("end-2^64-1", lambda s: setattr(s, "end_time_unix_nano", HUGE_NS)),
        ("start-2^64-1", lambda s: setattr(s, "start_time_unix_nano", HUGE_NS)),
        ("end-before-start", lambda s: setattr(s, "end_time_unix_nano", 1)),
        ("trace-id-short", lambda s: setattr(s, "trace_id", b"\x01" * 5)),
        ("trace-id-empty", lambda s: setattr(s, "trace_id", b"")),
        ("trace-id-zero", lambda s: setattr(s, "trace_id", b"\x00" * 16)),
        ("span-id-long", lambda s: setattr(s, "span_id", b"\x02" * 9)),
        ("parent-id-short", lambda s: setattr(s, "parent_span_id", b"\x03")),
        ("name-nul", lambda s: setattr(s, "name", "a\x00b")),
        ("name-hostile", lambda s: setattr(s, "name", HOSTILE_TEXT)),
        ("name-huge", lambda s: setattr(s, "name", "n" * 100_000)),
        ("kind-99", lambda s: setattr(s, "kind", 99)),
        ("status-code-99", lambda s: setattr(s.status, "code", 99)),
        (
            "attribute-nul",
            lambda s: s.attributes.add(key="input.value").value.__setattr__("string_value", "\x00"),
        ),
        ("attribute-empty-value", lambda s: s.attributes.add(key="x")),
        ("attribute-bytes", lambda s: setattr(s.attributes.add(key="b").value, "bytes_value", b"\xff\x00")),
        ("attribute-inf", lambda s: setattr(s.attributes.add(key="d").value, "double_value", float("inf"))),
        ("attribute-nan", lambda s: setattr(s.attributes.add(key="d").value, "double_value", float("nan"))),
        ("event-time-2^64-1", lambda s: setattr(s.events.add(name="e"), "time_unix_nano", HUGE_NS)),
        ("link-bad-ids", lambda s: s.links.add(trace_id=b"\x01", span_id=b"")),
        ("many-attributes", lambda s: [s.attributes.add(key=f"k{i}") for i in range(5000)]),
    ]
    for label, edit in edits:
        message, good, seed = fresh(label)
        edit(victim(message))
        yield BodyCase(seed, family, message.SerializeToString(), headers, frozenset({good}), 2)
    for depth in (30, 200):  # protobuf's own limit is 100 levels
        message, good, seed = fresh(f"deep-{depth}")
        value = victim(message).attributes.add(key="deep").value
        for _ in range(depth):
            value = value.array_value.values.add()
        value.string_value = "leaf"
        yield BodyCase(
            seed,
            family,
            message.SerializeToString(),
            headers,
            frozenset({good}) if depth < 90 else frozenset(),
            2 if depth < 90 else 0,
        )
    for n in range(count):
        data = fresh(f"truncate-{n}")[0].SerializeToString()
        yield BodyCase(f"{family}/truncate-{n}", family, data[: rng.randrange(1, len(data))], headers)
    for n in range(count):
        flipped = bytearray(fresh(f"flip-{n}")[0].SerializeToString())
        for _ in range(rng.randint(1, 6)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        yield BodyCase(f"{family}/flip-{n}", family, bytes(flipped), headers)
    whole = fresh("whole")[0].SerializeToString()
    for label, body in [
        ("empty", b""),
        ("nul", b"\x00" * 64),
        ("json-body", _dump(base_request(f"{family}/json-body")[0])),
        ("garbage-tail", whole + b"\xff\xff\xff"),
        ("unknown-field", whole + b"\xf8\x07\x01"),  # field 127, varint: kept as unknown, spans read
        ("length-overflow", b"\x0a\xff\xff\xff\xff\x0f" + whole[:10]),
        ("wrong-wire-type", b"\x0d" + whole[1:]),
    ]:
        yield BodyCase(f"{family}/{label}", family, body, headers)
    if family == "grpc":  # gRPC's own compression (the test's client sends it with ``grpc-encoding: gzip``)
        message, good, seed = fresh("gzip")
        yield BodyCase(
            seed, family, message.SerializeToString(), {"grpc-encoding": "gzip"}, frozenset({good}), 2
        )
    if family == "http-proto":
        message, good, seed = fresh("gzip")
        yield BodyCase(
            seed,
            family,
            gzip.compress(message.SerializeToString()),
            {**headers, "Content-Encoding": "gzip"},
            frozenset({good}),
            2,
        )
        yield BodyCase(
            f"{family}/as-json", family, fresh("as-json")[0].SerializeToString(), {"Content-Type": JSON}
        )


# -- API requests ---------------------------------------------------------------------------------

#: Every query parameter of each read route: the filters as the server itself lists them.
FILTERS = FILTER_PARAMS
ROUTES: dict[str, tuple[str, ...]] = {
    "/api/answers": (*FILTERS, "limit", "next"),
    "/api/summary": FILTERS,
    "/api/audits": ("trace_id", "limit", "next"),
    "/api/runs": ("limit",),
    "/": (*FILTERS, "next"),
    "/trend": (*FILTERS, "bucket"),
    "/runs": ("x",),
    "/policy": ("x",),
    "/api/answers/{id}": ("run_id",),
    "/answers/{id}": ("run",),
    "/answers/{id}/attribution": ("run",),
}


def _cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


def _raw(text: str) -> str:
    """Already percent-encoded (bytes a client may send that no ``str`` encodes)."""
    return "\x01" + text


#: Hostile values for any parameter; ``_raw`` ones go into the query string as they are.
VALUES: list[str] = [
    "",
    " ",
    "\x00",
    "a\x00b",
    _raw("%ED%A0%80"),
    _raw("%FF%FE"),
    _raw("%"),
    _raw("%zz"),
    "x" * 501,
    "x" * 20_000,
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+23:59",
    "2026-02-30T00:00:00Z",
    "-1",
    "0",
    "1e999",
    "nan",
    "99999999999999999999",
    "[]",
    "' OR 1=1 --",
    "%_\\",
    "true",
    HOSTILE_TEXT,
    "\u202e\ufeff",
    "a\r\nb",
    "supported",
]
#: Cursors for ``next``: garbage, other types, deep nesting, surrogates, NULs, times out of range.
CURSORS: list[str] = [
    "x",
    "====",
    _cursor([]),
    _cursor(["2026-01-01T00:00:00+00:00", "r"]),
    _cursor([1, 2, 3]),
    _cursor({"a": 1}),
    _cursor(["9999-12-31T23:59:59-23:59", "r", "a"]),
    _cursor(["0001-01-01T00:00:00+23:59", "r", "a"]),
    _cursor(["2026-01-01T00:00:00", "r\x00", "a"]),
    _cursor(["2026-01-01T00:00:00", "r", "\ud800"]),
    _cursor(["not a time", "r", "a"]),
    _cursor(["2026-01-01T00:00:00+00:00", "r" * 10_000, "a"]),
    base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode(),
    base64.urlsafe_b64encode(b'["\\ud800", "r", "a"]').decode(),
    base64.urlsafe_b64encode(b"\xff\xfe\x00").decode(),
    # The shape of an /api/audits cursor (time, trace id, generation) with hostile generations.
    _cursor(["2026-01-01T00:00:00+00:00", "t", 2**31]),
    _cursor(["2026-01-01T00:00:00+00:00", "t", 2**64]),
    _cursor(["2026-01-01T00:00:00+00:00", "t", -1]),
    _cursor(["2026-01-01T00:00:00+00:00", "t", True]),
    _cursor(["2026-01-01T00:00:00+00:00", "t", 1e308]),
    _cursor(["2026-01-01T00:00:00+00:00", "t\x00", 1]),
    _cursor(["9999-12-31T23:59:59-23:59", "t", 1]),
]


def _encode(value: str) -> str:
    if value.startswith("\x01"):
        return value[1:]
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def api_cases(rng: random.Random, combos: int) -> Iterator[ApiCase]:
    """Each parameter of each route with each hostile value, then seeded combinations."""
    for route, params in ROUTES.items():
        path = route.replace("{id}", "no-such-answer")
        for param in params:
            values = VALUES + (CURSORS if param == "next" else [])
            for n, value in enumerate(values):
                yield ApiCase(f"api{route}/{param}/{n}", path, f"{param}={_encode(value)}")
        if "{id}" in route:
            for n, value in enumerate(VALUES):
                if value.strip() and "/" not in value:
                    yield ApiCase(f"api{route}/id/{n}", route.replace("{id}", _encode(value)), "")
    for n in range(combos):
        route = rng.choice(list(ROUTES))
        params = rng.sample(ROUTES[route], min(len(ROUTES[route]), rng.randint(2, 4)))
        query = "&".join(f"{p}={_encode(rng.choice(VALUES + CURSORS))}" for p in params)
        yield ApiCase(f"api{route}/combo-{n}", route.replace("{id}", "no-such-answer"), query)


# -- the whole corpus -----------------------------------------------------------------------------


def serve_corpus(seed: int = 20261206, per_family: int = 30) -> dict[str, BodyCase | ApiCase]:
    """Every case, by id; the same seed gives the same corpus."""
    rng = random.Random(seed)
    cases: list[BodyCase | ApiCase] = [
        *json_cases(rng, per_family),
        *proto_cases(rng, per_family, "http-proto"),
        *proto_cases(rng, per_family, "grpc"),
        *api_cases(rng, per_family * 4),
    ]
    by_id: dict[str, BodyCase | ApiCase] = {}
    for case in cases:
        by_id.setdefault(case.id, case)
    return by_id


#: The numbered (seeded) families, sampled in CI; every other body case always runs.
NUMBERED = ("/wrong-type-", "/truncate-", "/flip-")


def family(case: BodyCase | ApiCase) -> str:
    return case.family if isinstance(case, BodyCase) else "api"


def serve_sample(cases: dict[str, BodyCase | ApiCase], size: int, seed: int = 7) -> list[BodyCase | ApiCase]:
    """Every named (unnumbered) body case plus a seeded pick of the rest (CI); all if ``size`` is 0."""
    ordered = sorted(cases.values(), key=lambda c: c.id)
    if not size or size >= len(ordered):
        return ordered
    fixed = [c for c in ordered if isinstance(c, BodyCase) and not any(n in c.id for n in NUMBERED)]
    rest = [c for c in ordered if c not in fixed]
    picked = random.Random(seed).sample(rest, max(0, min(len(rest), size - len(fixed))))
    return sorted([*fixed, *picked], key=lambda c: c.id)


if __name__ == "__main__":
    everything = serve_corpus()
    print(f"{len(everything)} cases:", dict(Counter(family(c) for c in everything.values())))
