"""Real stored audits for the server's pages and read API: fixture traces audited into a store.

Six fixture scenarios are audited with ``auditor.run.audit`` (offline judge), as ``auditor audit``
would store them, under a copy of the shipped default policy that reads the question type from a
span attribute; one scenario is audited again under the shipped ``permissive`` policy (a second
policy, and answers with nothing excluded). The copies are shifted in time so the answers span
several hours and two days, and two scenarios are also received as OTLP through
:class:`auditor.store.Intake`, one under another ``service.name``: one as an OTLP JSON body (its
spans kept as JSON text), the other as a protobuf body (kept as protobuf bytes), so every filter
reads both forms of a stored span. Together they cover grounded,
not grounded, contradicted and refused answers, excluded evidence and claims only excluded
evidence would support.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from auditor.policy import load_policy, parse_policy
from auditor.results import AnswerOut
from auditor.run import audit
from auditor.store import Intake, Store, upgrade
from auditor.trace import SpanReceiver, get_adapter
from tests.conftest import FIXTURES, ROOT

#: Scenario -> (hours earlier than the capture, question type).
SCENARIOS = {
    "single_retrieval": (0, "product"),
    "refusal": (0, "account"),
    "changed_figure": (1, "billing"),
    "user_message_support": (2, "billing"),
    "multi_turn": (3, "product"),
    "fabricated_figure": (26, "billing"),
}
PERMISSIVE_SCENARIO = "single_retrieval"
#: Received as OTLP: ``single_retrieval`` under the fixtures' service, ``multi_turn`` under another.
RECEIVED = {"single_retrieval": "support-agent-demo", "multi_turn": "billing-bot"}
#: The received scenarios sent as a protobuf body (the others as OTLP JSON).
RECEIVED_AS_PROTOBUF = {"multi_turn"}
FIXTURE_SERVICE = "support-agent-demo"
QUESTION_TYPE = "app.question_type"
HOUR_NS = 3_600 * 10**9


@dataclass(frozen=True)
class Stored:
    """What :func:`store_audits` wrote: every answer with its run id, and the two policies' hashes."""

    answers: list[tuple[str, AnswerOut]]
    policy_sha: str
    permissive_sha: str
    received: dict[str, set[str]]  # service.name -> the trace ids received under it


def _shift(text: str, hours: int) -> str:
    return re.sub(
        r'"(start|end)TimeUnixNano":"(\d+)"',
        lambda m: f'"{m[1]}TimeUnixNano":"{int(m[2]) - hours * HOUR_NS}"',
        text,
    )


def trace_file(name: str, directory: Path) -> Path:
    """Scenario ``name``'s OpenInference OTLP JSON, shifted, typed and (when received) renamed."""
    hours, question_type = SCENARIOS[name]
    text = _shift((FIXTURES / name / "openinference.otlp.jsonl").read_text(encoding="utf-8"), hours)
    typed = (
        '"attributes":[' + json.dumps({"key": QUESTION_TYPE, "value": {"stringValue": question_type}}) + ","
    )
    text = text.replace('"attributes":[', typed)
    service = RECEIVED.get(name, FIXTURE_SERVICE)
    text = text.replace(f'"stringValue":"{FIXTURE_SERVICE}"', f'"stringValue":"{service}"')
    path = directory / f"{name}.otlp.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def store_audits(db_url: str, directory: Path) -> Stored:
    """Audit the scenarios into ``db_url`` and receive two of them as OTLP."""
    directory.mkdir(parents=True, exist_ok=True)
    upgrade(db_url)  # a PostgreSQL store is migrated on purpose, never on open
    policy_text = (ROOT / "policies" / "default.toml").read_text(encoding="utf-8")
    policy = parse_policy(policy_text + f'\n[answers]\nquestion_type_attribute = "{QUESTION_TYPE}"\n')
    paths = {name: trace_file(name, directory) for name in SCENARIOS}
    first = audit(list(paths.values()), policy=policy, db_url=db_url)
    permissive = load_policy("permissive")
    second = audit([paths[PERMISSIVE_SCENARIO]], policy=permissive, db_url=db_url)
    readers = {kind: get_adapter(f"otlp-{kind}") for kind in ("json", "proto")}
    received: dict[str, set[str]] = {}
    with Store(db_url) as store:
        intake = Intake(store)
        for name, service in RECEIVED.items():
            kind = "proto" if name in RECEIVED_AS_PROTOBUF else "json"
            reader = readers[kind]
            assert isinstance(reader, SpanReceiver)
            for line in paths[name].read_bytes().splitlines():
                if line.strip():
                    spans = reader.receive(as_protobuf(line) if kind == "proto" else line).spans
                    assert spans and all(
                        isinstance(s.record, bytes if kind == "proto" else str) for s in spans
                    )
                    intake.receive(spans)
                    received.setdefault(service, set()).update(s.trace_id for s in spans)
    answers = [(first.run.id, a) for a in first.answers] + [(second.run.id, a) for a in second.answers]
    return Stored(answers, policy.sha256, permissive.sha256, received)


def as_protobuf(line: bytes) -> bytes:
    """One OTLP JSON request as the protobuf body an exporter would send (ids from hex to bytes:
    ``json_format`` reads bytes fields as base64)."""
    request = json.loads(line)
    for resource_spans in request.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode("ascii")
    message = json_format.ParseDict(request, trace_service_pb2.ExportTraceServiceRequest())
    return bytes(message.SerializeToString())
