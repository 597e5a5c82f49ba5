"""The one place that knows the order of the stages.

``trace -> evidence -> policy -> claims -> verdicts -> metrics -> results``. Stages know nothing
about each other's scheduling; this module calls them in order and assembles the public result.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from auditor.evidence import reconstruct
from auditor.evidence_model import Answer, Evidence
from auditor.ingest import IngestResult, read_traces
from auditor.results import AnswerOut, AuditResult, EvidenceOut, InputRef, ProblemOut, RunInfo


def evidence_out(item: Evidence, source_class: str | None = None, admitted: bool | None = None,
                 reason: str | None = None) -> EvidenceOut:
    return EvidenceOut(
        evidence_id=item.evidence_id, kind=item.kind, name=item.name, text=item.text,
        metadata=item.metadata, document_id=item.document_id, url=item.url, trace_id=item.trace_id,
        span_id=item.span_id, available_at=item.available_at, hop_path=list(item.hop_path),
        error=item.error, current_question=item.current_question,
        source_class=source_class, admitted=admitted, reason=reason,
    )


def answer_out(answer: Answer, evidence: list[EvidenceOut]) -> AnswerOut:
    return AnswerOut(
        answer_id=answer.answer_id, trace_id=answer.trace_id, span_id=answer.span_id,
        conversation_id=answer.conversation_id, question=answer.question,
        question_type=answer.question_type, text=answer.text, generated_at=answer.generated_at,
        evidence=evidence,
    )


def run_info(ingested: IngestResult, started: datetime) -> RunInfo:
    return RunInfo(
        id=uuid.uuid4().hex, started_at=started, policy=None, judge=None,
        inputs=[InputRef(path=i.path, sha256=i.sha256, format=i.format, traces=i.traces) for i in ingested.inputs],
        problems=[
            ProblemOut(file=p.file, line=p.line, severity=p.severity.value, reason=p.reason,
                       trace_id=p.trace_id, span_id=p.span_id)
            for p in ingested.problems
        ],
    )


def collect_evidence(paths: Sequence[Path], format: str | None = None, trace_id: str | None = None) -> AuditResult:
    """Read ``paths`` and return every answer with the evidence it could draw on.

    Args:
        paths: trace files (any installed format; gzip is fine).
        format: force an adapter by name instead of sniffing.
        trace_id: keep only answers from this trace (a unique prefix is enough).
    """
    started = datetime.now(UTC)
    ingested = read_traces(paths, format)
    answers = reconstruct(ingested.traces)
    if trace_id:
        wanted = trace_id.lower().replace("-", "")
        answers = [a for a in answers if a.trace_id.lower().replace("-", "").startswith(wanted)]
    return AuditResult(
        run=run_info(ingested, started),
        answers=[answer_out(a, [evidence_out(e) for e in a.evidence]) for a in answers],
    )
