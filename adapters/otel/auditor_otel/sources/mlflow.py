"""``mlflow://HOST:PORT/EXPERIMENT``: audit the traces an MLflow tracking server holds, and give the
verdicts back as MLflow assessments.

Read and written through MLflow's own tracing client (``mlflow-tracing``, the ``mlflow`` extra of
``auditor-otel``; imported only when an ``mlflow://`` URL is named):

- ``pull`` finds the experiment by name (or id), searches its traces (``TracingClient.search_traces``,
  page by page) whose start time (``timestamp_ms``) is in the range, and writes every span of them
  as OTLP JSON lines. The spans' attributes are written as MLflow stored them (``mlflow.spanType``,
  ``mlflow.spanInputs``, ``mlflow.spanOutputs`` as JSON text), so the file reads exactly as the
  spans the application exported over OTLP would (:mod:`auditor_otel.conventions.mlflow`).
- ``write_back`` logs :func:`auditor.sources.verdict_annotations` as feedback assessments
  (MLflow's ``Feedback``, through its tracing client) on each answer's span: ``auditor.groundedness`` (value: the answer's
  status) and one ``auditor.claim`` per judged claim (value: its verdict), each with the judge's
  reasoning as the rationale, the judge as the source (``LLM_JUDGE`` for a model, ``CODE`` for the
  offline judge) and the rest (score, claim id, quotes, policy SHA-256, run id) as metadata, JSON
  text where not a string (MLflow keeps metadata values as strings). The auditor's assessments an
  earlier write-back left on the same spans are deleted first, so a re-audit replaces them.

The URL: ``mlflow://HOST:PORT/EXPERIMENT`` over HTTP (``mlflow+https://`` for TLS; a server behind
a proxy path is ``mlflow://HOST:PORT/PATH/EXPERIMENT``). MLflow's own environment variables
authenticate (``MLFLOW_TRACKING_TOKEN``, ``MLFLOW_TRACKING_USERNAME`` / ``_PASSWORD``). MLflow's
usage telemetry is switched off for the process unless the user set ``MLFLOW_DISABLE_TELEMETRY``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError
from auditor.sources import Annotation, SourceURL, WriteBack, parse_source_url, verdict_annotations
from auditor_otel.sources.otlp_file import STATUS_CODES, PulledSpan, write_otlp_json

if TYPE_CHECKING:
    from auditor.results import AuditResult

#: Traces per page of ``search_traces`` (the server's cap is 500).
PAGE = 500
#: MLflow's prefix of a trace id made from an OpenTelemetry trace id (``tr-<32 hex>``).
TRACE_PREFIX = "tr-"
#: Seconds to wait for the server's first answer (:func:`_reachable`).
CONNECT_TIMEOUT = 10.0
#: The prefix of the auditor's assessments' names (:data:`auditor.sources.ANNOTATION_PREFIX`).
PREFIX = "auditor."


def _hex(value: Any) -> str | None:
    """An id of :meth:`mlflow.entities.Span.to_dict` (base64 of the OTel bytes) as lower-case hex."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return base64.b64decode(value, validate=True).hex()
    except ValueError:
        return value.lower()


def pulled_span(span: dict[str, Any]) -> PulledSpan:
    """One span of an MLflow trace (``Span.to_dict()``: the attributes as stored) in OTLP's terms."""
    status = span.get("status") or {}
    code = str(status.get("code") or "UNSET").upper().removeprefix("STATUS_CODE_")
    return PulledSpan(
        trace_id=_hex(span.get("trace_id")) or "",
        span_id=_hex(span.get("span_id")) or "",
        parent_id=_hex(span.get("parent_span_id")),
        name=span.get("name") or "",
        start_ns=int(span.get("start_time_unix_nano") or 0),
        end_ns=int(span.get("end_time_unix_nano") or span.get("start_time_unix_nano") or 0),
        status_code=STATUS_CODES.get(code, 0),
        status_message=status.get("message") or "",
        attributes=dict(span.get("attributes") or {}),
        events=[
            (e.get("name") or "", int(e.get("time_unix_nano") or 0), dict(e.get("attributes") or {}))
            for e in span.get("events") or []
        ],
    )


def _filter(since: datetime | None, until: datetime | None) -> str | None:
    bounds = []
    if since is not None:
        bounds.append(f"trace.timestamp_ms >= {int(since.timestamp() * 1000)}")
    if until is not None:
        bounds.append(f"trace.timestamp_ms < {int(until.timestamp() * 1000)}")
    return " AND ".join(bounds) or None


def _metadata(annotation: Annotation) -> dict[str, str]:
    fields: dict[str, Any] = {
        "label": annotation.label,
        "score": annotation.score,
        **({"identifier": annotation.identifier} if annotation.identifier else {}),
        **annotation.metadata,
    }
    return {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in fields.items()}


class MlflowSource:
    """The ``mlflow`` trace source (:class:`auditor.sources.TraceSource`)."""

    name = "mlflow"
    description = (
        "MLflow Tracing: an experiment's traces (mlflow://HOST:PORT/EXPERIMENT); verdicts as assessments"
    )

    def __init__(self) -> None:
        #: MLflow's trace id of each pulled OTel trace id (``tr-<hex>`` for MLflow's own traces).
        self._trace_ids: dict[str, str] = {}

    def pull(self, url: str, directory: Path, since: datetime | None, until: datetime | None) -> list[Path]:
        where = parse_source_url(url)
        client = _client(where)
        _reachable(where)
        with _errors(where):
            experiment_id = _experiment(client.store, where)
            spans = list(self._spans(client, experiment_id, _filter(since, until)))
        if not spans:
            return []
        path = directory / f"mlflow-{_safe(where.name)}.otlp.jsonl"
        write_otlp_json(spans, path, {"mlflow.experiment.name": where.name})
        return [path]

    def _spans(self, client: Any, experiment_id: str, filter_string: str | None) -> Iterator[PulledSpan]:
        token: str | None = None
        while True:
            page = client.search_traces(
                locations=[experiment_id],
                filter_string=filter_string,
                max_results=PAGE,
                order_by=["timestamp_ms ASC"],
                page_token=token,
            )
            for trace in page:
                for span in trace.data.spans:
                    pulled = pulled_span(span.to_dict())
                    self._trace_ids[pulled.trace_id] = trace.info.trace_id
                    yield pulled
            token = page.token
            if not token:
                return

    def write_back(self, url: str, result: AuditResult) -> WriteBack:
        where = parse_source_url(url)
        client = _client(where)
        from mlflow.entities import AssessmentSource, Feedback

        written = verdict_annotations(result)
        by_trace: dict[str, list[Annotation]] = {}
        for annotation in written:
            by_trace.setdefault(annotation.trace_id, []).append(annotation)
        judge = result.run.judge
        source_id = (
            "trace-auditor"
            + (f" {judge.kind}" if judge else "")
            + (f":{judge.model}" if judge and judge.model else "")
        )
        with _errors(where):
            for otel_id, items in by_trace.items():
                trace_id = self._trace_ids.get(otel_id, TRACE_PREFIX + otel_id)
                spans = {a.span_id for a in items}
                for old in client.get_trace_info(trace_id).assessments or []:
                    if old.name.startswith(PREFIX) and old.span_id in spans:  # an earlier write-back's
                        client.delete_assessment(trace_id, old.assessment_id)
                for a in items:
                    feedback = Feedback(
                        name=a.name,
                        value=a.label,
                        source=AssessmentSource(
                            source_type="LLM_JUDGE" if a.annotator == "LLM" else "CODE", source_id=source_id
                        ),
                        rationale=a.explanation,
                        metadata=_metadata(a),
                        span_id=a.span_id,
                    )
                    client.log_assessment(trace_id, feedback)
        return WriteBack(
            annotations=len(written),
            spans=len({(a.trace_id, a.span_id) for a in written}),
            where=f"MLflow experiment {where.name} at {_tracking_uri(where)}",
        )


def _reachable(where: SourceURL) -> None:
    """A server that does not answer at all is one line at once: MLflow's client retries a refused
    connection with backoff for minutes. Any HTTP answer (even 401 or 404) is a server."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{_tracking_uri(where)}/health", timeout=CONNECT_TIMEOUT):
            return
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise UsageError(
            f"{where.url}: cannot reach MLflow at {_tracking_uri(where)} ({reason}); is the server running?"
        ) from None


def _experiment(store: Any, where: SourceURL) -> str:
    """The experiment's id, by name or else by id (the tracking store's REST calls)."""
    experiment = store.get_experiment_by_name(where.name)
    if experiment is None and where.name.isdigit():
        with contextlib.suppress(Exception):  # not an id either: said below
            experiment = store.get_experiment(where.name)
    if experiment is None:
        raise UsageError(
            f"{where.url}: MLflow at {_tracking_uri(where)} has no experiment {where.name!r} "
            "(name or id; `mlflow experiments search` lists them)."
        )
    return str(experiment.experiment_id)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "experiment"


def _tracking_uri(where: SourceURL) -> str:
    tls = where.scheme.endswith("+https")
    port = f":{where.port}" if where.port else ""
    prefix = f"/{where.prefix}" if where.prefix else ""
    return f"{'https' if tls else 'http'}://{where.host}{port}{prefix}"


def _client(where: SourceURL) -> Any:
    """MLflow's tracing client on this server (``mlflow-tracing`` has no ``MlflowClient``)."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # nothing behind the user's back
    try:
        from mlflow.tracing.client import TracingClient
    except ImportError:
        raise UsageError(
            f"{where.url}: reading MLflow needs its client: pip install 'auditor-otel[mlflow]'."
        ) from None
    return TracingClient(_tracking_uri(where))


class _errors:
    """MLflow's and requests' exceptions as one line naming the server and what to do."""

    def __init__(self, where: SourceURL) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: object) -> None:
        if err is None or isinstance(err, UsageError):
            return
        from mlflow.exceptions import MlflowException

        at = f"MLflow at {_tracking_uri(self.where)}"
        if isinstance(err, MlflowException):
            message = str(err).splitlines()[0][:300] if str(err) else type(err).__name__
            if "Max retries exceeded" in str(err) or "Connection" in str(err):
                raise UsageError(f"{self.where.url}: cannot reach {at} ({message}).") from None
            raise UsageError(f"{self.where.url}: {at} answered: {message}") from None
        if isinstance(err, OSError):
            raise UsageError(f"{self.where.url}: cannot reach {at}: {err}.") from None
        return


#: The entry point (``auditor.sources``, name ``mlflow``).
SOURCE = MlflowSource()
