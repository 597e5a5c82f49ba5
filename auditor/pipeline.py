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
from auditor.policy import Decision, Policy, evaluate, load_policy
from auditor.results import AnswerOut, AuditResult, EvidenceOut, InputRef, PolicyRef, ProblemOut, RunInfo


def evidence_out(item: Evidence, decision: Decision | None = None) -> EvidenceOut:
    return EvidenceOut(
        evidence_id=item.evidence_id, kind=item.kind, name=item.name, text=item.text,
        metadata=item.metadata, document_id=item.document_id, url=item.url, trace_id=item.trace_id,
        span_id=item.span_id, available_at=item.available_at, hop_path=list(item.hop_path),
        error=item.error, current_question=item.current_question,
        source_class=decision.source_class if decision else None,
        admitted=decision.admitted if decision else None,
        reason=decision.reason if decision else None,
    )


def answer_out(answer: Answer, evidence: list[EvidenceOut]) -> AnswerOut:
    return AnswerOut(
        answer_id=answer.answer_id, trace_id=answer.trace_id, span_id=answer.span_id,
        conversation_id=answer.conversation_id, question=answer.question,
        question_type=answer.question_type, text=answer.text, generated_at=answer.generated_at,
        evidence=evidence,
    )


def policy_ref(policy: Policy) -> PolicyRef:
    return PolicyRef(name=policy.name, version=policy.version, sha256=policy.sha256)


def run_info(ingested: IngestResult, started: datetime, policy: Policy | None) -> RunInfo:
    return RunInfo(
        id=uuid.uuid4().hex, started_at=started, policy=policy_ref(policy) if policy else None, judge=None,
        inputs=[InputRef(path=i.path, sha256=i.sha256, format=i.format, traces=i.traces) for i in ingested.inputs],
        problems=[
            ProblemOut(file=p.file, line=p.line, severity=p.severity.value, reason=p.reason,
                       trace_id=p.trace_id, span_id=p.span_id)
            for p in ingested.problems
        ],
    )


def select_trace(answers: list[Answer], trace_id: str | None) -> list[Answer]:
    """Answers of the trace whose id starts with ``trace_id`` (dashes and case ignored)."""
    if not trace_id:
        return answers
    wanted = trace_id.lower().replace("-", "")
    return [a for a in answers if a.trace_id.lower().replace("-", "").startswith(wanted)]


def find_answers(paths: Sequence[Path], format: str | None, policy: Policy,
                 trace_id: str | None = None) -> tuple[IngestResult, list[Answer]]:
    """Read the traces and reconstruct the answers the policy's ``[answers]`` section selects."""
    ingested = read_traces(paths, format)
    answers = reconstruct(ingested.traces, policy.answer_selection())
    return ingested, select_trace(answers, trace_id)


def collect_evidence(paths: Sequence[Path], format: str | None = None, trace_id: str | None = None,
                     policy: Policy | None = None) -> AuditResult:
    """Read ``paths`` and return every answer with the evidence it could draw on, decided by ``policy``.

    Args:
        paths: trace files (any installed format; gzip is fine).
        format: force an adapter by name instead of sniffing.
        trace_id: keep only answers from this trace (a unique prefix is enough).
        policy: the admissible-source policy; the shipped default when None.
    """
    started = datetime.now(UTC)
    policy = policy or load_policy()
    ingested, answers = find_answers(paths, format, policy, trace_id)
    out = []
    for answer in answers:
        decisions = evaluate(policy, answer)
        out.append(answer_out(answer, [evidence_out(e, d) for e, d in zip(answer.evidence, decisions, strict=True)]))
    return AuditResult(run=run_info(ingested, started, policy), answers=out)
