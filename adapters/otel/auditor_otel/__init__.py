"""OpenTelemetry adapters for trace-auditor.

``otlp-json`` and ``otlp-proto`` read OTLP trace files (registered in the ``auditor.adapters``
entry-point group); the conventions they understand are OpenTelemetry GenAI (current and older
forms), OpenInference and OpenLLMetry, detected per span.

:class:`AuditSpanProcessor` (``auditor_otel.processor``) audits a live, instrumented application's
traces as they complete. It needs ``opentelemetry-sdk`` (``pip install 'auditor-otel[live]'``) and
is imported on first use, so reading files does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auditor_otel.otlp_json import OtlpJsonAdapter
from auditor_otel.otlp_proto import OtlpProtoAdapter

if TYPE_CHECKING:
    from auditor_otel.processor import AuditSpanProcessor

__all__ = ["AuditSpanProcessor", "OtlpJsonAdapter", "OtlpProtoAdapter"]


def __getattr__(name: str) -> Any:
    if name != "AuditSpanProcessor":
        raise AttributeError(f"module 'auditor_otel' has no attribute {name!r}")
    try:
        from auditor_otel.processor import AuditSpanProcessor
    except ImportError as err:
        raise ImportError(
            f"AuditSpanProcessor needs the OpenTelemetry SDK: pip install 'auditor-otel[live]' ({err})"
        ) from err
    return AuditSpanProcessor
