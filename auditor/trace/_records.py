"""The ``records`` adapter: RAG evaluation records (question, sources, answer) as traces.

Evaluation sets without traces hold one JSON object per line with a question, the passages the
system was given and the answer it wrote (a JSON array, CSV / TSV or Parquet of the same records is
handed to :mod:`auditor.trace._record_forms`). Two shapes are read:

- the labelled dev-set shape: ``id``, ``question``, ``sources: [{id, text, metadata}]``,
  ``answer`` (label fields such as ``labels``, ``answer_label`` or ``verdict`` are ignored here;
  :mod:`auditor.calibration` reads them);
- RAGAS columns: ``user_input``, ``retrieved_contexts`` (a list of strings), ``response``; the
  older ``question``, ``contexts``, ``answer`` names too. A context may also be an object with
  ``text`` (or ``page_content`` / ``content``), ``id`` and ``metadata``.

Each record becomes one trace: a ``record`` chain span holding a retriever span whose documents are
the sources (one :class:`~auditor.trace.Document` each, in order, so the policy sees them as
``retrieved_document`` evidence) and then an LLM span whose input is the question (a user message)
and whose output is the answer. Times are fixed and synthetic; only their order matters.

Trace ids are stable: the record's ``id`` lower-cased (``ragtruth:180``), or, with no ``id``,
``line-<n>-<digest of the line>``. The original id is kept in the span attribute ``record.id``,
with ``record.dataset`` and ``record.task_type`` when present. A line that is not JSON (or nested too
deeply to read), not an object, has no answer text, or repeats an id is skipped with a
:class:`~auditor.trace.Problem` naming the file and line; the rest is still read. A field of the
wrong type (a number for the question, an object for the sources, ...) is a warning naming it, and
``null`` counts as absent; invalid UTF-8 is replaced with U+FFFD (a warning), and each trace passes
:func:`~auditor.trace.repair_trace`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO

from auditor.text import short_digest
from auditor.trace._model import Document, Message, SourceRef, Span, SpanKind, Trace
from auditor.trace._problems import Problem, Severity
from auditor.trace._repair import repair_trace

FORMAT = "records"

ANSWER_KEYS = ("answer", "response")
QUESTION_KEYS = ("question", "user_input")
SOURCE_KEYS = ("sources", "retrieved_contexts", "contexts")
_TEXT_KEYS = ("text", "page_content", "content")

_BOM = b"\xef\xbb\xbf"
_BASE_TIME = datetime(2000, 1, 1, tzinfo=UTC)
_TICK = timedelta(milliseconds=1)


def _key(names: tuple[str, ...]) -> re.Pattern[bytes]:
    alternatives = b"|".join(n.encode() for n in names)
    return re.compile(rb'(?<!\\)"(?:' + alternatives + rb')"\s*:')


_SOURCES_RE = _key(SOURCE_KEYS)
_ANSWER_RE = _key(ANSWER_KEYS)
_QUESTION_RE = _key(QUESTION_KEYS)
_FOREIGN = (b'"resourceSpans"', b'"resource_spans"', b'"run_type"', b'"child_runs"')


def _first(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    """The first of ``keys`` the record has a value for (``null`` counts as absent)."""
    for key in keys:
        if record.get(key) is not None:
            return key, record[key]
    return None, None


def sniff_records(first_bytes: bytes) -> bool:
    """Whether the first JSONL object looks like an evaluation record.

    A complete first line must be an object with an answer key (``answer`` / ``response``) and a
    sources key (``sources`` / ``retrieved_contexts`` / ``contexts``). A first line cut off by the
    sniffing window (records carry long passages) is accepted when its visible part names a
    sources key and an answer or question key, and nothing of another trace format.
    """
    try:
        head = first_bytes.lstrip(b"\xef\xbb\xbf \t\r\n")
        if not head.startswith(b"{") or any(f in head for f in _FOREIGN):
            return False
        line, newline, _ = head.partition(b"\n")
        if newline or len(head) < 4096:
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if isinstance(data, dict):
                return _first(data, ANSWER_KEYS)[0] is not None and _first(data, SOURCE_KEYS)[0] is not None
            if newline:
                return False
        return _SOURCES_RE.search(line) is not None and (
            _ANSWER_RE.search(line) is not None or _QUESTION_RE.search(line) is not None
        )
    except Exception:  # the contract: sniff never raises
        return False


def _documents(key: str, value: Any) -> tuple[list[Document], list[str]]:
    """The documents of the sources value under ``key``, and what was wrong with it."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return [], [f"{key} is {_type(value)}, not a list; the record has no evidence"]
    docs: list[Document] = []
    issues: list[str] = []
    for index, item in enumerate(value, start=1):
        default_id = f"context_{index}"
        if isinstance(item, str):
            docs.append(Document.trusted(id=default_id, text=item))
            continue
        if not isinstance(item, dict):
            issues.append(f"{key} item {index} is {_type(item)}, not text or an object; skipped")
            continue
        name, text = _first(item, _TEXT_KEYS)
        if not isinstance(text, str):
            what = "has no text" if name is None else f"{name} is {_type(text)}, not text"
            issues.append(f"{key} item {index} {what}; skipped")
            continue
        metadata = item.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            issues.append(f"{key} item {index} metadata is {_type(metadata)}, not an object; ignored")
        raw_id = item.get("id")
        docs.append(
            Document.trusted(
                id=str(raw_id) if raw_id is not None else default_id,
                text=text,
                metadata=metadata if isinstance(metadata, dict) else {},
            )
        )
    return docs, issues


def record_trace(record: dict[str, Any], trace_id: str, source: str, line: int) -> tuple[Trace, list[str]]:
    """One record as a trace (see the module docstring); raises ``ValueError`` when it has no answer."""
    answer_key, answer = _first(record, ANSWER_KEYS)
    if answer_key is not None and not isinstance(answer, str):
        raise ValueError(f"{answer_key} is {_type(answer)}, not text")
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError("the record has no answer text (expected 'answer' or 'response')")
    issues: list[str] = []
    question_key, question = _first(record, QUESTION_KEYS)
    if question is not None and not isinstance(question, str):
        issues.append(f"{question_key} is {_type(question)}, not text; the record has no question")
    question = question if isinstance(question, str) and question.strip() else None
    key, sources = _first(record, SOURCE_KEYS)
    docs: list[Document] = []
    if key is not None:
        docs, source_issues = _documents(key, sources)
        issues.extend(source_issues)
    else:
        issues.append("the record has no sources (expected 'sources', 'retrieved_contexts' or 'contexts')")
    attributes: dict[str, Any] = {}
    if record.get("id") is not None:
        attributes["record.id"] = str(record["id"])
    for name in ("dataset", "task_type"):
        if isinstance(record.get(name), str):
            attributes[f"record.{name}"] = record[name]
    ref = SourceRef.trusted(file=source, line=line)
    root, retriever, llm = "0000000000000001", "0000000000000002", "0000000000000003"
    spans = (
        Span.trusted(
            trace_id=trace_id,
            span_id=root,
            name="record",
            kind=SpanKind.CHAIN,
            start=_BASE_TIME,
            end=_BASE_TIME + 4 * _TICK,
            input_text=question,
            output_text=answer,
            attributes=attributes,
            source=ref,
        ),
        Span.trusted(
            trace_id=trace_id,
            span_id=retriever,
            parent_id=root,
            name="sources",
            kind=SpanKind.RETRIEVER,
            start=_BASE_TIME + _TICK,
            end=_BASE_TIME + 2 * _TICK,
            query=question,
            documents=tuple(docs),
            entity_name="sources",
            source=ref,
        ),
        Span.trusted(
            trace_id=trace_id,
            span_id=llm,
            parent_id=root,
            name="answer",
            kind=SpanKind.LLM,
            start=_BASE_TIME + 3 * _TICK,
            end=_BASE_TIME + 4 * _TICK,
            input_messages=(Message.trusted(role="user", content=question),) if question else (),
            output_messages=(Message.trusted(role="assistant", content=answer),),
            attributes=dict(attributes),  # its own, as validation would have copied it
            source=ref,
        ),
    )
    return Trace.trusted(trace_id=trace_id, spans=spans, source_format=FORMAT, convention=FORMAT), issues


def record_trace_id(record: dict[str, Any], line: int, raw: bytes) -> str:
    """The stable trace id of a record: its ``id`` lower-cased, else line number and content digest."""
    raw_id = record.get("id")
    if isinstance(raw_id, str | int) and str(raw_id).strip():
        return str(raw_id).strip().lower()
    return f"line-{line}-{short_digest(raw.decode('utf-8', 'replace'))}"


class RecordsAdapter:
    """Reads RAG evaluation records, one JSON object per line (see the module docstring)."""

    name = FORMAT
    description = (
        "RAG evaluation records (JSONL, a JSON array, CSV or Parquet): question / user_input, "
        "sources / retrieved_contexts / contexts, answer / response"
    )

    def sniff(self, first_bytes: bytes) -> bool:
        from auditor.trace._record_forms import sniff_form  # imports this module

        return sniff_records(first_bytes) or sniff_form(first_bytes)

    def parse(self, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]:
        """Yield one trace per record, and a problem for every line skipped or repaired."""
        from auditor.trace._record_forms import parse_form, peek_form

        form, stream = peek_form(stream)
        if form is not None:  # a JSON array, CSV or Parquet (auditor.trace._record_forms)
            yield from parse_form(form, stream, source)
            return
        seen: dict[str, int] = {}
        for number, raw in enumerate(stream, start=1):
            if number == 1:
                raw = raw.removeprefix(_BOM)
            if not raw.strip():
                continue
            try:
                # surrogatepass, as json.loads does for bytes: CESU-8 text is then repaired whole.
                text = raw.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError as err:
                text = raw.decode("utf-8", "replace")
                yield Problem(
                    file=source,
                    line=number,
                    severity=Severity.WARNING,
                    reason=f"invalid UTF-8 at byte {err.start}; decoded with replacement characters",
                )
            try:
                data = json.loads(text)
            except RecursionError:
                yield Problem(
                    file=source,
                    line=number,
                    reason="JSON nested too deeply to read (about 1,000 levels); line skipped",
                )
                continue
            except ValueError as err:
                reason = "line is cut off (truncated file?)" if not raw.endswith(b"\n") else "not valid JSON"
                yield Problem(file=source, line=number, reason=f"{reason} ({err}); line skipped")
                continue
            if not isinstance(data, dict):
                yield Problem(
                    file=source,
                    line=number,
                    reason=f"expected a JSON object per line, got {type(data).__name__}; line skipped",
                )
                continue
            trace_id = record_trace_id(data, number, raw)
            if trace_id in seen:
                yield Problem(
                    file=source,
                    line=number,
                    trace_id=trace_id,
                    reason=f"record id {trace_id!r} repeats line {seen[trace_id]}; line skipped",
                )
                continue
            try:
                trace, issues = record_trace(data, trace_id, source, number)
            except ValueError as err:
                yield Problem(file=source, line=number, reason=f"{err}; line skipped", trace_id=trace_id)
                continue
            seen[trace_id] = number
            for issue in issues:
                yield Problem(
                    file=source, line=number, reason=issue, severity=Severity.WARNING, trace_id=trace_id
                )
            trace, repaired = repair_trace(trace, source, valid_text=_no_surrogates(raw))
            yield from repaired
            yield trace


def _no_surrogates(raw: bytes) -> bool:
    """Whether no text read from this line can hold a UTF-16 surrogate: it spells none as a JSON
    escape (no ``\\u`` at all) nor in CESU-8 (no byte 0xED, which leads every encoded surrogate).
    The repair check then reads only the record's free-form document metadata (a record's other
    values are text and flat attributes): about 30 us a record less."""
    return b"\\u" not in raw and b"\xed" not in raw


def _type(value: Any) -> str:
    """A JSON value's type in JSON's words, with its article ("an object"), for problems."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else "a value"
