"""The OTel adapters are registered like any third party's and are chosen by sniffing."""

from __future__ import annotations

import json

from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_proto import OtlpProtoAdapter
from otel_samples.otlp import line, parse, span

from auditor.trace import TraceAdapter, detect_adapter, get_adapter, installed_adapters


def test_both_adapters_are_installed_through_entry_points() -> None:
    found = {a.name: a for a in installed_adapters() if a.distribution == "auditor-otel"}
    assert sorted(found) == ["otlp-json", "otlp-proto"]
    assert isinstance(found["otlp-json"].adapter, OtlpJsonAdapter)
    assert isinstance(found["otlp-proto"].adapter, OtlpProtoAdapter)
    assert all(isinstance(a.adapter, TraceAdapter) for a in found.values())
    assert get_adapter("otlp-json").description


def test_detection_routes_otlp_json_to_the_json_adapter() -> None:
    assert detect_adapter(line([span(1, "root")]).encode(), "x.jsonl").name == "otlp-json"
    pretty = json.dumps({"resourceSpans": []}, indent=2).encode()
    assert detect_adapter(pretty, "x.json").name == "otlp-json"


def test_bytes_attributes_stay_serialisable() -> None:
    root = span(1, "root")
    root["attributes"] = [{"key": "blob", "value": {"bytesValue": "AAEC"}}]
    traces, problems = parse(line([root]))
    assert problems == []
    assert traces[0].spans[0].attributes == {"blob": "AAEC"}
    assert '"blob":"AAEC"' in traces[0].model_dump_json()
