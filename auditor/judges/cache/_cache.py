"""The verdict cache: a re-audit of the same claims on the same evidence makes no judge calls.

Key: the claim's text, a digest of the evidence (admitted ids and texts, and the excluded ones,
which decide ``inadmissible_support``), whether common knowledge was allowed, and the judge
identity (kind, model, prompt version), the endpoint that judged it (``base_url``) and the judge's
settings that change a verdict (:func:`settings_of`: the sampling temperature, the evidence budget
of the prompt, whether the cascade's offline stage ran first). Change any of them and the verdict
is judged afresh.
Failures (``unjudged``) are never cached: a timeout today must not be a verdict tomorrow.

Storage sits behind the small :class:`VerdictCache` protocol: in a dict or a JSON-lines file
(:mod:`._cache_files`), and in the SQL store (:class:`auditor.store.SqlVerdictCache`).

Decompositions are cached the same way, so a re-audit with an LLM decomposer or in fused mode makes
no calls either: :class:`CachingExtractor` (a :class:`~auditor.claims.ClaimExtractor`) keyed
by :func:`decomposition_key` (answer text, question, extractor identity, endpoint, settings), and
:class:`CachingFused` (decomposition and verdicts in one) keyed by :func:`fused_key` (answer text,
question, evidence digest, identity, common knowledge, endpoint, settings). A decomposition whose call failed, and a fused result with an
``unjudged`` verdict, are never cached. Storage: the :class:`DecompositionCache` and
:class:`FusedCache` protocols, memory and JSON-lines implementations in :mod:`._cache_files`, SQL
ones in :mod:`auditor.store._cache` (table ``decomposition_cache``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from auditor.claims import Claim, Decomposition
from auditor.evidence import Answer, Evidence
from auditor.judges._verdicts import ClaimVerdict, Judge, JudgeIdentity, Label, check_complete, settings_of
from auditor.judges.llm import FusedResult, call_failed
from auditor.text import short_digest


class VerdictCache(Protocol):
    """Stores verdicts by key. ``get`` returns None on a miss; ``put`` overwrites.

    ``get_many`` returns the entries found (a missing key is absent from the result) and
    ``put_many`` stores several: what :class:`CachingJudge` calls, once per answer, so a store can
    answer all the claims of an answer in one query and write them in one transaction.
    """

    def get(self, key: str) -> ClaimVerdict | None: ...

    def put(self, key: str, verdict: ClaimVerdict) -> None: ...

    def get_many(self, keys: Iterable[str]) -> dict[str, ClaimVerdict]: ...

    def put_many(self, items: Mapping[str, ClaimVerdict]) -> None: ...


def evidence_digest(admitted: Sequence[Evidence], excluded: Sequence[Evidence]) -> str:
    """Order-independent digest of the admitted and excluded items (ids and full texts)."""

    def part(items: Sequence[Evidence]) -> str:
        return short_digest(*sorted(short_digest(e.evidence_id, e.text, length=64) for e in items), length=64)

    return short_digest("admitted", part(admitted), "excluded", part(excluded), length=64)


def cache_key(
    claim_text: str,
    digest: str,
    identity: JudgeIdentity,
    allow_common_knowledge: bool = False,
    endpoint: str = "",
    settings: Sequence[str] = (),
) -> str:
    """Key of a claim's verdict: the claim, :func:`evidence_digest`, the judge's identity, common
    knowledge, the endpoint that judged it (another server with the same model name may
    judge otherwise) and its :func:`settings_of`."""
    return short_digest(
        claim_text,
        digest,
        *_identity_parts(identity, endpoint, settings),
        "ck" if allow_common_knowledge else "",
        length=64,
    )


class _Cached:
    """What each caching wrapper keeps: the component it wraps, where results live, the endpoint
    and settings that are part of every key (a changed one is a miss), and hit and miss counts."""

    def __init__(self, inner: Any, cache: Any, endpoint: str) -> None:
        self.inner = inner
        self.cache = cache
        self.endpoint = endpoint
        self.settings = settings_of(inner)
        self.hits = 0
        self.misses = 0


class CachingJudge(_Cached):
    """Implements :class:`~auditor.judges.Judge`: cached verdicts first, ``inner`` for the misses.

    Args:
        inner: the judge to ask on a miss (its identity and :func:`settings_of` are part of the key).
        cache: where verdicts live.
        endpoint: the server ``inner`` asks (``LLMClient.endpoint``), part of the key.
    """

    inner: Judge
    cache: VerdictCache

    def __init__(self, inner: Judge, cache: VerdictCache, *, endpoint: str = "") -> None:
        super().__init__(inner, cache, endpoint)
        self.identity: JudgeIdentity = inner.identity

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        digest = evidence_digest(admitted, excluded)
        keys = {
            c.claim_id: cache_key(
                c.text, digest, self.identity, allow_common_knowledge, self.endpoint, self.settings
            )
            for c in claims
        }
        cached = self.cache.get_many(keys.values()) if keys else {}  # one lookup for the whole answer
        found: dict[str, ClaimVerdict] = {}
        missing: list[Claim] = []
        for claim in claims:
            hit = cached.get(keys[claim.claim_id])
            if hit is None:
                missing.append(claim)
            else:
                found[claim.claim_id] = hit.model_copy(
                    update={"claim_id": claim.claim_id, "settled_by": "cache"}
                )
        self.hits += len(found)
        self.misses += len(missing)
        if missing:
            fresh: dict[str, ClaimVerdict] = {}
            for verdict in await self.inner.judge(
                answer, missing, admitted, excluded, allow_common_knowledge
            ):
                found[verdict.claim_id] = verdict
                if verdict.label != Label.UNJUDGED and verdict.claim_id in keys:
                    fresh[keys[verdict.claim_id]] = verdict
            if fresh:
                self.cache.put_many(fresh)
        return check_complete(claims, list(found.values()), settled_by="cache")


# -- decompositions and fused results ------------------------------------------------------------


class DecompositionCache(Protocol):
    """Stores decompositions by key. ``get`` returns None on a miss; ``put`` overwrites; ``get_many``
    and ``put_many`` as for :class:`VerdictCache` (a run's answers are decomposed in one batch)."""

    def get(self, key: str) -> Decomposition | None: ...

    def put(self, key: str, decomposition: Decomposition) -> None: ...

    def get_many(self, keys: Iterable[str]) -> dict[str, Decomposition]: ...

    def put_many(self, items: Mapping[str, Decomposition]) -> None: ...


class FusedCache(Protocol):
    """Stores fused results (decomposition and verdicts) by key. ``get`` returns None on a miss."""

    def get(self, key: str) -> FusedResult | None: ...

    def put(self, key: str, result: FusedResult) -> None: ...


def _identity_parts(
    identity: JudgeIdentity, endpoint: str = "", settings: Sequence[str] = ()
) -> tuple[str, ...]:
    parts = (identity.kind, identity.model or "", identity.prompt_version or "", *settings)
    # no endpoint (the offline judge): the key is what it was before endpoints were keyed
    return (*parts, f"endpoint={endpoint}") if endpoint else parts


def decomposition_key(
    answer: Answer, identity: JudgeIdentity, endpoint: str = "", settings: Sequence[str] = ()
) -> str:
    """Key of an answer's decomposition: its text, its question, the extractor (kind, model,
    prompt version), its endpoint and its :func:`settings_of`."""
    return short_digest(
        "decompose",
        answer.text,
        answer.question or "",
        *_identity_parts(identity, endpoint, settings),
        length=64,
    )


def fused_key(
    answer: Answer,
    digest: str,
    identity: JudgeIdentity,
    allow_common_knowledge: bool = False,
    endpoint: str = "",
    settings: Sequence[str] = (),
) -> str:
    """Key of a fused result: answer text, question, :func:`evidence_digest`, identity, common
    knowledge, endpoint, :func:`settings_of`."""
    return short_digest(
        "fused",
        answer.text,
        answer.question or "",
        digest,
        *_identity_parts(identity, endpoint, settings),
        "ck" if allow_common_knowledge else "",
        length=64,
    )


def fused_to_json(result: FusedResult) -> dict[str, Any]:
    return {
        "decomposition": result.decomposition.model_dump(mode="json"),
        "verdicts": [v.model_dump(mode="json") for v in result.verdicts],
        "errors": list(result.errors),
    }


def fused_from_json(data: Any) -> FusedResult:
    """The inverse of :func:`fused_to_json`; raises ValueError, KeyError, TypeError or ValidationError."""
    return FusedResult(
        Decomposition.model_validate(data["decomposition"]),
        [ClaimVerdict.model_validate(v) for v in data["verdicts"]],
        [str(e) for e in data.get("errors", [])],
    )


def cacheable_fused(result: FusedResult) -> bool:
    """A fused result may be cached when its call succeeded and none of its verdicts is ``unjudged``."""
    return not result.failed and all(v.label != Label.UNJUDGED for v in result.verdicts)


def rebase(decomposition: Decomposition, answer_id: str) -> tuple[Decomposition, dict[str, str]]:
    """``decomposition`` moved to ``answer_id`` (a cache hit from an answer with the same text).

    Claim ids ``{old answer id}:cN`` become ``{answer_id}:cN``; returns the new decomposition and
    the map old claim id -> new claim id.
    """
    old = decomposition.answer_id
    ids: dict[str, str] = {}
    claims = []
    for n, claim in enumerate(decomposition.claims):
        suffix = claim.claim_id[len(old) :] if claim.claim_id.startswith(old + ":") else f":c{n}"
        ids[claim.claim_id] = answer_id + suffix
        claims.append(claim.model_copy(update={"claim_id": ids[claim.claim_id], "answer_id": answer_id}))
    return decomposition.model_copy(update={"answer_id": answer_id, "claims": tuple(claims)}), ids


class IdentifiedExtractor(Protocol):
    """A :class:`~auditor.claims.ClaimExtractor` that names what decides its output."""

    name: str
    identity: JudgeIdentity

    async def decompose(self, answers: Sequence[Answer]) -> list[Decomposition]: ...


class CachingExtractor(_Cached):
    """Implements :class:`~auditor.claims.ClaimExtractor`: cached decompositions first, ``inner`` for the misses.

    Args:
        inner: the extractor to ask on a miss (e.g. :class:`~auditor.judges.LLMDecomposer`);
            its ``identity`` (kind, model, prompt version) is part of the key.
        cache: where decompositions live.

    Answers with the same text and question share one entry (and one call within a batch). A
    decomposition whose call failed (:func:`~auditor.judges.call_failed`) is not cached.
    """

    inner: IdentifiedExtractor
    cache: DecompositionCache

    def __init__(self, inner: IdentifiedExtractor, cache: DecompositionCache, *, endpoint: str = "") -> None:
        super().__init__(inner, cache, endpoint)
        self.name = inner.name
        self.identity = inner.identity

    async def decompose(self, answers: Sequence[Answer]) -> list[Decomposition]:
        keys = [decomposition_key(a, self.identity, self.endpoint, self.settings) for a in answers]
        found: dict[str, Decomposition] = self.cache.get_many(keys) if keys else {}
        missing: dict[str, Answer] = {}
        for answer, key in zip(answers, keys, strict=True):
            if key not in found and key not in missing:
                missing[key] = answer
        self.hits += len(found)
        self.misses += len(missing)
        if missing:
            fresh = await self.inner.decompose(list(missing.values()))
            kept: dict[str, Decomposition] = {}
            for key, decomposition in zip(missing, fresh, strict=True):
                found[key] = decomposition
                if not call_failed(decomposition):
                    kept[key] = decomposition
            if kept:
                self.cache.put_many(kept)
        result = []
        for answer, key in zip(answers, keys, strict=True):
            decomposition = found[key]
            result.append(
                decomposition
                if decomposition.answer_id == answer.answer_id
                else rebase(decomposition, answer.answer_id)[0]
            )
        return result


class IdentifiedFused(Protocol):
    """What :class:`CachingFused` wraps: :class:`~auditor.judges.FusedAuditor` or alike."""

    identity: JudgeIdentity

    async def audit(
        self,
        answer: Answer,
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> FusedResult: ...


class CachingFused(_Cached):
    """Fused mode with a cache: a re-audit of the same answer on the same evidence makes no call.

    Args:
        inner: the :class:`~auditor.judges.FusedAuditor` to ask on a miss.
        cache: where fused results live.

    Hits come back with their verdicts ``settled_by="cache"`` and ids moved to the answer at hand.
    A result with an ``unjudged`` verdict (a failed call, a missing label) is never cached.
    Concurrent audits of answers with the same key each call ``inner`` (one call per answer).
    """

    inner: IdentifiedFused
    cache: FusedCache

    def __init__(self, inner: IdentifiedFused, cache: FusedCache, *, endpoint: str = "") -> None:
        super().__init__(inner, cache, endpoint)
        self.identity: JudgeIdentity = inner.identity

    async def audit(
        self,
        answer: Answer,
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> FusedResult:
        digest = evidence_digest(admitted, excluded)
        key = fused_key(answer, digest, self.identity, allow_common_knowledge, self.endpoint, self.settings)
        hit = self.cache.get(key)
        if hit is None:
            self.misses += 1
            result = await self.inner.audit(answer, admitted, excluded, allow_common_knowledge)
            if cacheable_fused(result):
                self.cache.put(key, result)
            return result
        self.hits += 1
        decomposition, ids = rebase(hit.decomposition, answer.answer_id)
        verdicts = [
            v.model_copy(update={"claim_id": ids.get(v.claim_id, v.claim_id), "settled_by": "cache"})
            for v in hit.verdicts
        ]
        return FusedResult(decomposition, verdicts, list(hit.errors))
