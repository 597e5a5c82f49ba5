"""Citation coverage and support: a marker is not support."""

from __future__ import annotations

import pytest

from auditor.metrics import summarise
from auditor.metrics._citations import marker_names
from tests.test_metrics import ans, cl, ev, figures


@pytest.mark.parametrize(
    ("marker", "names"),
    [
        ("[1]", {"1"}),
        ("[1, 2]", {"1", "2"}),
        ("[doc-3]", {"doc-3"}),
        ("(source: KB-7)", {"kb-7"}),
        ("(sources: a; b)", {"a", "b"}),
        ("https://example.com/p.", {"https://example.com/p"}),
    ],
)
def test_marker_names(marker: str, names: set[str]) -> None:
    assert marker_names(marker) == names


def test_coverage_and_support_are_apart() -> None:
    evidence = [ev("e1", "kb", "doc-1"), ev("e2", "kb", "doc-2")]
    answers = [
        ans(
            "a",
            [
                cl("c1", "supported", "e1"),  # marker names e1, the item quoted: support
                cl("c2", "supported", "e1"),  # marker names e2, but the quote is from e1: not support
                cl("c3", "absent"),  # a marker on an absent claim: never support
                cl("c4", "supported", "e2"),  # no marker
                cl("c5", "supported", "e1"),  # marker that names no item of the answer: not support
                cl("c6", "unjudged"),  # not judged: outside both figures
            ],
            grounded=False,
            evidence=evidence,
        ),
        ans("r", [], grounded=None, refusal=True),
    ]
    markers = {
        "c1": ("(source: DOC-1)",),
        "c2": ("[doc-2]",),
        "c3": ("[e1]",),
        "c5": ("[7]",),
        "c6": ("[e1]",),
    }
    s = summarise(answers, markers=markers)
    assert s.citations is not None
    assert figures(s.citations.coverage) == (4, 5)  # c1, c2, c3, c5 of the five judged claims
    assert figures(s.citations.support) == (1, 4)
    assert s.citations.coverage.wilson is None  # claim-level: no interval


def test_each_marker_counts_once() -> None:
    answers = [ans("a", [cl("c1", "supported", "e1")], grounded=True)]
    s = summarise(answers, markers={"c1": ("[doc-1]", "[e2]")})
    assert s.citations is not None
    assert figures(s.citations.coverage) == (1, 1)
    assert figures(s.citations.support) == (1, 2)  # e2 is not what the verdict quoted
