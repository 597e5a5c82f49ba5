"""``phoenix://HOST:PORT/PROJECT``: audit the traces an Arize Phoenix server holds, and annotate them.

Read and written through Phoenix's own client (``arize-phoenix-client``, the ``phoenix`` extra of
``auditor-otel``; imported only when a ``phoenix://`` URL is named) and its REST API:

- ``pull`` lists the project's spans that start in the range, then fetches every span of those
  traces (a trace is audited whole, even when it straddles a bound), and writes them as OTLP JSON
  lines. Phoenix keeps an OpenInference span's kind in its own ``span_kind`` field, not among the
  attributes: it is put back as ``openinference.span.kind`` so the file reads as the one the
  application exported. Phoenix keeps neither the resource nor the instrumentation scope, which
  the reader does not need.
- ``write_back`` logs :func:`auditor.sources.verdict_annotations` as span annotations on each answer's span
  (``auditor.groundedness`` and one ``auditor.claim`` per judged claim, keyed by the claim's id);
  Phoenix replaces an annotation with the same name, span and identifier, so a re-audit updates them.

The URL: ``phoenix://HOST:PORT/PROJECT`` over HTTP; a server behind a proxy path is
``phoenix://HOST:PORT/PATH/PROJECT``; ``phoenix+https://`` for TLS. ``PHOENIX_API_KEY`` from the
environment authenticates, as Phoenix's own tools do.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError
from auditor.sources import SourceURL, WriteBack, parse_source_url, verdict_annotations
from auditor_otel.sources.otlp_file import STATUS_CODES, PulledSpan, flatten, write_otlp_json

if TYPE_CHECKING:
    from auditor.results import AuditResult

#: Spans per page and trace ids per request (Phoenix's REST API caps a page at 1,000).
PAGE = 1000
TRACES_PER_REQUEST = 50
#: Annotations per request when writing back.
ANNOTATIONS_PER_REQUEST = 500
#: Phoenix's ``span_kind`` for a span that carried no OpenInference kind.
_NO_KIND = "UNKNOWN"


def _ns(moment: str) -> int:
    stamp = datetime.fromisoformat(moment)
    return int(stamp.timestamp()) * 1_000_000_000 + stamp.microsecond * 1000


def pulled_span(span: dict[str, Any]) -> PulledSpan:
    """One span of Phoenix's REST API (``GET /v1/projects/{project}/spans``) in OTLP's terms."""
    attributes = flatten(span.get("attributes") or {})
    kind = span.get("span_kind")
    if isinstance(kind, str) and kind and kind != _NO_KIND:
        attributes.setdefault("openinference.span.kind", kind)
    context = span["context"]
    return PulledSpan(
        trace_id=context["trace_id"],
        span_id=context["span_id"],
        parent_id=span.get("parent_id") or None,
        name=span.get("name") or "",
        start_ns=_ns(span["start_time"]),
        end_ns=_ns(span["end_time"]),
        status_code=STATUS_CODES.get(str(span.get("status_code", "UNSET")).upper(), 0),
        status_message=span.get("status_message") or "",
        attributes=attributes,
        events=[
            (e.get("name") or "", _ns(e["timestamp"]), flatten(e.get("attributes") or {}))
            for e in span.get("events") or []
        ],
    )


class PhoenixSource:
    """The ``phoenix`` trace source (:class:`auditor.sources.TraceSource`)."""

    name = "phoenix"
    description = (
        "Arize Phoenix: a project's traces (phoenix://HOST:PORT/PROJECT); verdicts as span annotations"
    )

    def pull(self, url: str, directory: Path, since: datetime | None, until: datetime | None) -> list[Path]:
        where = parse_source_url(url)
        with _client(where) as client, _errors(where):
            spans = list(_spans(client, where.name, since, until))
        if not spans:
            return []
        path = directory / f"phoenix-{_safe(where.name)}.otlp.jsonl"
        write_otlp_json(spans, path, {"openinference.project.name": where.name})
        return [path]

    def write_back(self, url: str, result: AuditResult) -> WriteBack:
        where = parse_source_url(url)
        records = [
            {
                "name": a.name,
                "span_id": a.span_id,
                "annotator_kind": a.annotator,
                "identifier": a.identifier,
                "result": {
                    "label": a.label,
                    **({"score": a.score} if a.score is not None else {}),
                    "explanation": a.explanation,
                },
                "metadata": a.metadata,
            }
            for a in verdict_annotations(result)
        ]
        with _client(where) as client, _errors(where):
            for start in range(0, len(records), ANNOTATIONS_PER_REQUEST):
                client.spans.log_span_annotations(
                    span_annotations=records[start : start + ANNOTATIONS_PER_REQUEST], sync=True
                )
        return WriteBack(
            annotations=len(records),
            spans=len({r["span_id"] for r in records}),
            where=f"Phoenix project {where.name} at {_base_url(where)}",
        )


def _spans(client: Any, project: str, since: datetime | None, until: datetime | None) -> Iterator[PulledSpan]:
    if since is None and until is None:
        for span in client.spans.get_spans(project_identifier=project, limit=2**62):
            yield pulled_span(span)
        return
    in_range = client.spans.get_spans(
        project_identifier=project, start_time=since, end_time=until, limit=2**62
    )
    trace_ids = list(dict.fromkeys(s["context"]["trace_id"] for s in in_range))
    for start in range(0, len(trace_ids), TRACES_PER_REQUEST):
        batch = trace_ids[start : start + TRACES_PER_REQUEST]
        for span in client.spans.get_spans(project_identifier=project, trace_ids=batch, limit=2**62):
            yield pulled_span(span)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "project"


def _base_url(where: SourceURL) -> str:
    tls = where.scheme.endswith("+https")
    port = f":{where.port}" if where.port else ""
    prefix = f"/{where.prefix}" if where.prefix else ""
    return f"{'https' if tls else 'http'}://{where.host}{port}{prefix}"


@contextmanager
def _client(where: SourceURL) -> Iterator[Any]:
    """Phoenix's client over an HTTP connection pool that is closed when done."""
    try:
        from phoenix.client import Client
    except ImportError:
        raise UsageError(
            f"{where.url}: reading Phoenix needs its client: pip install 'auditor-otel[phoenix]'."
        ) from None
    import httpx

    key = os.environ.get("PHOENIX_API_KEY")
    headers = {"authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(base_url=_base_url(where), headers=headers, timeout=60) as http:
        yield Client(http_client=http)


class _errors:
    """Phoenix's and httpx's exceptions as one line naming the server and what to do."""

    def __init__(self, where: SourceURL) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: object) -> None:
        if err is None:
            return
        import httpx

        at = f"Phoenix at {_base_url(self.where)}"
        if isinstance(err, httpx.HTTPStatusError):
            status = err.response.status_code
            if status == 404:
                raise UsageError(f"{self.where.url}: {at} has no project {self.where.name!r}.") from None
            if status in (401, 403):
                raise UsageError(
                    f"{self.where.url}: {at} refused the request ({status}): set PHOENIX_API_KEY."
                ) from None
            raise UsageError(f"{self.where.url}: {at} answered {status}: {err.response.text[:200]}") from None
        if isinstance(err, httpx.HTTPError):
            raise UsageError(f"{self.where.url}: cannot reach {at}: {err}.") from None
        return


#: The entry point (``auditor.sources``, name ``phoenix``).
SOURCE = PhoenixSource()
