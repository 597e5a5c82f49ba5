"""The store: runs, answers, claims, verdicts, evidence, calibrations and caches in SQL.

SQLAlchemy 2 ORM; SQLite by default (a file in the app directory), PostgreSQL by URL; the schema
is managed by the Alembic migrations in :mod:`auditor.store.migrations`. See ``docs/store.md``.
"""

from __future__ import annotations

from auditor.errors import LeaseLostError, StoreError
from auditor.store._browse import VERDICTS, AnswerFilter, AnswerPage, Verdict, get_answer, list_answers
from auditor.store._cache import SqlDecompositionCache, SqlFusedCache, SqlVerdictCache
from auditor.store._intake import Claim, Intake, TraceAudit
from auditor.store._lease import RunLease, new_owner
from auditor.store._listing import RunRow
from auditor.store._store import DB_URL_VARIABLE, Store, revision, trace_digest, upgrade
from auditor.store._writer import StoreWriter

__all__ = [
    "DB_URL_VARIABLE",
    "VERDICTS",
    "AnswerFilter",
    "AnswerPage",
    "Claim",
    "Intake",
    "LeaseLostError",
    "RunLease",
    "RunRow",
    "SqlDecompositionCache",
    "SqlFusedCache",
    "SqlVerdictCache",
    "Store",
    "StoreError",
    "StoreWriter",
    "TraceAudit",
    "Verdict",
    "get_answer",
    "list_answers",
    "new_owner",
    "revision",
    "trace_digest",
    "upgrade",
]
