"""A stored run read back by id (a unique prefix is enough) and exported as rows; the calibrations.

The library calls behind ``auditor show``, ``auditor export`` and ``auditor calibrations``. They
only read: a store that does not exist is a :class:`~auditor.store.StoreError`, never created to be
found empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from auditor.calibration import Calibration
from auditor.errors import UsageError
from auditor.results import AuditResult, ExportFormat, claim_rows, write_rows
from auditor.store._store import Store

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


def resolve_run(store: Store, run_id: str) -> str:
    """The full id of the stored run whose id starts with ``run_id``.

    Raises:
        UsageError: no run, or more than one, starts with ``run_id``.
    """
    wanted = run_id.strip()
    matches = [r.id for r in store.list_runs() if wanted and r.id.startswith(wanted)]
    if len(matches) != 1:
        found = "no run" if not matches else f"{len(matches)} runs"
        raise UsageError(f"{found} with an id starting {run_id!r}: `auditor runs` lists the stored runs.")
    return matches[0]


def read_run(run_id: str, db_url: str | None = None) -> AuditResult:
    """The public result of the stored run ``run_id`` (a unique prefix is enough)."""
    with Store(db_url, create=False) as store:
        return store.load_run(resolve_run(store, run_id))


def export_run(
    run_id: str, output: Path | SupportsWrite[str], format: ExportFormat = "jsonl", db_url: str | None = None
) -> int:
    """Write a stored run as one row per claim (see :class:`~auditor.results.ClaimRow`); return the rows.

    Args:
        run_id: the run's id or a unique prefix of it.
        output: a file path, or an open text stream (``jsonl`` and ``csv`` only).
        format: ``jsonl``, ``csv`` or ``parquet`` (needs ``pyarrow``: the ``parquet`` extra).
        db_url: the store (default: ``AUDITOR_DB_URL``, else the app directory's SQLite file).
    """
    return write_rows(claim_rows(read_run(run_id, db_url)), output, format)


def list_calibrations(db_url: str | None = None) -> list[Calibration]:
    """Every stored calibration, newest first (``--calibration ID`` takes one of their ids)."""
    with Store(db_url, create=False) as store:
        return store.calibrations()


__all__ = ["export_run", "list_calibrations", "read_run", "resolve_run"]
