"""The ``langchain`` trace adapter: LangChain / LangSmith run trees exported as JSON.

Layouts read (detected from the content, not the file name):

- a JSON list of runs, as ``LangChainTracer`` posts them (flat, linked by ``parent_run_id`` and
  ``dotted_order``), or as a ``BaseTracer`` subclass collects them;
- one root run with its descendants nested in ``child_runs``;
- a LangSmith export ``{"runs": [...]}``;
- JSONL, one run (or one list of runs) per line; a LangSmith create record and its later
  update for the same run id are merged;
- the bodies the ``langsmith`` SDKs send to the LangSmith API: ``{"post": [...], "patch": [...]}``
  (JSON, one per line) and ``multipart/form-data`` (:mod:`auditor_langchain.langsmith`).

Runs are grouped by trace: the run's ``trace_id``, else the root of its ``parent_run_id`` chain
or of its ``dotted_order``, else the enclosing root of ``child_runs``. Each trace is checked by
:func:`auditor.trace.assemble_trace`. Ids keep LangSmith's canonical dashed lower-case UUID
form (see :func:`auditor_langchain.ids.normalise_id`).

Streaming (memory is bounded by the open traces, not by the file): JSONL is read line by line; a
top-level JSON list, and a ``{"runs": [...]}`` export whose first key is ``runs``, are read one
element at a time with the standard library's decoder over a sliding window of about 1 MB (not
``ijson``, which gives no offsets: problems and span sources carry line numbers). A nested root with
``child_runs`` is one trace and is read as one value, as is an export whose ``runs`` key is not
first. Runs are grouped by trace as they arrive, and a trace is yielded (and its buffers freed) when

- its root run (no parent) is present, every run has an ``end_time`` (a LangSmith create record
  waits for the update that ends it; create and update are merged as before), and the parent of
  every run is present; and
- no run of it has arrived in the last ``quiet_records`` top-level records (default
  :data:`QUIET_RECORDS`), since tracers write a root first (a ``BaseTracer`` collection) as often
  as last (runs persisted when they end).

A run of an already yielded trace that arrives later is yielded as a later part with the same
trace id (warning "trace continued after its root run; audited in parts"; evidence reconstruction
pools traces by conversation id, else trace id, so the parts are audited together); a repeated
record (an update) of a run already yielded is ignored with a warning. The last
:data:`REMEMBER_TRACES` yielded traces are remembered for this. A trace that never completes is
yielded at end of file; beyond :data:`MAX_OPEN_RUNS` runs in open traces the least recently
extended one is yielded early, with a warning. A legacy run naming only a parent that has not
arrived (no ``trace_id``, no ``dotted_order``) waits for it, or for the end of the file.

Guarantees: never raises on bad input. Invalid UTF-8 is replaced (one warning); a malformed JSONL
line is skipped with its line number; a truncated JSON list keeps the runs before the break; a
value nested too deeply to read (about 1,000 JSON levels) is skipped and what follows it read; a
run without an id or a readable ``start_time`` is skipped; an impossible time (before 1970, an end
before the start) is unknown, as ``docs/conventions.md`` says; a generation whose text is a number
is not an answer; each becomes a :class:`~auditor.trace.Problem`. This module imports nothing
from LangChain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from auditor.trace import Problem, Trace
from auditor_langchain.assemble import PART_REASON
from auditor_langchain.buffers import Bytes
from auditor_langchain.collect import EVICTED_REASON, MAX_OPEN_RUNS, QUIET_RECORDS, REMEMBER_TRACES, Collector
from auditor_langchain.layouts import read

__all__ = [
    "EVICTED_REASON",
    "MAX_OPEN_RUNS",
    "PART_REASON",
    "QUIET_RECORDS",
    "REMEMBER_TRACES",
    "RunTreeAdapter",
]

_RUN_KEY = re.compile(rb'"(run_type|child_runs|dotted_order|parent_run_id)"\s*:')
_BATCH = re.compile(rb'^\{\s*"(post|patch)"\s*:\s*\[')
_MULTIPART = re.compile(rb'^--\S+\r?\nContent-Disposition: form-data; name="(post|patch)\.', re.IGNORECASE)


class RunTreeAdapter:
    """Reads LangChain run trees (``langsmith.RunTree`` serialised as JSON or JSONL)."""

    name = "langchain"
    description = (
        "LangChain / LangSmith run trees: JSON list, nested child_runs, {'runs': [...]}, JSONL, "
        "LangSmith ingest bodies ({'post', 'patch'}, multipart)"
    )

    def sniff(self, first_bytes: bytes) -> bool:
        """True for JSON or JSONL whose first object looks like a LangChain run."""
        try:
            head = first_bytes.lstrip(b"\xef\xbb\xbf \t\r\n")
            if _MULTIPART.match(head) or _BATCH.match(head):
                return True  # a LangSmith ingest body (auditor_langchain.langsmith)
            if head[:1] not in (b"[", b"{"):
                return False
            if b'"resourceSpans"' in head or b'"resource_spans"' in head:
                return False
            return _RUN_KEY.search(head) is not None
        except Exception:  # the contract: sniff never raises
            return False

    #: Streaming limits (see the module docstring); instance attributes may be changed.
    quiet_records = QUIET_RECORDS
    max_open_runs = MAX_OPEN_RUNS
    remember_traces = REMEMBER_TRACES

    def parse(self, stream: BinaryIO, source: str) -> Iterator[Trace | Problem]:
        """Yield each trace once it is complete, and a problem for anything skipped or repaired."""
        collector = Collector(source, self.quiet_records, self.max_open_runs, self.remember_traces)
        try:
            yield from read(Bytes(stream, source), source, collector)
        except (OSError, EOFError) as exc:  # EOFError: a truncated gzip stream
            yield Problem(file=source, reason=f"could not read the file: {exc}")
        yield from collector.finish()
