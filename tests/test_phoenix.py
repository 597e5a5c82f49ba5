"""``auditor audit --from phoenix://``: against a real Phoenix server, fed by a real agent.

One Phoenix server serves the module (``tests/support/phoenix.py``: ``arize-phoenix`` from its own
virtual environment, SQLite, loopback). The agent (``tests/support/phoenix_agent.py``) is a real
tool-using loop over the ``openai`` client, instrumented by ``openinference-instrumentation-openai``,
against the fake model server; its spans go to Phoenix over OTLP and, the same spans, to a file.

The expected verdicts come from reading the agent's inputs: the order system says A-1001 shipped
on 3 March 2026 with DHL (the first answer repeats it: supported) and that A-1002's new delivery
date is 9 May 2026 (the second answer says it was delivered on 2 May: contradicted; the 10% refund
is in no source: absent).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from tests.support import phoenix_agent
from tests.support.fake_openai import FakeOpenAI
from tests.support.phoenix import PhoenixServer, ensure_venv

PROJECT = "order-support"


@dataclass
class Fed:
    server: PhoenixServer
    file: Path  # the agent's spans, exported to a file as well
    spans: list[dict[str, Any]]  # the file's spans (OTLP JSON), to pick times from

    def url(self, project: str = PROJECT) -> str:
        return f"phoenix://127.0.0.1:{self.server.port}/{project}"


def _file_spans(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [s for r in lines for rs in r["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


@contextlib.contextmanager
def _phoenix(url: str) -> Iterator[Any]:
    """Phoenix's own client, its connections closed after use."""
    import httpx
    from phoenix.client import Client

    with httpx.Client(base_url=url, timeout=60) as http:
        yield Client(http_client=http)


@pytest.fixture(scope="module")
def fed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fed]:
    command = ensure_venv()
    server = PhoenixServer(command, tmp_path_factory.mktemp("phoenix")).start()
    try:
        file = tmp_path_factory.mktemp("agent") / "agent.otlp.jsonl"
        with FakeOpenAI() as model:
            phoenix_agent.script(model, phoenix_agent.TURNS)
            count = phoenix_agent.run_agent(model.base_url, server.url, PROJECT, file, phoenix_agent.TURNS)
        with _phoenix(server.url) as client:
            deadline = time.monotonic() + 60
            while _stored(client) < count:
                assert time.monotonic() < deadline, (
                    f"Phoenix did not store the {count} spans:\n{server.tail()}"
                )
                time.sleep(0.2)
        yield Fed(server, file, _file_spans(file))
    finally:
        server.stop()


def _stored(client: Any) -> int:
    """How many spans Phoenix holds for the project: none while its queue has not yet written the
    first batch, which creates the project (until then the project is a 404)."""
    import httpx

    try:
        return len(client.spans.get_spans(project_identifier=PROJECT, limit=1000))
    except httpx.HTTPStatusError as err:
        if err.response.status_code == 404:
            return 0
        raise


def _audit(*args: str) -> tuple[int, str, dict[str, Any] | None, str]:
    """``auditor audit ARGS --json -``: exit code, stdout's JSON, and stderr."""
    out = CliRunner().invoke(cli, ["audit", *args, "--no-store", "--json", "-"])
    try:
        result = json.loads(out.stdout)
    except ValueError:
        result = None
    return out.exit_code, out.stdout, result, out.stderr


def _times_to_micros(value: Any) -> Any:
    """Phoenix keeps times in microseconds, rounded; a file keeps nanoseconds, which the reader
    truncates to microseconds: the same instant may differ by one microsecond, nothing else may."""
    if isinstance(value, dict):
        return {k: _times_to_micros(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_times_to_micros(v) for v in value]
    if isinstance(value, str) and len(value) == 27 and value.endswith("Z") and value[10] == "T":
        return datetime.fromisoformat(value)
    return value


def _same(pulled: Any, exported: Any, path: str = "") -> list[str]:
    if isinstance(pulled, datetime) and isinstance(exported, datetime):
        return (
            [] if abs(pulled - exported) <= timedelta(microseconds=1) else [f"{path}: {pulled} != {exported}"]
        )
    if isinstance(pulled, dict) and isinstance(exported, dict):
        if pulled.keys() != exported.keys():
            return [f"{path}: keys {sorted(pulled.keys() ^ exported.keys())}"]
        return [d for k in pulled for d in _same(pulled[k], exported[k], f"{path}.{k}")]
    if isinstance(pulled, list) and isinstance(exported, list) and len(pulled) == len(exported):
        return [
            d
            for i, (p, e) in enumerate(zip(pulled, exported, strict=True))
            for d in _same(p, e, f"{path}[{i}]")
        ]
    return [] if pulled == exported else [f"{path}: {pulled!r} != {exported!r}"]


def _verdicts(result: dict[str, Any]) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    return {
        a["question"]: (a["status"], [(c["text"], c["verdict"]) for c in a["claims"] if not c["screened"]])
        for a in result["answers"]
    }


EXPECTED = {
    "Where is my order A-1001?": (
        "grounded",
        [("Order A-1001 shipped on 3 March 2026 with DHL", "supported")],
    ),
    "When will order A-1002 arrive?": (
        "not_grounded",
        [
            ("Order A-1002 was delivered on 2 May 2026", "contradicted"),
            ("You will get a 10% refund for the delay", "absent"),
        ],
    ),
}


@pytest.mark.phoenix_live
def test_pulled_answers_equal_the_audit_of_the_same_spans_exported_to_a_file(fed: Fed) -> None:
    code, _, pulled, err = _audit("--from", fed.url(), "--no-write-back")
    assert code == 0, err
    code, _, exported, err = _audit(str(fed.file))
    assert code == 0, err
    assert pulled is not None and exported is not None
    assert _verdicts(exported) == EXPECTED  # the file audit is right, from the inputs
    by_id = {a["answer_id"]: _times_to_micros(a) for a in exported["answers"]}
    assert [a["answer_id"] for a in pulled["answers"]] == list(by_id)  # same answers, in the order they ran
    for answer in pulled["answers"]:
        assert _same(_times_to_micros(answer), by_id[answer["answer_id"]]) == []
    for key in ("summary",):
        assert pulled[key] == exported[key]
    assert pulled["run"]["problems"] == exported["run"]["problems"] == []


def _annotations(fed: Fed, span_ids: list[str]) -> dict[tuple[str, str, str], dict[str, Any]]:
    with _phoenix(fed.server.url) as client:
        found = client.spans.get_span_annotations(span_ids=span_ids, project_identifier=PROJECT)
    return {(a["span_id"], a["name"], a["identifier"]): a for a in found}


@pytest.mark.phoenix_live
def test_verdicts_are_written_back_as_span_annotations_that_phoenix_returns(fed: Fed) -> None:
    code, _, result, err = _audit("--from", fed.url())
    assert code == 0, err
    assert result is not None and _verdicts(result) == EXPECTED
    answers = result["answers"]
    claims = sum(len(a["claims"]) for a in answers)
    assert f"Wrote {len(answers) + claims} annotation(s) on {len(answers)} answer span(s)" in err
    # Each answer's span is the model call that produced it, as in the exported file.
    llm_spans = {s["spanId"] for s in fed.spans if s["name"] == "ChatCompletion"}
    assert {a["span_id"] for a in answers} <= llm_spans

    run = result["run"]
    stored = _annotations(fed, [a["span_id"] for a in answers])
    assert len(stored) == len(answers) + claims
    for answer in answers:
        grounded = stored[(answer["span_id"], "auditor.groundedness", "")]
        assert grounded["result"]["label"] == answer["status"]
        assert grounded["result"]["score"] == answer["groundedness"]
        assert grounded["annotator_kind"] == "CODE"  # the offline judge
        meta = grounded["metadata"]
        assert meta["policy"]["sha256"] == run["policy"]["sha256"]
        assert meta["judge"] == run["judge"]
        assert meta["run_id"] == run["id"] and meta["answer_id"] == answer["answer_id"]
        assert run["policy"]["sha256"] in grounded["result"]["explanation"]
        for claim in answer["claims"]:
            written = stored[(answer["span_id"], "auditor.claim", claim["claim_id"])]
            assert written["result"]["label"] == claim["verdict"]
            assert written["result"]["score"] == (1.0 if claim["verdict"] == "supported" else 0.0)
            assert written["metadata"]["text"] == claim["text"]
            assert written["metadata"]["citations"] == claim["citations"]
            assert written["metadata"]["policy"]["sha256"] == run["policy"]["sha256"]

    # A second audit replaces them: the same count, now naming the second run.
    code, _, again, err = _audit("--from", fed.url())
    assert code == 0, err
    assert again is not None
    restored = _annotations(fed, [a["span_id"] for a in answers])
    assert len(restored) == len(stored)
    assert {a["metadata"]["run_id"] for a in restored.values()} == {again["run"]["id"]}


@pytest.mark.phoenix_live
def test_the_annotations_reach_phoenixs_dataframes(fed: Fed) -> None:
    code, _, result, err = _audit("--from", fed.url())
    assert code == 0, err
    assert result is not None
    # Phoenix's dataframe reader; its own use of pandas' deprecated ``inplace`` is not ours to fail on.
    with _phoenix(fed.server.url) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        frame = client.spans.get_span_annotations_dataframe(
            span_ids=[a["span_id"] for a in result["answers"]], project_identifier=PROJECT
        )
    rows = sorted(
        [str(i), n, label]
        for i, n, label in zip(frame.index, frame["annotation_name"], frame["result.label"], strict=True)
    )
    expected = sorted(
        [[a["span_id"], "auditor.groundedness", a["status"]] for a in result["answers"]]
        + [[a["span_id"], "auditor.claim", c["verdict"]] for a in result["answers"] for c in a["claims"]]
    )
    assert rows == expected


def _start(span: dict[str, Any]) -> datetime:
    """A span's start, rounded down to the microsecond (Phoenix may round it up: in the range)."""
    ns = int(span["startTimeUnixNano"])
    return datetime.fromtimestamp(ns // 1000 / 1e6, UTC)


@pytest.mark.phoenix_live
def test_since_and_until_pick_whole_traces(fed: Fed) -> None:
    code, _, exported, err = _audit(str(fed.file))
    assert code == 0 and exported is not None, err
    whole = {a["question"]: _times_to_micros(a) for a in exported["answers"]}
    first_trace = min(fed.spans, key=_start)["traceId"]
    later = [s for s in fed.spans if s["traceId"] != first_trace]
    assert later  # two traces
    answer_call = max((s for s in later if s["name"] == "ChatCompletion"), key=_start)
    # From the answer's model call on, only that span of the second trace starts in the range: the
    # rest of its trace (the tool's span, the evidence the answer is judged against) comes with it.
    since = _start(answer_call).isoformat()
    code, _, result, err = _audit("--from", fed.url(), "--no-write-back", "--since", since)
    assert code == 0 and result is not None, err
    assert _verdicts(result) == {"When will order A-1002 arrive?": EXPECTED["When will order A-1002 arrive?"]}
    assert _same(_times_to_micros(result["answers"][0]), whole["When will order A-1002 arrive?"]) == []
    until = _start(min(later, key=_start)).isoformat()
    code, _, result, err = _audit("--from", fed.url(), "--no-write-back", "--until", until)
    assert code == 0 and result is not None, err
    assert _verdicts(result) == {"Where is my order A-1001?": EXPECTED["Where is my order A-1001?"]}
    assert _same(_times_to_micros(result["answers"][0]), whole["Where is my order A-1001?"]) == []


@pytest.mark.phoenix_live
def test_an_empty_range_and_an_unknown_project_are_one_line_each(fed: Fed) -> None:
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    code, stdout, _, err = _audit("--from", fed.url(), "--since", future)
    assert code == 2 and stdout == ""
    assert "no spans between" in err and "nothing to audit" in err and "Traceback" not in err
    code, _, _, err = _audit("--from", fed.url("no-such-project"))
    assert code == 2 and "has no project 'no-such-project'" in err and "Traceback" not in err


# ---- without a server ----


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--from", "phoenix://127.0.0.1:6006/p", "x.jsonl"], "either TRACES or --from"),
        ([], "or --from URL"),
        (["x.jsonl", "--since", "2026-01-01"], "--since and --until select traces of a --from source"),
        (["--from", "phoenix://127.0.0.1:6006/p", "--since", "yesterday"], "is not an ISO 8601 time"),
        (["--from", "phoenix:///p"], "expected SCHEME://HOST:PORT/NAME"),
        (
            ["--from", "nosuch://host:1/p"],
            "no installed trace source reads nosuch:// URLs. Installed: ",
        ),
    ],
)
def test_source_usage_errors_are_one_line(args: list[str], says: str) -> None:
    out = CliRunner().invoke(cli, ["audit", *args, "--no-store"])
    assert out.exit_code == 2
    assert says in out.output
    assert "Traceback" not in out.output


def test_an_unknown_scheme_lists_the_installed_sources() -> None:
    out = CliRunner().invoke(cli, ["audit", "--from", "nosuch://host:1/p", "--no-store"])
    assert out.exit_code == 2
    listed = out.output.split("Installed: ", 1)[1].split(" (", 1)[0]
    assert {"phoenix://", "phoenix+https://"} <= set(listed.split(", "))


def test_an_unreachable_server_is_one_line() -> None:
    from tests.support.phoenix import free_port

    out = CliRunner().invoke(cli, ["audit", "--from", f"phoenix://127.0.0.1:{free_port()}/p", "--no-store"])
    assert out.exit_code == 2
    assert "cannot reach Phoenix at http://127.0.0.1:" in out.output


def test_without_the_phoenix_client_one_line_names_the_extra(tmp_path: Path) -> None:
    # The client's package is hidden (a None in sys.modules makes its import fail, as when it is not
    # installed); everything else is the real command.
    code = (
        "import sys; sys.modules['phoenix'] = None\n"
        "from auditor.cli import main\n"
        "sys.argv = ['auditor', 'audit', '--from', 'phoenix://127.0.0.1:6006/default', '--no-store']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "Error: phoenix://127.0.0.1:6006/default: reading Phoenix needs its client: "
        "pip install 'auditor-otel[phoenix]'."
    ]
