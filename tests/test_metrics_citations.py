"""Citation coverage, support and misattribution from the claims' judged markers: a marker is not support."""

from __future__ import annotations

from auditor.metrics import summarise
from auditor.results import CitationMarkerOut, ClaimOut
from tests.test_metrics import ans, cl, figures


def marked(claim: ClaimOut, *checks: tuple[str, bool | None], misattributed: bool = False) -> ClaimOut:
    return claim.model_copy(
        update={
            "markers": [m for m, _ in checks],
            "citation_markers": [
                CitationMarkerOut(marker=m, evidence_ids=["e1"] if s is not None else [], supports=s)
                for m, s in checks
            ],
            "misattributed": misattributed,
        }
    )


def test_coverage_support_and_misattribution_are_apart() -> None:
    answers = [
        ans(
            "a",
            [
                marked(cl("c1", "supported", "e1"), ("[1]", True)),  # its cited item supports it
                marked(
                    cl("c2", "supported", "e1"), ("[2]", False), misattributed=True
                ),  # supported elsewhere
                marked(cl("c3", "absent"), ("[1]", False)),  # a marker on an absent claim: never support
                cl("c4", "supported", "e2"),  # no marker
                marked(cl("c5", "supported", "e1"), ("[7]", None)),  # names nothing: denominator only
                marked(cl("c6", "unjudged"), ("[1]", None)),  # not judged: outside every figure
            ],
            grounded=False,
        ),
        ans("r", [marked(cl("r1", "supported", "e1"), ("[1]", True))], grounded=None, refusal=True),
    ]
    s = summarise(answers)
    assert s.citations is not None
    assert figures(s.citations.coverage) == (4, 5)  # c1, c2, c3, c5 of the five judged claims
    assert figures(s.citations.support) == (1, 4)
    assert figures(s.citations.misattribution) == (1, 4)  # c2 of the four claims with a marker
    assert s.citations.unresolved == 1
    assert s.citations.coverage.wilson is None  # claim-level: no interval


def test_each_marker_counts_once_and_an_unchecked_marker_never_supports() -> None:
    claim = marked(cl("c1", "supported", "e1"), ("[doc-1]", True), ("[e2]", False))
    unchecked = cl("c2", "supported", "e1").model_copy(update={"markers": ["[3]"]})  # no citation_markers
    s = summarise([ans("a", [claim, unchecked], grounded=True)])
    assert s.citations is not None
    assert figures(s.citations.coverage) == (2, 2)
    assert figures(s.citations.support) == (1, 3)
    assert s.citations.unresolved == 1
    assert figures(s.citations.misattribution) == (0, 2)  # c1 is supported by one of its cited items
