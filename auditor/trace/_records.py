"""The ``records`` adapter: RAG evaluation records (question, sources, answer) as traces.

Evaluation sets without traces hold one JSON object per line with a question, the passages the
system was given and the answer it wrote (a JSON array, CSV / TSV or Parquet of the same records is
handed to :mod:`auditor.trace._record_forms`; what a record is, and the trace it becomes, is in
:mod:`auditor.trace._record_shape`). Two shapes are read:

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
from collections.abc import Iterator
from typing import BinaryIO

from auditor.trace._model import Trace
from auditor.trace._problems import Problem, Severity
from auditor.trace._record_shape import FORMAT, record_trace, record_trace_id, sniff_records
from auditor.trace._repair import repair_trace

_BOM = b"\xef\xbb\xbf"


class RecordsAdapter:
    """Reads RAG evaluation records, one JSON object per line (see the module docstring)."""

    name = FORMAT
    description = (
        "RAG evaluation records (JSONL, a JSON array, CSV or Parquet): question / user_input, "
        "sources / retrieved_contexts / contexts, answer / response"
    )

    def sniff(self, first_bytes: bytes) -> bool:
        from auditor.trace._record_forms import sniff_form  # the other forms: loaded when needed

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
