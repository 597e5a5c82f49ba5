"""Verdicts sent to an OTLP endpoint as ``gen_ai.evaluation.result`` events, for ``auditor serve``.

The same events the span processor emits (:mod:`auditor_otel.events`), sent by the OpenTelemetry
SDK's own pipeline: a ``LoggerProvider`` with a ``BatchLogRecordProcessor`` over the OTLP/HTTP log
exporter (``opentelemetry-exporter-otlp-proto-http``), so any backend that takes OTLP logs (a
Collector, Phoenix, Langfuse, a vendor) receives each verdict parented to the answer's span.
``auditor serve`` finds this through the ``otlp-proto`` adapter
(:meth:`auditor_otel.otlp_proto.OtlpProtoAdapter.evaluation_exporter`), so the core never imports
OpenTelemetry.

Needs the ``events`` extra (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from auditor import __version__
from auditor.results import AnswerOut

from .events import emit_evaluation_events

#: The ``service.name`` of the events' resource: the auditor, not the audited application.
SERVICE_NAME = "trace-auditor"


class OtlpEvaluationExporter:
    """Sends each audited answer's evaluation events to ``endpoint`` (an OTLP/HTTP logs URL).

    Without ``headers``, the exporter reads the SDK's own variables (``OTEL_EXPORTER_OTLP_LOGS_HEADERS``,
    ``OTEL_EXPORTER_OTLP_HEADERS``), e.g. for a backend's API key.
    """

    def __init__(self, endpoint: str, headers: Mapping[str, str] | None = None) -> None:
        self.endpoint = endpoint
        resource = Resource.create({"service.name": SERVICE_NAME, "service.version": __version__})
        self._provider = LoggerProvider(resource=resource)
        self._provider.add_log_record_processor(
            BatchLogRecordProcessor(
                OTLPLogExporter(endpoint=endpoint, headers=dict(headers) if headers else None)
            )
        )
        self._logger = self._provider.get_logger("auditor.serve", __version__)

    def export(self, answers: Sequence[AnswerOut]) -> int:
        """Queue the events of ``answers`` (sent in batches by the SDK); returns how many."""
        return emit_evaluation_events(self._logger, answers)

    def flush(self, timeout_millis: int = 10_000) -> bool:
        return bool(self._provider.force_flush(timeout_millis))

    def shutdown(self) -> None:
        """Send what is queued and stop."""
        self._provider.shutdown()
