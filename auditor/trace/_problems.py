"""Problems found in input: recorded, counted and shown, never a crash.

Adapters are lenient but honest: a malformed line or span is skipped and described here,
naming the file, the line and the reason, and the rest of the input is still read.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, field_validator

from auditor.trace._text import repair_text


class Severity(StrEnum):
    WARNING = "warning"  # something was repaired or ignored; the trace is still audited
    ERROR = "error"  # something was skipped (a line, a span, a trace)


class Problem(BaseModel):
    """One thing wrong with the input, located as precisely as the format allows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    line: int | None = None
    reason: str
    severity: Severity = Severity.ERROR
    trace_id: str | None = None
    span_id: str | None = None
    #: What kind of problem, where a reader (or a script) needs to tell it apart: ``no_answer`` for a
    #: trace with model calls from which no answer was read (see :mod:`auditor.evidence`).
    code: str | None = None

    @field_validator("file", "reason", "trace_id", "span_id")
    @classmethod
    def _valid_text(cls, value: str | None) -> str | None:
        # A problem quotes trace content (ids, values); it must stay writable as UTF-8 too.
        return None if value is None else repair_text(value)

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        ids = ""
        if self.trace_id:
            ids = f" (trace {self.trace_id}" + (f", span {self.span_id})" if self.span_id else ")")
        return f"{where}: {self.severity.value}: {self.reason}{ids}"
