"""What an evaluation record is: its keys, how its first line is recognised, and one record as a trace.

Shared by the ``records`` adapter's readers: JSON Lines (:mod:`auditor.trace._records`) and the
other file forms (:mod:`auditor.trace._record_forms`, :mod:`auditor.trace._record_rows`), which
all import it and which it imports none of. The record shapes, the trace a record becomes and its
stable id are described in :mod:`auditor.trace._records`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.text import short_digest
from auditor.trace._model import Document, Message, SourceRef, Span, SpanKind, Trace

FORMAT = "records"

ANSWER_KEYS = ("answer", "response")
QUESTION_KEYS = ("question", "user_input")
SOURCE_KEYS = ("sources", "retrieved_contexts", "contexts")
_TEXT_KEYS = ("text", "page_content", "content")

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


def _type(value: Any) -> str:
    """A JSON value's type in JSON's words, with its article ("an object"), for problems."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else "a value"
