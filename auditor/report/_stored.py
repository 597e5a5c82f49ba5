"""Past runs in the store: list them, fetch one back as a result and re-render it.

The library calls behind ``auditor runs`` and ``auditor report --run``. They only read: a store
that does not exist is a :class:`~auditor.store.StoreError`, never created to be found empty.
"""

from __future__ import annotations

from pathlib import Path

from auditor.errors import PolicyError, UsageError
from auditor.policy import parse_policy
from auditor.report._render import write_report
from auditor.results import AuditResult
from auditor.store import RunRow, Store


def list_runs(db_url: str | None = None, limit: int | None = None) -> list[RunRow]:
    """Stored runs, newest first, with their headline figures."""
    with Store(db_url, create=False) as store:
        return store.list_runs(limit)


def stored_result(run_id: str, db_url: str | None = None) -> tuple[AuditResult, str | None]:
    """A stored run's result and its policy's rationale (from the policy text kept with the run).

    ``run_id`` may be a unique prefix of the id.

    Raises:
        UsageError: no run, or more than one, starts with ``run_id``.
    """
    with Store(db_url, create=False) as store:
        matches = [r.id for r in store.list_runs() if r.id.startswith(run_id)]
        if len(matches) != 1:
            found = "no run" if not matches else f"{len(matches)} runs"
            raise UsageError(f"{found} with an id starting {run_id!r}: see `auditor runs`.")
        result = store.load_run(matches[0])
        text = store.policy_text(matches[0])
    rationale = None
    if text:
        try:
            rationale = parse_policy(text).rationale
        except PolicyError:
            rationale = None  # a policy text an older version accepted: the report still renders
    return result, rationale


def render_stored_run(run_id: str, output: Path, db_url: str | None = None) -> Path:
    """Re-render a stored run's HTML report to ``output``."""
    result, rationale = stored_result(run_id, db_url)
    return write_report(result, output, policy_rationale=rationale)
