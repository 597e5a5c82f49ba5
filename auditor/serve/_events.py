"""The verdicts of ``auditor serve`` sent back into the telemetry stream (``AUDITOR_SERVE_EVENTS_ENDPOINT``).

After each audit, every answer's ``gen_ai.evaluation.result`` events (the ones the span processor
emits: one per answer, one per judged claim, parented to the answer's span) go to the configured
OTLP/HTTP logs endpoint. The exporter is the OpenTelemetry SDK's, provided by the OTel adapter
(its ``otlp-proto`` adapter's ``evaluation_exporter``), so the core imports no OpenTelemetry. A
send never fails an audit: the SDK batches and retries in the background, and an exporter error is
logged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from auditor.errors import AuditorError, UsageError
from auditor.results import AnswerOut
from auditor.trace import get_adapter

logger = logging.getLogger(__name__)

#: The adapter that provides the exporter.
ADAPTER = "otlp-proto"


@runtime_checkable
class EvaluationExporter(Protocol):
    """Sends answers' evaluation events; ``shutdown`` sends what is queued and stops."""

    def export(self, answers: Sequence[AnswerOut]) -> int: ...

    def shutdown(self) -> None: ...


@runtime_checkable
class ProvidesEvaluationExporter(Protocol):
    """An adapter that can build an :class:`EvaluationExporter` for an OTLP endpoint."""

    def evaluation_exporter(self, endpoint: str, headers: dict[str, str] | None = None) -> Any: ...


class EventSender:
    """The server's one exporter; :meth:`send` is called by the workers after each audit."""

    def __init__(self, exporter: EvaluationExporter) -> None:
        self.exporter = exporter
        self.sent = 0

    def send(self, answers: Sequence[AnswerOut]) -> None:
        try:
            self.sent += self.exporter.export(answers)
        except Exception as err:  # the audit is stored: a telemetry failure must not undo it
            logger.warning("could not send evaluation events: %s: %s", type(err).__name__, err)

    def close(self) -> None:
        try:
            self.exporter.shutdown()
        except Exception as err:
            logger.warning("could not flush the evaluation events: %s: %s", type(err).__name__, err)


def event_sender(endpoint: str | None) -> EventSender | None:
    """The sender for ``endpoint`` (None when no endpoint is configured).

    Raises:
        UsageError: the OTel adapter, or its ``events`` extra, is not installed.
    """
    if not endpoint:
        return None
    try:
        adapter = get_adapter(ADAPTER)
    except AuditorError:
        adapter = None
    if not isinstance(adapter, ProvidesEvaluationExporter):
        raise UsageError(
            "AUDITOR_SERVE_EVENTS_ENDPOINT needs the OTel adapter: pip install 'auditor-otel[events]' "
            "(adapters/otel)."
        )
    try:
        exporter = adapter.evaluation_exporter(endpoint)
    except ImportError as err:
        raise UsageError(
            "AUDITOR_SERVE_EVENTS_ENDPOINT needs the OpenTelemetry SDK and OTLP/HTTP exporter: "
            f"pip install 'auditor-otel[events]' ({err})"
        ) from err
    return EventSender(exporter)
