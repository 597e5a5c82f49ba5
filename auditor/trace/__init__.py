"""The trace stage: trace files in, normalised :class:`Trace` objects out.

An adapter (found through the ``auditor.adapters`` entry-point group, the built-in ``records``
adapter registered the same way) parses one format into spans; :func:`read_traces` sniffs the
format, streams the file and hands each trace on once it is whole (:func:`expand_inputs` first turns
directories and glob patterns into files, in a stable order), recording every malformed
span or line as a :class:`Problem` instead of failing the file. Every trace passes through
:func:`repair_trace` (valid text, bounded nesting) and :func:`assemble_trace` settles impossible
times, so later stages can trust both. A trace whose spans are split over several files (the
Collector's file exporter rotates its files) is merged into one by :func:`merge_split_traces`;
URLs (``s3://``, ``memory://``) are read through the user's installed fsspec. Nothing here knows
about answers or evidence.
"""

from __future__ import annotations

from auditor.trace._adapters import (
    ENTRY_POINT_GROUP,
    SNIFF_BYTES,
    InstalledAdapter,
    TraceAdapter,
    broken_adapters,
    detect_adapter,
    get_adapter,
    installed_adapters,
)
from auditor.trace._assemble import assemble_trace
from auditor.trace._discover import DATA_SUFFIXES, Source, expand_inputs, is_url
from auditor.trace._gc import GC_THRESHOLD, OLD_THRESHOLD, fewer_collections
from auditor.trace._ingest import IngestResult, InputFile, file_digest, read_file, read_traces
from auditor.trace._json import dumps_fast, loads_fast, loads_fast_writable
from auditor.trace._merge import merge_split_traces, merged_conversation
from auditor.trace._model import (
    Document,
    Message,
    SourceRef,
    Span,
    SpanEvent,
    SpanKind,
    SpanStatus,
    ToolCall,
    ToolInvocation,
    Trace,
)
from auditor.trace._problems import Problem, Severity
from auditor.trace._receive import BinaryRecords, BodyCheck, ReceivedBatch, ReceivedSpan, SpanReceiver
from auditor.trace._record_shape import FORMAT, record_trace, record_trace_id
from auditor.trace._records import RecordsAdapter
from auditor.trace._repair import MAX_DEPTH, repair_trace
from auditor.trace._sampling import SpanFacts, TraceSampling, parse_sampling, sample_point
from auditor.trace._text import quote_value, repair_text

__all__ = [
    "DATA_SUFFIXES",
    "ENTRY_POINT_GROUP",
    "FORMAT",
    "GC_THRESHOLD",
    "MAX_DEPTH",
    "OLD_THRESHOLD",
    "SNIFF_BYTES",
    "BinaryRecords",
    "BodyCheck",
    "Document",
    "IngestResult",
    "InputFile",
    "InstalledAdapter",
    "Message",
    "Problem",
    "ReceivedBatch",
    "ReceivedSpan",
    "RecordsAdapter",
    "Severity",
    "Source",
    "SourceRef",
    "Span",
    "SpanEvent",
    "SpanFacts",
    "SpanKind",
    "SpanReceiver",
    "SpanStatus",
    "ToolCall",
    "ToolInvocation",
    "Trace",
    "TraceAdapter",
    "TraceSampling",
    "assemble_trace",
    "broken_adapters",
    "detect_adapter",
    "dumps_fast",
    "expand_inputs",
    "fewer_collections",
    "file_digest",
    "get_adapter",
    "installed_adapters",
    "is_url",
    "loads_fast",
    "loads_fast_writable",
    "merge_split_traces",
    "merged_conversation",
    "parse_sampling",
    "quote_value",
    "read_file",
    "read_traces",
    "record_trace",
    "record_trace_id",
    "repair_text",
    "repair_trace",
    "sample_point",
]
