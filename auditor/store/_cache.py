"""The caches in the SQL store: verdicts, decompositions and fused results over tables.

A re-audit of the same claims on the same evidence by the same judge costs no calls, across
processes and machines sharing a database. Keys come from :func:`auditor.judges._cache.cache_key` (they
already include the judge identity); the identity columns are kept beside each row so the cache
can be inspected and pruned by judge.

:class:`SqlDecompositionCache` (:class:`auditor.judges.DecompositionCache`) and
:class:`SqlFusedCache` (:class:`auditor.judges.FusedCache`) share the ``decomposition_cache`` table
(``kind`` tells them apart; keys from :func:`auditor.judges._cache.decomposition_key` and
:func:`auditor.judges._cache.fused_key` never collide), so an LLM decomposer or fused mode costs no calls
on a re-audit either.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

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
from auditor.store._schema import Base, CachedDecompositionRecord, CachedVerdictRecord
from auditor.store._store import Store


def _upsert(engine: Engine, model: type[Base], key: str, values: dict[str, Any]) -> None:
    """Insert the row ``key`` or overwrite its ``values``; a concurrent insert of the key is retried as an update."""
    for _attempt in range(2):
        try:
            with Session(engine) as session, session.begin():
                row = session.get(model, key)
                if row is None:
                    session.add(model(key=key, **values))
                else:
                    for name, value in values.items():
                        setattr(row, name, value)
            return
        except IntegrityError:
            continue  # another writer inserted the key meanwhile: update it instead


class SqlVerdictCache:
    """Implements :class:`~auditor.judges.VerdictCache`: ``get`` returns None on a miss, ``put`` overwrites.

    Args:
        store: the open store holding the cache.
        identity: the judge whose verdicts this cache receives, recorded beside each row.
    """

    def __init__(self, store: Store, identity: JudgeIdentity | None = None) -> None:
        self.store = store
        self.identity = identity
        self.damaged = 0  # rows that no longer validate as a verdict (treated as misses)

    def get(self, key: str) -> ClaimVerdict | None:
        with Session(self.store.engine) as session:
            row = session.get(CachedVerdictRecord, key)
            if row is None:
                return None
            try:
                return ClaimVerdict.model_validate(row.verdict)
            except ValidationError:
                self.damaged += 1
                return None

    def put(self, key: str, verdict: ClaimVerdict) -> None:
        if verdict.label == Label.UNJUDGED:
            return  # a failure today must not be a verdict tomorrow
        identity = self.identity
        values = {
            "verdict": verdict.model_dump(mode="json"),
            "label": verdict.label.value,
            "judge_kind": identity.kind if identity else None,
            "judge_model": identity.model if identity else None,
            "judge_prompt_version": identity.prompt_version if identity else None,
            "created_at": datetime.now(UTC),
        }
        _upsert(self.store.engine, CachedVerdictRecord, key, values)


def _row(store: Store, key: str, kind: str) -> CachedDecompositionRecord | None:
    with Session(store.engine) as session:
        row = session.get(CachedDecompositionRecord, key)
        return row if row is not None and row.kind == kind else None


class SqlDecompositionCache:
    """Implements :class:`~auditor.judges.DecompositionCache` over the ``decomposition_cache`` table.

    ``get`` returns None on a miss (or a row that no longer validates, counted in :attr:`damaged`);
    ``put`` overwrites, and ignores a decomposition whose call failed.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.damaged = 0

    def get(self, key: str) -> Decomposition | None:
        row = _row(self.store, key, "decompose")
        if row is None:
            return None
        try:
            return Decomposition.model_validate(row.decomposition)
        except ValidationError:
            self.damaged += 1
            return None

    def put(self, key: str, decomposition: Decomposition) -> None:
        if call_failed(decomposition):
            return  # a failed call today must not be the decomposition tomorrow
        _upsert(
            self.store.engine,
            CachedDecompositionRecord,
            key,
            {
                "kind": "decompose",
                "extractor": decomposition.extractor,
                "decomposition": decomposition.model_dump(mode="json"),
                "verdicts": None,
                "errors": [],
                "created_at": datetime.now(UTC),
            },
        )


class SqlFusedCache:
    """Implements :class:`~auditor.judges.FusedCache` over the ``decomposition_cache`` table.

    ``get`` returns None on a miss (or a damaged row, counted in :attr:`damaged`); ``put``
    overwrites, and ignores a failed result or one with an ``unjudged`` verdict.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.damaged = 0

    def get(self, key: str) -> FusedResult | None:
        row = _row(self.store, key, "fused")
        if row is None:
            return None
        try:
            return fused_from_json(
                {"decomposition": row.decomposition, "verdicts": row.verdicts, "errors": row.errors}
            )
        except (ValueError, KeyError, TypeError, ValidationError):
            self.damaged += 1
            return None

    def put(self, key: str, result: FusedResult) -> None:
        if not cacheable_fused(result):
            return
        data = fused_to_json(result)
        _upsert(
            self.store.engine,
            CachedDecompositionRecord,
            key,
            {
                "kind": "fused",
                "extractor": result.decomposition.extractor,
                "created_at": datetime.now(UTC),
                **data,
            },
        )
