"""Looking an adapter up once per input file reads no distribution metadata after the first time,
and names the same distributions as reading it afresh."""

from __future__ import annotations

from importlib import metadata

import pytest

from auditor.trace import get_adapter, installed_adapters
from auditor.trace._adapters import ENTRY_POINT_GROUP


def test_the_distributions_named_are_the_ones_read_afresh() -> None:
    fresh = {
        ep.name: (ep.dist.name if ep.dist is not None else "?")
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
    }
    found = {a.name: a.distribution for a in installed_adapters()}
    assert found == {name: fresh[name] for name in found}
    assert found["otlp-json"] == "auditor-otel"


def test_later_lookups_read_no_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    installed_adapters()
    reads: list[str] = []
    original = metadata.PathDistribution.read_text

    def counted(self: metadata.PathDistribution, filename: str) -> str | None:
        reads.append(filename)
        return original(self, filename)

    monkeypatch.setattr(metadata.PathDistribution, "read_text", counted)
    for _ in range(3):
        get_adapter("otlp-json")
        installed_adapters()
    assert reads == []
