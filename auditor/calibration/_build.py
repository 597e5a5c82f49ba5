"""A judge's calibration from an audit of a labelled file: the comparison, pure.

:func:`auditor.run.calibrate` runs the audit (the ``records`` adapter, the policy, the
decomposer and the judge a user would audit with) and stores what :func:`calibration_from` makes of
it under the judge's identity, so later audits with the same judge can show corrected rates.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import UTC, datetime

from auditor import __version__
from auditor.calibration._agreement import Calibration, LevelReport, level_report
from auditor.calibration._labelled import LabelledRecord, compare
from auditor.judges import JudgeIdentity
from auditor.results import AuditResult, JudgeRef


def calibration_from(
    records: list[LabelledRecord],
    result: AuditResult,
    *,
    labelled_path: str,
    labelled_sha256: str,
    decomposer: str = "rules",
    segments: bool = True,
    name: str | None = None,
) -> Calibration:
    """The calibration of the judge that produced ``result`` against ``records`` (pure).

    Args:
        records: the labelled records (:func:`~auditor.calibration.load_labelled`).
        result: the audit of the same file with the records adapter.
        labelled_path, labelled_sha256: the labelled file, as recorded.
        decomposer: the decomposer used (``rules`` or ``llm``), as recorded.
        segments: also report per ``<dataset>/<task_type>``.
        name: how reports name it (default: the labelled file's name).
    """
    answers = {a.trace_id: a for a in result.answers}
    claim_items, claim_unmapped, answer_items, answer_unmapped = compare(records, answers)
    by_segment: dict[str, LevelReport] = {}
    if segments:
        groups: dict[str, list[LabelledRecord]] = defaultdict(list)
        for record in records:
            groups[record.segment].append(record)
        for segment in sorted(groups):
            c_items, c_un, a_items, _ = compare(groups[segment], answers)
            by_segment[f"{segment}/claim"] = level_report("claim", c_items, c_un, resamples=500)
            by_segment[f"{segment}/answer"] = level_report("answer", a_items, resamples=500)
    judge = result.run.judge or JudgeRef(kind="offline")
    notes = []
    if judge.approximate:
        notes.append("offline judge: approximate (surface cues, not a model)")
    return Calibration(
        id=uuid.uuid4().hex,
        created_at=datetime.now(UTC),
        auditor_version=__version__,
        judge=JudgeIdentity(
            kind=judge.kind,
            model=judge.model,
            prompt_version=judge.prompt_version,
            approximate=judge.approximate,
        ),
        policy=result.run.policy,
        decomposer=decomposer,
        labelled_path=labelled_path,
        labelled_sha256=labelled_sha256,
        records=len(records),
        claim=level_report("claim", claim_items, claim_unmapped),
        answer=level_report("answer", answer_items, answer_unmapped),
        by_segment=by_segment,
        notes=notes,
        name=name,
        datasets=sorted({r.dataset for r in records} - {"-", ""}),
        task_types=sorted({r.task_type for r in records} - {"-", ""}),
    )


__all__ = ["calibration_from"]
