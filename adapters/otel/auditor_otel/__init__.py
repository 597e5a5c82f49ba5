"""OpenTelemetry adapters for trace-auditor.

``otlp-json`` and ``otlp-proto`` read OTLP trace files (registered in the ``auditor.adapters``
entry-point group); the conventions they understand are OpenTelemetry GenAI (current and older
forms), OpenInference and OpenLLMetry, detected per span.
"""

from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_proto import OtlpProtoAdapter

__all__ = ["OtlpJsonAdapter", "OtlpProtoAdapter"]
