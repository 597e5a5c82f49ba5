"""``auditor audit --from mlflow://``: against a real MLflow tracking server, fed by a real agent.

The tests marked ``mlflow_live`` share one MLflow server (``tests/support/mlflow_server.py``:
``mlflow`` from its own virtual environment, a SQLite backend store, loopback). The agent (``tests/support/mlflow_agent.py``)
is a real tool-using loop over the ``openai`` client against the scripted model, traced by MLflow
itself (``mlflow.openai.autolog()``, ``mlflow.trace`` on the tools and the loop) into the server;
MLflow's dual export sends the very same spans over OTLP to a file (``tests/support/otlp_sink.py``).

The expected answers and evidence come from ``tests/support/frameworks/scenarios.json``, the
agent's script and its tools' data: each answer restates its tools' results (supported), except
``stock_error``'s, whose only tool call failed (its result is excluded evidence: absent).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from tests.conftest import ROOT
from tests.support.frameworks.scenarios import scenarios, tool_text
from tests.support.mlflow_server import MlflowServer, ensure_venv, free_port, quiet_env
from tests.support.otlp_sink import OtlpSink

EXPERIMENT = "support-agent"
#: The verdict of every claim of each scenario's answer, read off its script: the answer restates
#: its tools' results, but ``stock_error``'s tool call failed, so nothing admitted supports it.
VERDICTS = {s.question: "absent" if s.name == "stock_error" else "supported" for s in scenarios()}


@dataclass
class Fed:
    server: MlflowServer
    file: Path  # the same spans, as MLflow's OTLP exporter sent them

    def url(self, experiment: str = EXPERIMENT) -> str:
        return f"mlflow://127.0.0.1:{self.server.port}/{experiment}"


def _client(fed: Fed) -> Any:
    """MLflow's own tracing client (``mlflow-tracing``, in the test extra), its telemetry off."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from mlflow.tracing.client import TracingClient

    return TracingClient(fed.server.url)


@pytest.fixture(scope="module")
def fed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fed]:
    command = ensure_venv()
    server = MlflowServer(command, tmp_path_factory.mktemp("mlflow")).start()
    try:
        file = tmp_path_factory.mktemp("agent") / "agent.otlp.pb"
        env = quiet_env()
        with OtlpSink(file) as sink:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tests.support.mlflow_agent",
                    "--tracking-uri",
                    server.url,
                    "--experiment",
                    EXPERIMENT,
                    "--otlp-endpoint",
                    sink.endpoint,
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{server.tail()}"
        assert sink.requests >= 1
        yield Fed(server, file)
    finally:
        server.stop()


def _audit(*args: str, store: bool = False) -> tuple[int, dict[str, Any] | None, str]:
    """``auditor audit ARGS --json -``: exit code, stdout's JSON, and stderr."""
    out = CliRunner().invoke(cli, ["audit", *args, "--store" if store else "--no-store", "--json", "-"])
    try:
        result = json.loads(out.stdout)
    except ValueError:
        result = None
    return out.exit_code, result, out.stderr


def _verdicts(result: dict[str, Any]) -> dict[str, set[str]]:
    """Each answer's claims' verdicts, by question."""
    return {
        a["question"]: {c["verdict"] for c in a["claims"] if not c["screened"]} for a in result["answers"]
    }


@pytest.mark.mlflow_live
def test_the_agents_exported_spans_read_as_it_ran(fed: Fed) -> None:
    """The file route first: MLflow's own span attributes give every question, answer and tool result."""
    from auditor.evidence import EvidenceKind, reconstruct
    from auditor.trace import read_traces

    read = read_traces([fed.file])
    assert read.problems == []
    answers = reconstruct(read.traces)
    expected = {s.question: s for s in scenarios()}
    assert sorted(a.question or "" for a in answers) == sorted(expected)
    for answer in answers:
        scenario = expected[answer.question or ""]
        assert answer.text.strip() == scenario.answer
        calls = [c for step in scenario.steps for c in step.get("tool_calls", [])]
        tools = [e for e in answer.evidence if e.kind is EvidenceKind.TOOL_RESULT]
        # Each tool result's text is the tool's output, then the call it answered.
        assert sorted((e.name, e.text) for e in tools) == sorted(
            (c["name"], f"{tool_text(c['name'], **c['arguments'])}\n(called as {c['name']}({_args(c)}))")
            for c in calls
        )


def _args(call: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in call["arguments"].items())


@pytest.mark.mlflow_live
def test_pulled_answers_equal_the_audit_of_the_same_spans_exported_to_a_file(fed: Fed) -> None:
    code, pulled, err = _audit("--from", fed.url(), "--no-write-back")
    assert code == 0, err
    code, exported, err = _audit(str(fed.file))
    assert code == 0, err
    assert pulled is not None and exported is not None
    assert _verdicts(exported) == {q: {v} for q, v in VERDICTS.items()}
    assert [a["answer_id"] for a in pulled["answers"]] == [a["answer_id"] for a in exported["answers"]]
    assert pulled["answers"] == exported["answers"]
    assert pulled["summary"] == exported["summary"]
    assert pulled["run"]["problems"] == exported["run"]["problems"] == []


@pytest.mark.mlflow_live
def test_every_page_of_traces_is_read(fed: Fed, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two traces a page: the five come in three pages, oldest first, none twice."""
    from auditor_otel.sources import mlflow as source

    monkeypatch.setattr(source, "PAGE", 2)
    code, paged, err = _audit("--from", fed.url(), "--no-write-back")
    assert code == 0, err
    code, exported, err = _audit(str(fed.file))
    assert code == 0, err
    assert paged is not None and exported is not None
    assert [a["answer_id"] for a in paged["answers"]] == [a["answer_id"] for a in exported["answers"]]
    assert len(paged["answers"]) == len(VERDICTS)


@pytest.mark.mlflow_live
def test_since_and_until_select_traces_by_their_start(fed: Fed) -> None:
    client = _client(fed)
    infos = sorted(
        client.search_traces(locations=[_experiment_id(fed)], max_results=100, include_spans=False),
        key=lambda t: t.info.request_time,
    )
    assert len(infos) == len(VERDICTS)
    third = infos[2].info.request_time  # milliseconds
    since = datetime.fromtimestamp(third / 1000, tz=UTC).isoformat()
    code, result, err = _audit("--from", fed.url(), "--since", since, "--no-write-back")
    assert code == 0, err
    assert result is not None
    assert [a["trace_id"] for a in result["answers"]] == [
        t.info.trace_id.removeprefix("tr-") for t in infos[2:]
    ]
    code, result, err = _audit("--from", fed.url(), "--until", since, "--no-write-back")
    assert code == 0, err
    assert result is not None
    assert [a["trace_id"] for a in result["answers"]] == [
        t.info.trace_id.removeprefix("tr-") for t in infos[:2]
    ]
    code, _, err = _audit("--from", fed.url(), "--since", "2100-01-01")
    assert code == 2
    assert "nothing to audit" in err and "Traceback" not in err


def _experiment_id(fed: Fed) -> str:
    return str(_client(fed).store.get_experiment_by_name(EXPERIMENT).experiment_id)


def _stored_rows(run_id: str) -> list[dict[str, Any]]:
    out = CliRunner().invoke(cli, ["export", run_id])
    assert out.exit_code == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def _assessments(fed: Fed, trace_ids: set[str]) -> list[Any]:
    client = _client(fed)
    return [a for t in sorted(trace_ids) for a in client.get_trace_info(f"tr-{t}").assessments or []]


@pytest.mark.mlflow_live
def test_verdicts_are_logged_as_mlflow_assessments_that_equal_the_stored_ones(fed: Fed) -> None:
    code, result, err = _audit("--from", fed.url(), store=True)
    assert code == 0, err
    assert result is not None
    run = result["run"]
    answers = result["answers"]
    claims = sum(len(a["claims"]) for a in answers)
    assert f"Wrote {len(answers) + claims} annotation(s) on {len(answers)} answer span(s)" in err

    # The stored verdicts, read back from the auditor's store.
    rows = _stored_rows(run["id"])
    stored_claims = {(r["trace_id"], r["claim_id"]): r["verdict"] for r in rows if not r["screened"]}
    stored_answers = {(r["trace_id"], r["answer_id"]): r["answer_grounded"] for r in rows}
    assert _verdicts(result) == {q: {v} for q, v in VERDICTS.items()}
    assert len(stored_claims) == claims

    # What MLflow's own client returns for those traces.
    found = _assessments(fed, {r["trace_id"] for r in rows})
    ours = [a for a in found if a.name.startswith("auditor.")]
    assert len(ours) == len(answers) + claims
    spans = {a["answer_id"]: a["span_id"] for a in answers}
    logged_claims = {}
    logged_answers = {}
    for a in ours:
        trace = a.trace_id.removeprefix("tr-")
        assert a.span_id == spans[a.metadata["answer_id"]]  # on the answer's own span
        assert a.source.source_type == "CODE" and a.source.source_id == "trace-auditor offline"
        assert json.loads(a.metadata["policy"])["sha256"] == run["policy"]["sha256"]
        assert json.loads(a.metadata["judge"]) == run["judge"]
        assert a.metadata["run_id"] == run["id"]
        if a.name == "auditor.claim":
            logged_claims[(trace, a.metadata["claim_id"])] = a.feedback.value
            assert a.rationale.startswith(f'Claim: "{a.metadata["text"]}"')
        else:
            assert a.name == "auditor.groundedness"
            logged_answers[(trace, a.metadata["answer_id"])] = a.feedback.value == "grounded"
            assert run["policy"]["sha256"] in a.rationale
    assert logged_claims == stored_claims
    assert logged_answers == stored_answers

    # A second audit replaces them: the same count, now naming the second run.
    code, again, err = _audit("--from", fed.url())
    assert code == 0, err
    assert again is not None
    ours = [a for a in _assessments(fed, {r["trace_id"] for r in rows}) if a.name.startswith("auditor.")]
    assert len(ours) == len(answers) + claims
    assert {a.metadata["run_id"] for a in ours} == {again["run"]["id"]}


@pytest.mark.mlflow_live
def test_an_unknown_experiment_is_one_line(fed: Fed) -> None:
    code, result, err = _audit("--from", fed.url("no-such-experiment"))
    assert code == 2 and result is None
    assert "has no experiment 'no-such-experiment'" in err
    assert "Traceback" not in err


def test_without_the_mlflow_extra_one_line_names_it(tmp_path: Path) -> None:
    """No ``mlflow-tracing`` installed (its import blocked): one line naming the extra, exit 2."""
    code = (
        "import sys\n"
        "sys.modules['mlflow'] = None  # as if mlflow-tracing were not installed\n"
        "from auditor.cli import cli\n"
        "cli(['audit', '--from', 'mlflow://127.0.0.1:9/agent', '--no-store'])\n"
    )
    env = {**os.environ, "AUDITOR_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [lines[-1]], done.stderr  # one line
    assert "pip install 'auditor-otel[mlflow]'" in lines[-1]
    assert "Traceback" not in done.stderr


def test_a_server_that_does_not_answer_is_one_line_at_once() -> None:
    """Nothing listens on the port: one line, exit 2, without MLflow's minutes of retries."""
    url = f"mlflow://127.0.0.1:{free_port()}/agent"
    started = time.monotonic()
    code, result, err = _audit("--from", url)
    assert code == 2 and result is None
    assert f"{url}: cannot reach MLflow at http://127.0.0.1:" in err
    assert "is the server running?" in err and "Traceback" not in err
    assert time.monotonic() - started < 30
