"""The store: runs, answers, claims, verdicts, evidence, calibrations and caches in SQL.

SQLAlchemy 2 ORM; SQLite by default (a file in the app directory), PostgreSQL by URL; the schema
is managed by the Alembic migrations in :mod:`auditor.store.migrations`. See ``docs/store.md``.
"""

from __future__ import annotations

from auditor.errors import LeaseLostError, StoreError
from auditor.store._bodies import Body, BodyQueue
from auditor.store._browse import (
    AnswerPage,
    StoredAnswer,
    find_answer,
    get_answer,
    iter_answers,
    list_answers,
)
from auditor.store._cache import SqlDecompositionCache, SqlFusedCache, SqlVerdictCache
from auditor.store._export import export_run, list_calibrations, read_run, resolve_run
from auditor.store._filters import POLICY_OUTCOMES, VERDICTS, AnswerFilter, PolicyOutcome, Verdict
from auditor.store._intake import AuditPage, Claim, Intake, TraceAudit
from auditor.store._kept import reaudit_link
from auditor.store._lease import RunLease, new_owner
from auditor.store._listing import RunRow
from auditor.store._live import (
    NOT_AUDITED,
    CapShare,
    SampleShare,
    Spend,
    judge_spend,
    live_record,
    note_live,
    sample_json,
    samples_of,
)
from auditor.store._overview import (
    Conversation,
    Facets,
    ReceivedTrace,
    TraceState,
    answer_facets,
    received_traces,
    recent_conversations,
)
from auditor.store._prune import PruneReport, Retention, Skipped, parse_age, prune, retention
from auditor.store._rollup_reads import newest as newest_rollup
from auditor.store._rollup_reads import rebuild as rebuild_rollups
from auditor.store._rollup_reads import slices as rollup_slices
from auditor.store._rollups import grain as rollup_grain
from auditor.store._runs import FinishHook
from auditor.store._sign_ins import SIGN_IN_LIFETIME, SignIns
from auditor.store._store import DB_URL_VARIABLE, Store, revision, trace_digest, upgrade
from auditor.store._summed import summed as summed_counts
from auditor.store._summed import summed_by as summed_counts_by
from auditor.store._writer import StoreWriter

__all__ = [
    "DB_URL_VARIABLE",
    "NOT_AUDITED",
    "POLICY_OUTCOMES",
    "SIGN_IN_LIFETIME",
    "VERDICTS",
    "AnswerFilter",
    "AnswerPage",
    "AuditPage",
    "Body",
    "BodyQueue",
    "CapShare",
    "Claim",
    "Conversation",
    "Facets",
    "FinishHook",
    "Intake",
    "LeaseLostError",
    "PolicyOutcome",
    "PruneReport",
    "ReceivedTrace",
    "Retention",
    "RunLease",
    "RunRow",
    "SampleShare",
    "SignIns",
    "Skipped",
    "Spend",
    "SqlDecompositionCache",
    "SqlFusedCache",
    "SqlVerdictCache",
    "Store",
    "StoreError",
    "StoreWriter",
    "StoredAnswer",
    "TraceAudit",
    "TraceState",
    "Verdict",
    "answer_facets",
    "export_run",
    "find_answer",
    "get_answer",
    "iter_answers",
    "judge_spend",
    "list_answers",
    "list_calibrations",
    "live_record",
    "new_owner",
    "newest_rollup",
    "note_live",
    "parse_age",
    "prune",
    "read_run",
    "reaudit_link",
    "rebuild_rollups",
    "received_traces",
    "recent_conversations",
    "resolve_run",
    "retention",
    "revision",
    "rollup_grain",
    "rollup_slices",
    "sample_json",
    "samples_of",
    "summed_counts",
    "summed_counts_by",
    "trace_digest",
    "upgrade",
]
