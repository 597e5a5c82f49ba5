"""``calibrate()``: audit a labelled file and store the judge's calibration (no run of its own)."""

from __future__ import annotations

from pathlib import Path

from auditor.calibration import Calibration, calibration_from, load_labelled
from auditor.judges import Decomposer
from auditor.llm import run_sync
from auditor.policy import Policy, load_policy
from auditor.run._audit import audit_async
from auditor.store import Store
from auditor.trace import FORMAT, file_digest


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
    name: str | None = None,
) -> Calibration:
    """See :func:`calibrate`."""
    records = load_labelled(path)
    policy = policy or load_policy()
    opened = Store(db_url) if store else None  # a bad store fails now, not after the whole audit
    try:
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
            records,
            result,
            labelled_path=str(path),
            labelled_sha256=file_digest(path),
            decomposer=decomposer,
            name=name,
        )
        if opened is not None:
            opened.save_calibration(calibration)
    finally:
        if opened is not None:
            opened.close()
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
    name: str | None = None,
) -> Calibration:
    """Measure a judge against a labelled file and store the calibration under the judge's identity.

    Args:
        path: a labelled JSONL file (the dev-set shape; see ``docs/calibration.md``).
        judge: ``offline`` or ``openai:MODEL``, as for ``audit``.
        policy: the policy to audit under (the shipped default when None).
        base_url, cascade, cache, decomposer, concurrency: as for :func:`auditor.run.audit`.
        db_url: the store to save into (default: the app directory's SQLite file or ``AUDITOR_DB_URL``).
        store: save the calibration (``False``: only compute it).
        name: how reports and the console name it (default: the labelled file's name).

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
            name=name,
        )
    )
