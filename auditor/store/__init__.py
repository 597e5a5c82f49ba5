"""The SQL store: audit runs, answers, evidence, claims, verdicts, and the verdict and decomposition caches.

SQLite by default (a file in the app directory), PostgreSQL by URL; SQLAlchemy 2 ORM, schema
managed by the Alembic migrations in :mod:`auditor.migrations`. See ``docs/store.md``.
"""

from __future__ import annotations

from auditor.store.cache import SqlDecompositionCache, SqlFusedCache, SqlVerdictCache
from auditor.store.store import (
    DB_URL_VARIABLE,
    RunRow,
    Store,
    StoreError,
    revision,
    trace_digest,
    upgrade,
)

__all__ = [
    "DB_URL_VARIABLE",
    "RunRow",
    "SqlDecompositionCache",
    "SqlFusedCache",
    "SqlVerdictCache",
    "Store",
    "StoreError",
    "revision",
    "trace_digest",
    "upgrade",
]
