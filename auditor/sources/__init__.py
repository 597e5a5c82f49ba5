"""Trace sources: audit traces where they already live, and give the verdicts back there.

``auditor audit --from phoenix://HOST:PORT/PROJECT`` (or ``mlflow://HOST:PORT/EXPERIMENT``) names a
*source* by its URL's scheme. A source is found through the ``auditor.sources`` entry-point group
(the entry point's name is the scheme), so the core never imports a backend's client: the Phoenix
and MLflow sources ship in ``auditor-otel``
and are registered exactly as a third party's would be.

A source does two things (:class:`TraceSource`): it *pulls* a time range of traces into files that
an installed trace adapter reads (OTLP JSON lines, say), so pulled traces take exactly the reading
path of ``auditor audit FILE`` and their answers are the ones an audit of the same spans exported
to a file gives; and it *writes back* the verdicts, as :func:`verdict_annotations` lays them out, on each
answer's span in the backend.
"""

from __future__ import annotations

from auditor.sources._annotations import ANNOTATION_PREFIX, Annotation, verdict_annotations
from auditor.sources._audit import SourceAudit, audit_source
from auditor.sources._registry import (
    ENTRY_POINT_GROUP,
    SourceURL,
    TraceSource,
    WriteBack,
    get_source,
    installed_sources,
    parse_source_url,
)

__all__ = [
    "ANNOTATION_PREFIX",
    "ENTRY_POINT_GROUP",
    "Annotation",
    "SourceAudit",
    "SourceURL",
    "TraceSource",
    "WriteBack",
    "audit_source",
    "get_source",
    "installed_sources",
    "parse_source_url",
    "verdict_annotations",
]
