"""Regenerating trace fixtures with the real instrumentations still works and matches the repo.

Runs ``tests/support/gen_traces.py`` for two scenarios into a temporary directory and checks the
OTLP JSON lines, the binary OTLP request, the run tree and that ``expected.json`` is unchanged.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

TESTS_DIR = Path(__file__).resolve().parent
FIXTURES = TESTS_DIR / "fixtures"
SCENARIOS = ["multi_hop", "parallel_tools"]
FILES = [
    "openinference.otlp.jsonl",
    "openinference.otlp.pb",
    "openllmetry.otlp.jsonl",
    "runtree.json",
    "expected.json",
]


def _load_generator() -> ModuleType:
    name = "trace_auditor_tests_gen_traces"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, TESTS_DIR / "support" / "gen_traces.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _jsonl_spans(path: Path) -> list[dict]:
    spans = []
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) > 1, "spans should be spread over several export batches"
    for line in lines:
        request = json.loads(line)
        assert "resourceSpans" in request
        for rs in request["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                spans.extend(ss["spans"])
    return spans


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fixtures")
    _load_generator().generate(out, SCENARIOS)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_files_are_produced(regenerated: Path, scenario: str) -> None:
    for name in FILES:
        assert (regenerated / scenario / name).stat().st_size > 0, name


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_otlp_json_and_protobuf_agree(regenerated: Path, scenario: str) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans = _jsonl_spans(regenerated / scenario / "openinference.otlp.jsonl")
    request = ExportTraceServiceRequest()
    request.ParseFromString((regenerated / scenario / "openinference.otlp.pb").read_bytes())
    pb_spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert len(pb_spans) == len(spans) > 5
    assert Counter(s.span_id.hex() for s in pb_spans) == Counter(s["spanId"] for s in spans)
    for span in spans:
        assert len(span["traceId"]) == 32 and span["traceId"] == span["traceId"].lower()
        assert len(span["spanId"]) == 16
        int(span["traceId"], 16)
        assert isinstance(span["kind"], int)
        assert isinstance(span["startTimeUnixNano"], str)
    # children are exported before their parents
    order = {s["spanId"]: i for i, s in enumerate(spans)}
    assert any(order.get(s.get("parentSpanId", ""), -1) > i for i, s in enumerate(spans))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_openllmetry_capture(regenerated: Path, scenario: str) -> None:
    spans = _jsonl_spans(regenerated / scenario / "openllmetry.otlp.jsonl")
    names = {s["name"] for s in spans}
    assert any(n.startswith("execute_tool ") for n in names), names


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_runtree(regenerated: Path, scenario: str) -> None:
    runs = json.loads((regenerated / scenario / "runtree.json").read_text(encoding="utf-8"))
    types = Counter(r["run_type"] for r in runs)
    assert types["llm"] >= 2 and types["tool"] >= 1
    llm = next(r for r in runs if r["run_type"] == "llm")
    assert "messages" in llm["inputs"], "chat model runs keep LangChainTracer's message inputs"
    ids = {r["id"] for r in runs}
    assert all(r["parent_run_id"] in ids for r in runs if r["parent_run_id"])


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_expected_matches_committed(regenerated: Path, scenario: str) -> None:
    new = json.loads((regenerated / scenario / "expected.json").read_text(encoding="utf-8"))
    committed = json.loads((FIXTURES / scenario / "expected.json").read_text(encoding="utf-8"))
    assert new == committed


def test_all_committed_expected_match_definitions() -> None:
    gen = _load_generator()
    for scenario in gen.SCENARIOS:
        committed = json.loads((FIXTURES / scenario.name / "expected.json").read_text(encoding="utf-8"))
        assert gen.expected_for(scenario) == committed, scenario.name


def _string_leaves(value: object) -> list[str]:
    """All strings in a JSON value, descending into strings that hold JSON themselves."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            out.append(item)
            if item.strip()[:1] in ("[", "{"):
                with contextlib.suppress(ValueError):
                    stack.append(json.loads(item))
    return out


def _load_any(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines()]
    return json.loads(text)


@pytest.mark.parametrize("scenario", sorted(p.parent.name for p in FIXTURES.glob("*/expected.json")))
def test_committed_captures_contain_the_expected_evidence(scenario: str) -> None:
    expected = json.loads((FIXTURES / scenario / "expected.json").read_text(encoding="utf-8"))
    for capture in ("openinference.otlp.jsonl", "openllmetry.otlp.jsonl", "runtree.json"):
        leaves = _string_leaves(_load_any(FIXTURES / scenario / capture))
        blob = "\n".join(leaves)
        assert expected["session_id"] in leaves, capture
        for answer in expected["answers"]:
            assert answer["text"] in blob, capture
            for result in answer["tool_results"]:
                assert result["contains"] in blob, (capture, result)
                assert result["tool_call_id"] in leaves, (capture, result)
            for doc in answer["documents"]:
                assert doc["contains"] in blob, (capture, doc["id"])


def _hex_ids_to_base64(request: dict) -> dict:
    import base64

    for rs in request["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if sp.get(key):
                        sp[key] = base64.b64encode(bytes.fromhex(sp[key])).decode()
    return request


def _load_handmade() -> ModuleType:
    name = "trace_auditor_tests_handmade_traces"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, TESTS_DIR / "support" / "handmade_traces.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["genai_current", "genai_events", "openllmetry_indexed"])
def test_handmade_fixtures(name: str) -> None:
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    path = FIXTURES / "handmade" / f"{name}.otlp.jsonl"
    lines, expected = _load_handmade().BUILDERS[name]()
    assert path.read_text(encoding="utf-8") == lines, "regenerate with tests/support/handmade_traces.py"
    committed = json.loads((FIXTURES / "handmade" / f"{name}.expected.json").read_text(encoding="utf-8"))
    assert committed == expected
    n_spans = 0
    for line in lines.splitlines():
        request = ExportTraceServiceRequest()
        ParseDict(_hex_ids_to_base64(json.loads(line)), request)  # valid OTLP field names and types
        n_spans += sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    assert n_spans >= 4 and len(lines.splitlines()) >= 2
    blob = "\n".join(_string_leaves(_load_any(path)))
    for answer in expected["answers"]:
        assert answer["text"] in blob
        for result in answer["tool_results"]:
            assert result["contains"] in blob and result["tool_call_id"] in blob
