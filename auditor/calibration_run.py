"""``calibrate()``: the library call behind ``auditor calibrate``.

Audits a labelled file through the normal pipeline (the ``records`` adapter, the policy, the
decomposer and the judge a user would audit with), compares the judge with the labels
(:mod:`auditor.calibration_map`, :mod:`auditor.calibration`) and stores the calibration with the
judge's identity, so later audits with the same judge can show corrected rates.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from auditor import __version__
from auditor.audit import audit_async
from auditor.calibration import Calibration, LevelReport, Pair, Unmapped, level_report
from auditor.calibration_map import LabelledRecord, compare, load_labelled
from auditor.ingest import file_digest
from auditor.judging import Decomposer
from auditor.llm.client import run_sync
from auditor.policy import Policy, load_policy
from auditor.records import FORMAT
from auditor.results import AuditResult, JudgeRef
from auditor.verdicts import JudgeIdentity


def calibration_from(
    records: list[LabelledRecord],
    result: AuditResult,
    *,
    labelled_path: str,
    labelled_sha256: str,
    decomposer: str = "rules",
    segments: bool = True,
) -> Calibration:
    """The calibration of the judge that produced ``result`` against ``records`` (pure).

    Args:
        records: the labelled records (:func:`~auditor.calibration_map.load_labelled`).
        result: the audit of the same file with the records adapter.
        labelled_path, labelled_sha256: the labelled file, as recorded.
        decomposer: the decomposer used (``rules`` or ``llm``), as recorded.
        segments: also report per ``<dataset>/<task_type>``.
    """
    answers = {a.trace_id: a for a in result.answers}
    claim_items, claim_unmapped, answer_items, answer_unmapped = compare(records, answers)
    by_segment: dict[str, LevelReport] = {}
    if segments:
        groups: dict[str, list[LabelledRecord]] = defaultdict(list)
        for record in records:
            groups[record.segment].append(record)
        for name in sorted(groups):
            c_items, c_un, a_items, _ = compare(groups[name], answers)
            by_segment[f"{name}/claim"] = level_report("claim", c_items, c_un, resamples=500)
            by_segment[f"{name}/answer"] = level_report("answer", a_items, resamples=500)
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
    )


async def calibrate_async(
    path: Path,
    *,
    judge: str = "offline",
    policy: Policy | None = None,
    base_url: str | None = None,
    cascade: bool = True,
    cache: bool = True,
    decomposer: Decomposer = "rules",
    concurrency: int = 8,
    db_url: str | None = None,
    store: bool = True,
) -> Calibration:
    """See :func:`calibrate`."""
    records = load_labelled(path)
    policy = policy or load_policy()
    # The calibration is stored below; the audit behind it is not a run of its own.
    result, _ = await audit_async(
        [path],
        policy=policy,
        judge=judge,
        base_url=base_url,
        cascade=cascade,
        cache=cache,
        decomposer=decomposer,
        format=FORMAT,
        concurrency=concurrency,
        store=False,
    )
    calibration = calibration_from(
        records, result, labelled_path=str(path), labelled_sha256=file_digest(path), decomposer=decomposer
    )
    if store:
        from auditor.store import Store  # the store is optional for library callers

        with Store(db_url) as opened:
            opened.save_calibration(calibration)
    return calibration


def calibrate(
    path: Path,
    *,
    judge: str = "offline",
    policy: Policy | None = None,
    base_url: str | None = None,
    cascade: bool = True,
    cache: bool = True,
    decomposer: Decomposer = "rules",
    concurrency: int = 8,
    db_url: str | None = None,
    store: bool = True,
) -> Calibration:
    """Measure a judge against a labelled file and store the calibration under the judge's identity.

    Args:
        path: a labelled JSONL file (the dev-set shape; see ``docs/calibration.md``).
        judge: ``offline`` or ``openai:MODEL``, as for ``audit``.
        policy: the policy to audit under (the shipped default when None).
        base_url, cascade, cache, decomposer, concurrency: as for :func:`auditor.audit.audit`.
        db_url: the store to save into (default: the app directory's SQLite file or ``AUDITOR_DB_URL``).
        store: save the calibration (``False``: only compute it).

    Raises:
        UsageError: the labelled file cannot be read or has a bad line (file and line named).
    """
    return run_sync(
        lambda: calibrate_async(
            path,
            judge=judge,
            policy=policy,
            base_url=base_url,
            cascade=cascade,
            cache=cache,
            decomposer=decomposer,
            concurrency=concurrency,
            db_url=db_url,
            store=store,
        )
    )


__all__ = ["Pair", "Unmapped", "calibrate", "calibrate_async", "calibration_from"]
