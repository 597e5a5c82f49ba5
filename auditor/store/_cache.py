"""The caches in the SQL store: verdicts, decompositions and fused results over tables.

A re-audit of the same claims on the same evidence by the same judge costs no calls, across
processes and machines sharing a database. Keys come from :func:`auditor.judges.cache._cache.cache_key` (they
already include the judge identity); the identity columns are kept beside each row so the cache
can be inspected and pruned by judge.

:class:`SqlDecompositionCache` (:class:`auditor.judges.DecompositionCache`) and
:class:`SqlFusedCache` (:class:`auditor.judges.FusedCache`) share the ``decomposition_cache`` table
(``kind`` tells them apart; keys from :func:`auditor.judges.cache._cache.decomposition_key` and
:func:`auditor.judges.cache._cache.fused_key` never collide), so an LLM decomposer or fused mode costs no calls
on a re-audit either.

Lookups are one query per call (``get_many``: every claim of an answer at once). Writes are one
upsert per call (``put_many``); given the run's :class:`~auditor.store.StoreWriter` they are queued
to its thread and committed with the next batch, so a judge never waits on the database. Until
then the entries are served from memory: a claim judged again in the same run is still a hit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from pydantic import ValidationError
from sqlalchemy import Select, bindparam, select

from auditor.claims import Decomposition
from auditor.judges import (
    ClaimVerdict,
    FusedResult,
    JudgeIdentity,
    Label,
    cacheable_fused,
    call_failed,
    fused_from_json,
    fused_to_json,
)
from auditor.store import _write as write
from auditor.store._lookup import driver_rows, driver_select
from auditor.store._schema import Base, CachedDecompositionRecord, CachedVerdictRecord
from auditor.store._store import Store
from auditor.store._translate import store_errors
from auditor.store._writer import StoreWriter, Upsert

T = TypeVar("T")

#: Keys per lookup query.
CHUNK = 500


class _SqlCache(Generic[T]):
    """Lookups in one query per call; writes now, or queued to the run's writer (served from memory
    until committed). Subclasses say which rows are theirs and how values map to columns."""

    model: type[Base]

    def __init__(self, store: Store, writer: StoreWriter | None = None) -> None:
        self.store = store
        self.writer = writer
        self.damaged = 0  # rows that no longer validate (treated as misses)
        self._queued: dict[str, T] = {}
        self._lock = threading.Lock()
        self._prepared: Select[Any] | None = None

    def _select(self, keys: Any) -> Select[Any]:
        """The rows of ``keys`` (a list, or the expanding parameter of :meth:`_statement`)."""
        raise NotImplementedError

    def _statement(self) -> Select[Any]:
        # Built once per cache with an expanding parameter: a lookup per answer then costs no
        # statement construction, and SQLAlchemy's compiled cache serves every chunk size.
        if self._prepared is None:
            self._prepared = self._select(bindparam("keys", expanding=True))
        return self._prepared

    def _load(self, row: Any) -> T:
        """The value of a row this cache selected; raises ValueError, KeyError, TypeError or ValidationError."""
        raise NotImplementedError

    def _columns(self, value: T) -> dict[str, Any] | None:
        """The row's columns but ``key``; None: not to be cached (a failure)."""
        raise NotImplementedError

    def get(self, key: str) -> T | None:
        return self.get_many([key]).get(key)

    def put(self, key: str, value: T) -> None:
        self.put_many({key: value})

    def get_many(self, keys: Iterable[str]) -> dict[str, T]:
        wanted = list(dict.fromkeys(keys))
        with self._lock:
            found = {k: self._queued[k] for k in wanted if k in self._queued}
        rest = [k for k in wanted if k not in found]
        if not rest:
            return found
        statement = self._statement()
        engine = self.store.engine
        with store_errors(self.store.url):
            for start in range(0, len(rest), CHUNK):
                chunk = rest[start : start + CHUNK]
                plan = driver_select(statement, engine.dialect, len(chunk))
                if plan is not None:  # SQLite: at the driver (auditor/store/_lookup.py)
                    rows = driver_rows(engine, plan, chunk)
                else:
                    with engine.connect() as conn:
                        rows = list(conn.execute(statement, {"keys": chunk}))
                for row in rows:
                    try:
                        found[row.key] = self._load(row)
                    except (ValueError, KeyError, TypeError, ValidationError):
                        self.damaged += 1
        return found

    def put_many(self, items: Mapping[str, T]) -> None:
        values: dict[str, dict[str, Any]] = {}
        kept: dict[str, T] = {}
        for key, value in items.items():
            columns = self._columns(value)
            if columns is not None:  # a failure today must not be a verdict tomorrow
                values[key], kept[key] = columns, value
        if not values:
            return
        if self.writer is None:
            with self.store._session() as session:
                write.upsert(session, self.model, values)
            return
        with self._lock:
            self._queued.update(kept)
        done = self.writer.submit(Upsert(self.model, values))
        done.add_done_callback(lambda _: self._forget(kept))

    def _forget(self, kept: dict[str, T]) -> None:
        """Committed (or failed): the database answers for these keys from now on."""
        with self._lock:
            for key, value in kept.items():
                if self._queued.get(key) is value:
                    del self._queued[key]


class SqlVerdictCache(_SqlCache[ClaimVerdict]):
    """Implements :class:`~auditor.judges.VerdictCache`: ``get`` returns None on a miss, ``put`` overwrites.

    Args:
        store: the open store holding the cache.
        identity: the judge whose verdicts this cache receives, recorded beside each row.
        writer: the run's writer, to queue writes to (None: each ``put_many`` commits at once).
    """

    model = CachedVerdictRecord

    def __init__(
        self, store: Store, identity: JudgeIdentity | None = None, writer: StoreWriter | None = None
    ) -> None:
        super().__init__(store, writer)
        self.identity = identity

    def _select(self, keys: Any) -> Select[Any]:
        return select(CachedVerdictRecord.key, CachedVerdictRecord.verdict).where(
            CachedVerdictRecord.key.in_(keys)
        )

    def _load(self, row: Any) -> ClaimVerdict:
        return ClaimVerdict.model_validate(row.verdict)

    def _columns(self, value: ClaimVerdict) -> dict[str, Any] | None:
        if value.label == Label.UNJUDGED:
            return None
        identity = self.identity
        return {
            "verdict": value.model_dump(mode="json"),
            "label": value.label.value,
            "judge_kind": identity.kind if identity else None,
            "judge_model": identity.model if identity else None,
            "judge_prompt_version": identity.prompt_version if identity else None,
            "created_at": datetime.now(UTC),
        }


def _decompositions(kind: str, keys: Any) -> Select[Any]:
    record = CachedDecompositionRecord
    return select(record.key, record.decomposition, record.verdicts, record.errors).where(
        record.key.in_(keys), record.kind == kind
    )


class SqlDecompositionCache(_SqlCache[Decomposition]):
    """Implements :class:`~auditor.judges.DecompositionCache` over the ``decomposition_cache`` table.

    ``get`` returns None on a miss (or a row that no longer validates, counted in :attr:`damaged`);
    ``put`` overwrites, and ignores a decomposition whose call failed.
    """

    model = CachedDecompositionRecord

    def _select(self, keys: Any) -> Select[Any]:
        return _decompositions("decompose", keys)

    def _load(self, row: Any) -> Decomposition:
        return Decomposition.model_validate(row.decomposition)

    def _columns(self, value: Decomposition) -> dict[str, Any] | None:
        if call_failed(value):
            return None
        return {
            "kind": "decompose",
            "extractor": value.extractor,
            "decomposition": value.model_dump(mode="json"),
            "verdicts": None,
            "errors": [],
            "created_at": datetime.now(UTC),
        }


class SqlFusedCache(_SqlCache[FusedResult]):
    """Implements :class:`~auditor.judges.FusedCache` over the ``decomposition_cache`` table.

    ``get`` returns None on a miss (or a damaged row, counted in :attr:`damaged`); ``put``
    overwrites, and ignores a failed result or one with an ``unjudged`` verdict.
    """

    model = CachedDecompositionRecord

    def _select(self, keys: Any) -> Select[Any]:
        return _decompositions("fused", keys)

    def _load(self, row: Any) -> FusedResult:
        return fused_from_json(
            {"decomposition": row.decomposition, "verdicts": row.verdicts, "errors": row.errors}
        )

    def _columns(self, value: FusedResult) -> dict[str, Any] | None:
        if not cacheable_fused(value):
            return None
        return {
            "kind": "fused",
            "extractor": value.decomposition.extractor,
            "created_at": datetime.now(UTC),
            **fused_to_json(value),
        }
