"""The verdict cache: a re-audit of the same claims on the same evidence makes no judge calls.

Key: the claim's text, a digest of the evidence (admitted ids and texts, and the excluded ones,
which decide ``inadmissible_support``), whether common knowledge was allowed, and the judge
identity (kind, model, prompt version). Change any of them and the verdict is judged afresh.
Failures (``unjudged``) are never cached: a timeout today must not be a verdict tomorrow.

Storage sits behind the small :class:`VerdictCache` protocol: :class:`MemoryVerdictCache`, and
:class:`JsonlVerdictCache` (one JSON object per line, appended; a damaged line is skipped and
counted). The SQL store will provide another implementation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from auditor.claims_model import Claim
from auditor.evidence_model import Answer, Evidence
from auditor.text import short_digest
from auditor.verdicts import ClaimVerdict, Judge, JudgeIdentity, Label, check_complete


class VerdictCache(Protocol):
    """Stores verdicts by key. ``get`` returns None on a miss; ``put`` overwrites."""

    def get(self, key: str) -> ClaimVerdict | None: ...

    def put(self, key: str, verdict: ClaimVerdict) -> None: ...


def evidence_digest(admitted: Sequence[Evidence], excluded: Sequence[Evidence]) -> str:
    """Order-independent digest of the admitted and excluded items (ids and full texts)."""
    def part(items: Sequence[Evidence]) -> str:
        return short_digest(*sorted(short_digest(e.evidence_id, e.text, length=64) for e in items), length=64)

    return short_digest("admitted", part(admitted), "excluded", part(excluded), length=64)


def cache_key(claim_text: str, digest: str, identity: JudgeIdentity, allow_common_knowledge: bool = False) -> str:
    return short_digest(claim_text, digest, identity.kind, identity.model or "", identity.prompt_version or "",
                        "ck" if allow_common_knowledge else "", length=64)


class MemoryVerdictCache:
    def __init__(self) -> None:
        self._items: dict[str, ClaimVerdict] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> ClaimVerdict | None:
        return self._items.get(key)

    def put(self, key: str, verdict: ClaimVerdict) -> None:
        self._items[key] = verdict


class JsonlVerdictCache(MemoryVerdictCache):
    """The memory cache, loaded from and appended to a JSON-lines file."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.damaged_lines = 0
        if path.exists():
            with path.open(encoding="utf-8") as f:
                for line in f:
                    try:
                        row = json.loads(line)
                        super().put(str(row["key"]), ClaimVerdict.model_validate(row["verdict"]))
                    except (ValueError, KeyError, TypeError, ValidationError):
                        self.damaged_lines += 1

    def put(self, key: str, verdict: ClaimVerdict) -> None:
        super().put(key, verdict)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"key": key, "verdict": verdict.model_dump(mode="json")}) + "\n")


class CachingJudge:
    """Implements :class:`~auditor.verdicts.Judge`: cached verdicts first, ``inner`` for the misses.

    Args:
        inner: the judge to ask on a miss (its identity is part of the key).
        cache: where verdicts live.
    """

    def __init__(self, inner: Judge, cache: VerdictCache) -> None:
        self.inner = inner
        self.cache = cache
        self.identity: JudgeIdentity = inner.identity
        self.hits = 0
        self.misses = 0

    async def judge(self, answer: Answer, claims: Sequence[Claim], admitted: Sequence[Evidence],
                    excluded: Sequence[Evidence], allow_common_knowledge: bool = False) -> list[ClaimVerdict]:
        digest = evidence_digest(admitted, excluded)
        keys = {c.claim_id: cache_key(c.text, digest, self.identity, allow_common_knowledge) for c in claims}
        found: dict[str, ClaimVerdict] = {}
        missing: list[Claim] = []
        for claim in claims:
            hit = self.cache.get(keys[claim.claim_id])
            if hit is None:
                missing.append(claim)
            else:
                found[claim.claim_id] = hit.model_copy(update={"claim_id": claim.claim_id, "settled_by": "cache"})
        self.hits += len(found)
        self.misses += len(missing)
        if missing:
            for verdict in await self.inner.judge(answer, missing, admitted, excluded, allow_common_knowledge):
                found[verdict.claim_id] = verdict
                if verdict.label != Label.UNJUDGED and verdict.claim_id in keys:
                    self.cache.put(keys[verdict.claim_id], verdict)
        return check_complete(claims, list(found.values()), settled_by="cache")
