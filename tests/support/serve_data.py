"""Real stored audits for the server's pages and read API: fixture traces audited into a store.

Six fixture scenarios are audited with ``auditor.run.audit`` (offline judge), as ``auditor audit``
would store them, under a copy of the shipped default policy that reads the question type from a
span attribute; one scenario is audited again under the shipped ``permissive`` policy (a second
policy, and answers with nothing excluded). The copies are shifted in time so the answers span
several hours and two days, and two scenarios are also received as OTLP through
:class:`auditor.store.Intake`, one under another ``service.name``. Together they cover grounded,
not grounded, contradicted and refused answers, excluded evidence and claims only excluded
evidence would support.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

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
    reader = get_adapter("otlp-json")
    assert isinstance(reader, SpanReceiver)
    received: dict[str, set[str]] = {}
    with Store(db_url) as store:
        intake = Intake(store)
        for name, service in RECEIVED.items():
            for line in paths[name].read_bytes().splitlines():
                if line.strip():
                    spans = reader.receive(line).spans
                    intake.receive(spans)
                    received.setdefault(service, set()).update(s.trace_id for s in spans)
    answers = [(first.run.id, a) for a in first.answers] + [(second.run.id, a) for a in second.answers]
    return Stored(answers, policy.sha256, permissive.sha256, received)
