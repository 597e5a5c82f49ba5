"""Breaking parent cycles: each walk stops at a span already known to lead to a root; the cycles
broken, where, and the problems said, are those of walking every span's parents to the end."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime

from auditor.trace import Problem, Span
from auditor.trace._assemble import _break_cycles, _problem

T = datetime(2026, 1, 1, tzinfo=UTC)


def _walk_to_the_end(spans: dict[str, Span], source: str) -> Iterator[Problem]:
    """The rule as first written: every span's parents followed to the end."""
    for span_id in list(spans):
        seen: set[str] = set()
        current: str | None = span_id
        while current is not None and current in spans:
            if current in seen:
                closing = spans[current]
                spans[current] = closing.model_copy(update={"parent_id": None})
                yield _problem(closing, "parent links form a cycle; span treated as a root", source)
                break
            seen.add(current)
            current = spans[current].parent_id


def _spans(parents: list[int | None], names: list[str]) -> dict[str, Span]:
    return {
        names[i]: Span(
            trace_id="t",
            span_id=names[i],
            parent_id=None if p is None else names[p],
            name="s",
            start=T,
            end=T,
        )
        for i, p in enumerate(parents)
    }


def test_random_parent_links_break_the_same_cycles() -> None:
    rng = random.Random(6)
    broken = 0
    for _ in range(3000):
        size = rng.randint(1, 14)
        names = [f"s{n}" for n in rng.sample(range(100), size)]
        parents: list[int | None] = [
            rng.choice([None, rng.randrange(size), rng.randrange(size), rng.randrange(size)])
            for _ in range(size)
        ]
        expected_spans = _spans(parents, names)
        if rng.random() < 0.3:  # a parent outside the trace
            victim = rng.choice(names)
            expected_spans[victim] = expected_spans[victim].model_copy(update={"parent_id": "elsewhere"})
        spans = dict(expected_spans)
        expected = list(_walk_to_the_end(expected_spans, "f"))
        broken += len(expected)
        found = list(_break_cycles(spans, "f"))
        assert found == expected
        assert {k: v.parent_id for k, v in spans.items()} == {
            k: v.parent_id for k, v in expected_spans.items()
        }
        assert list(spans) == list(expected_spans)
    assert broken > 1000  # cycles were there to break
