"""Where cache entries live outside the SQL store: in a dict, or in a JSON-lines file.

:class:`MemoryVerdictCache`, :class:`MemoryDecompositionCache` and :class:`MemoryFusedCache` keep
entries for the life of the process; the ``Jsonl`` ones load a file of ``{"key": ..., "value":
...}`` lines and append to it (a damaged line is skipped and counted in ``damaged_lines``), which
is where an audit without a store keeps its caches (the app directory). They implement the
protocols of :mod:`._cache`, ``get_many`` and ``put_many`` included (one append per call).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from auditor.claims import Decomposition
from auditor.judges._verdicts import ClaimVerdict
from auditor.judges.cache._cache import fused_from_json, fused_to_json
from auditor.judges.llm import FusedResult

T = TypeVar("T")


class _MemoryCache(Generic[T]):
    def __init__(self) -> None:
        self._items: dict[str, T] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def put(self, key: str, value: T) -> None:
        self._items[key] = value

    def get_many(self, keys: Iterable[str]) -> dict[str, T]:
        return {k: self._items[k] for k in keys if k in self._items}

    def put_many(self, items: Mapping[str, T]) -> None:
        self._items.update(items)


class _JsonlCache(_MemoryCache[T]):
    """A memory cache loaded from and appended to a JSON-lines file (``{"key": ..., "value": ...}``)."""

    def __init__(self, path: Path, load: Callable[[Any], T], dump: Callable[[T], Any]) -> None:
        super().__init__()
        self.path = path
        self._dump = dump
        self.damaged_lines = 0
        if path.exists():
            with path.open(encoding="utf-8") as f:
                for line in f:
                    try:
                        row = json.loads(line)
                        super().put(str(row["key"]), load(row["value"]))
                    except (ValueError, KeyError, TypeError, ValidationError):
                        self.damaged_lines += 1

    def put(self, key: str, value: T) -> None:
        self.put_many({key: value})

    def put_many(self, items: Mapping[str, T]) -> None:
        if not items:
            return
        super().put_many(items)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write("".join(json.dumps({"key": k, "value": self._dump(v)}) + "\n" for k, v in items.items()))


class MemoryVerdictCache(_MemoryCache[ClaimVerdict]):
    """Implements :class:`~auditor.judges.VerdictCache` in a dict."""


class JsonlVerdictCache(_JsonlCache[ClaimVerdict]):
    """Implements :class:`~auditor.judges.VerdictCache` over a JSON-lines file (damaged lines skipped and counted)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, ClaimVerdict.model_validate, lambda v: v.model_dump(mode="json"))


class MemoryDecompositionCache(_MemoryCache[Decomposition]):
    """Implements :class:`DecompositionCache` in a dict."""


class JsonlDecompositionCache(_JsonlCache[Decomposition]):
    """Implements :class:`DecompositionCache` over a JSON-lines file (damaged lines skipped and counted)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, Decomposition.model_validate, lambda d: d.model_dump(mode="json"))


class MemoryFusedCache(_MemoryCache[FusedResult]):
    """Implements :class:`FusedCache` in a dict."""


class JsonlFusedCache(_JsonlCache[FusedResult]):
    """Implements :class:`FusedCache` over a JSON-lines file (damaged lines skipped and counted)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, fused_from_json, fused_to_json)
