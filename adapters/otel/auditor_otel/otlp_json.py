"""Read OTLP JSON trace files: the Collector file exporter's JSON Lines, or one JSON document.

Follows the OTLP JSON mapping of ``open-telemetry/opentelemetry-proto`` v1.11.0
(``docs/specification.md``: hex ids, integer enums, int64 as decimal strings, lowerCamelCase
keys, unknown fields ignored) and the file layout of ``opentelemetry-collector-contrib``'s file
exporter (one ``ExportTraceServiceRequest`` per line, a trace spread over many lines, children
usually before parents). Leniencies, each noted as a warning where it repairs something:
hex ids in any case, base64 ids, enum names, int64 as numbers, snake_case keys, an empty
``parentSpanId`` meaning "no parent", invalid UTF-8 (decoded with replacement), a leading
byte-order mark. A ``scopeSpans``, ``spans`` or ``events`` value that is not a list, and a line
nested too deeply to read, are problems on their line.

A line in the standard shape (lowerCamelCase keys only) is decoded straight into structs by
:mod:`auditor_otel.otlp_typed`, which gives the very spans this module's reader gives; any other
line is read by this module's reader (dicts, every field under its two names, repairs and
complaints), as before.

JSON Lines are streamed one line at a time: after each line, the traces that are complete (root
span present, every parent present; see :mod:`auditor_otel.collect` for the rule, late spans and
the buffer cap) are yielded and freed, so memory does not grow with the file. Only a multi-line
(pretty-printed) document is read whole (it is one request, or a few concatenated ones); its
traces are yielded after each top-level object. Bad lines are skipped with a
:class:`~auditor.trace.Problem` naming the line.
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Generator, Iterator
from typing import Any, BinaryIO

from auditor.trace import BodyCheck, Problem, ReceivedBatch, Severity, Trace, loads_fast

from . import ids
from .anyvalue import as_int, decode_json_attributes
from .collect import MAX_OPEN_SPANS, QUIET_BATCHES, TraceCollector
from .otlp_typed import typed_spans
from .spans import STATUS_NAMES as _STATUS_NAMES
from .spans import RawEvent, RawSpan

FORMAT = "otlp-json"
_TOO_DEEP = "JSON nested too deeply to read (about 1,000 levels)"


def _get(obj: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    return None


def _list(obj: dict[str, Any], *names: str) -> list[Any]:
    value = _get(obj, *names)
    return value if isinstance(value, list) else []


def _members(obj: dict[str, Any], where: str, *names: str) -> tuple[list[Any], str | None]:
    """The list under the first of ``names``, and a complaint when it is there but not a list."""
    value = _get(obj, *names)
    if value is None or isinstance(value, list):
        return value or [], None
    return [], f"{where}{names[0]} is {_json_type(value)}, not a list; its spans are skipped"


def _json_type(value: Any) -> str:
    """A JSON value's type in JSON's words, with its article ("an object")."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an object" if isinstance(value, dict) else "a value"


def _status(span: dict[str, Any]) -> tuple[int, str | None]:
    status = span.get("status")
    if not isinstance(status, dict):
        return 0, None
    code = status.get("code", 0)
    number = _STATUS_NAMES.get(code.upper(), as_int(code)) if isinstance(code, str) else as_int(code)
    message = status.get("message")
    return (number if number in (0, 1, 2) else 0), (message if isinstance(message, str) else None)


def _get2(obj: dict[str, Any], name: str, other: str) -> Any:
    """:func:`_get` of two names (the camelCase one first), without its loop."""
    value = obj.get(name, _ABSENT)
    return obj.get(other) if value is _ABSENT else value


_ABSENT = object()


def raw_span(span: dict[str, Any], scope: str, line: int | None) -> RawSpan:
    """One JSON span object as a :class:`RawSpan` (bad fields become notes)."""
    notes: list[str] = []
    trace_id, _ = ids.from_text(_get2(span, "traceId", "trace_id"), 16)
    span_id, _ = ids.from_text(_get2(span, "spanId", "span_id"), 8)
    parent_id, parent_ok = ids.from_text(_get2(span, "parentSpanId", "parent_span_id"), 8)
    if not parent_ok:
        notes.append("parentSpanId is not a valid id; span treated as a root")
    name = span.get("name")
    if not isinstance(name, str):
        name = ""
    attributes = decode_json_attributes(span.get("attributes"), notes)
    events = []
    raw_events, complaint = _members(span, "", "events")
    if complaint is not None:
        notes.append(complaint.replace("its spans are", "the events are"))
    for event in raw_events:
        if not isinstance(event, dict):
            notes.append("event is not an object; dropped")
            continue
        event_name = event.get("name")
        events.append(
            RawEvent(
                name=event_name if isinstance(event_name, str) else "",
                time_ns=as_int(_get2(event, "timeUnixNano", "time_unix_nano")),
                attributes=decode_json_attributes(event.get("attributes"), notes),
            )
        )
    code, message = _status(span)
    return RawSpan(
        trace_id=trace_id or "",
        span_id=span_id or "",
        parent_id=parent_id,
        name=name,
        start_ns=as_int(_get2(span, "startTimeUnixNano", "start_time_unix_nano")),
        end_ns=as_int(_get2(span, "endTimeUnixNano", "end_time_unix_nano")),
        status_code=code,
        status_message=message,
        attributes=attributes,
        events=events,
        scope=scope,
        line=line,
        notes=notes,
    )


def raw_spans(request: Any, line: int | None) -> Iterator[RawSpan | str]:
    """The spans of one ``ExportTraceServiceRequest`` object; a str is a structural complaint."""
    if isinstance(request, list):
        for item in request:
            yield from raw_spans(item, line)
        return
    if not isinstance(request, dict):
        yield f"expected an ExportTraceServiceRequest object, found {type(request).__name__}"
        return
    resource_spans = _get(request, "resourceSpans", "resource_spans")
    if not isinstance(resource_spans, list):
        yield "no resourceSpans list; not an OTLP traces record"
        return
    for resource in resource_spans:
        if not isinstance(resource, dict):
            yield "a resourceSpans entry is not an object; skipped"
            continue
        scopes, complaint = _members(
            resource, "resourceSpans[].", "scopeSpans", "scope_spans", "instrumentationLibrarySpans"
        )
        if complaint is not None:
            yield complaint
        for scope_spans in scopes:
            if not isinstance(scope_spans, dict):
                yield "a scopeSpans entry is not an object; skipped"
                continue
            scope = _get(scope_spans, "scope", "instrumentationLibrary")
            scope_name = scope.get("name") if isinstance(scope, dict) else None
            spans, complaint = _members(scope_spans, "scopeSpans[].", "spans")
            if complaint is not None:
                yield complaint
            for span in spans:
                if not isinstance(span, dict):
                    yield "a span is not an object; skipped"
                    continue
                yield raw_span(span, scope_name if isinstance(scope_name, str) else "", line)


def _decode(data: bytes, source: str, line: int | None) -> tuple[str, Problem | None]:
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        problem = Problem(
            file=source,
            line=line,
            severity=Severity.WARNING,
            reason=f"invalid UTF-8 at byte {exc.start}; decoded with replacement characters",
        )
        return data.decode("utf-8", errors="replace"), problem


def _looks_pretty(first: str) -> bool:
    text = first.strip()
    return (
        text in ("{", "[")
        or text.endswith(("{", "["))
        or (text.endswith(",") and text.count("{") != text.count("}"))
    )


class OtlpJsonAdapter:
    """OTLP JSON: Collector file-exporter JSON Lines, or one (possibly pretty-printed) document."""

    name = "otlp-json"
    description = "OTLP/JSON traces (Collector file exporter JSON Lines or a single document)"

    def sniff(self, first_bytes: bytes) -> bool:
        try:
            head = first_bytes.removeprefix(b"\xef\xbb\xbf").lstrip()
            if not head.startswith((b"{", b"[")):
                return False
            return b"resourceSpans" in head or b"resource_spans" in head
        except Exception:
            return False

    #: Streaming limits (see :mod:`auditor_otel.collect`); instance attributes may be changed.
    quiet_batches = QUIET_BATCHES
    max_open_spans = MAX_OPEN_SPANS

    def receive(self, body: bytes) -> ReceivedBatch:
        """One OTLP/HTTP JSON request body split into spans (:mod:`auditor_otel.receive`)."""
        from .receive import receive_json

        return receive_json(body)

    def check(self, body: bytes) -> BodyCheck:
        """What :meth:`receive` would find in ``body``, counted before the server answers."""
        from .receive import check_json

        return check_json(body)

    def parse(self, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]:
        collector = TraceCollector(
            source, FORMAT, quiet_batches=self.quiet_batches, max_open_spans=self.max_open_spans
        )
        lines: Iterator[tuple[int, bytes]] = enumerate(stream, start=1)
        first = next(((n, d) for n, d in lines if d.strip()), None)
        if first is None:
            return
        number, data = first
        if number == 1:
            data = data.removeprefix(b"\xef\xbb\xbf")
        if _looks_pretty(data.decode("utf-8", errors="replace")):
            whole = data + stream.read()
            if (yield from self._document(whole, number, source, collector)):
                yield from collector.finish()
                return
            # Not one document after all, but JSON Lines whose first line is broken.
            lines = enumerate(io.BytesIO(whole), start=number)
        else:
            lines = itertools.chain([(number, data)], lines)
        yield from self._lines(lines, source, collector)
        yield from collector.finish()

    def _lines(
        self, lines: Iterator[tuple[int, bytes]], source: str, collector: TraceCollector
    ) -> Iterator[Trace | Problem]:
        for number, data in lines:
            if not data or data.isspace():
                continue
            try:  # a line in the standard shape, read straight into structs
                spans = typed_spans(data, number)
            except ValueError:  # not surely read so: the general reader below
                pass
            else:
                for raw in spans:
                    yield from collector.add(raw, valid_text=True)
                yield from collector.complete()
                continue
            try:
                request = loads_fast(data)
            except ValueError:  # not surely read as json.loads would: read it so, with its messages
                text, problem = _decode(data, source, number)
                if problem is not None:
                    yield problem
                try:
                    request = json.loads(text)
                except RecursionError:
                    yield Problem(file=source, line=number, reason=f"{_TOO_DEEP}; skipped")
                    continue
                except ValueError as exc:
                    cut = "" if data.endswith(b"\n") else " (the last line looks truncated)"
                    yield Problem(
                        file=source, line=number, reason=f"line is not valid JSON: {exc}{cut}; skipped"
                    )
                    continue
            yield from self._request(request, number, source, collector)
            yield from collector.complete()

    def _document(
        self, data: bytes, first_line: int, source: str, collector: TraceCollector
    ) -> Generator[Trace | Problem, None, bool]:
        """Read one (or several concatenated) multi-line documents; False if the first one is not JSON."""
        text, problem = _decode(data, source, None)
        if problem is not None:
            yield problem
        decoder = json.JSONDecoder()
        pos = 0
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                return True
            try:
                request, end = decoder.raw_decode(text, pos)
            except (ValueError, RecursionError) as exc:
                if pos == 0 and b"resourceSpans" in data.split(b"\n", 1)[0]:
                    return False
                if pos == 0:
                    yield Problem(
                        file=source,
                        line=first_line - 1 + getattr(exc, "lineno", 1),
                        reason=f"document is not valid JSON: {exc}; nothing read",
                    )
                    return True
                yield Problem(
                    file=source,
                    line=first_line - 1 + getattr(exc, "lineno", 1),
                    reason=f"document is not valid JSON after its first object: {exc}; the rest is skipped",
                )
                return True
            yield from self._request(request, first_line + text.count("\n", 0, pos), source, collector)
            yield from collector.complete()
            pos = end

    def _request(
        self, request: Any, line: int | None, source: str, collector: TraceCollector
    ) -> Iterator[Problem]:
        for item in raw_spans(request, line):
            if isinstance(item, str):
                yield Problem(file=source, line=line, reason=item)
            else:
                yield from collector.add(item)
