"""The verdict cache in the SQL store: :class:`auditor.cache.VerdictCache` over a table.

A re-audit of the same claims on the same evidence by the same judge costs no calls, across
processes and machines sharing a database. Keys come from :func:`auditor.cache.cache_key` (they
already include the judge identity); the identity columns are kept beside each row so the cache
can be inspected and pruned by judge.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from auditor.store.schema import CachedVerdictRecord
from auditor.store.store import Store
from auditor.verdicts import ClaimVerdict, JudgeIdentity, Label


class SqlVerdictCache:
    """Implements :class:`~auditor.cache.VerdictCache`: ``get`` returns None on a miss, ``put`` overwrites.

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
            "verdict": verdict.model_dump(mode="json"), "label": verdict.label.value,
            "judge_kind": identity.kind if identity else None,
            "judge_model": identity.model if identity else None,
            "judge_prompt_version": identity.prompt_version if identity else None,
            "created_at": datetime.now(UTC),
        }
        for _attempt in range(2):
            try:
                with Session(self.store.engine) as session, session.begin():
                    row = session.get(CachedVerdictRecord, key)
                    if row is None:
                        session.add(CachedVerdictRecord(key=key, **values))
                    else:
                        for name, value in values.items():
                            setattr(row, name, value)
                return
            except IntegrityError:
                continue  # another writer inserted the key meanwhile: update it instead
