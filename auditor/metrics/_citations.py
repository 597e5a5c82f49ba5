"""Citation coverage, citation support and misattribution, apart: a marker is not support.

Read from the public result: each claim's ``markers`` (as written) and ``citation_markers`` (each
marker resolved and judged against the item it cites, :mod:`auditor.judges.verify._attribution`).
Over judged claims of non-refusal answers:

- coverage: claims with a marker / judged claims;
- support: markers whose cited item supports the claim (``supports: true``) / markers; a marker
  that resolves to nothing admitted (``supports: null``) stays in the denominator, and so does one
  written but never checked (a result made without ``citation_markers``);
- misattribution: claims ``misattributed`` (supported, but by no item their markers cite) /
  claims with a marker.

See ``docs/metrics.md``, "Citations".
"""

from __future__ import annotations

from collections.abc import Sequence

from auditor.metrics._model import CitationFigures
from auditor.metrics._rates import claim_status, rate
from auditor.results import AnswerOut

_JUDGED = ("supported", "contradicted", "absent")


def citation_figures(answers: Sequence[AnswerOut]) -> CitationFigures | None:
    """The citation figures, or None when no judged claim of a non-refusal answer carries a marker."""
    judged = with_marker = marker_count = supporting = unresolved = misattributed = 0
    for answer in answers:
        if answer.refusal is True:
            continue
        for claim in answer.claims or []:
            if claim_status(claim) not in _JUDGED:
                continue
            judged += 1
            if not claim.markers:
                continue
            with_marker += 1
            marker_count += len(claim.markers)
            checked = {m.marker: m.supports for m in claim.citation_markers}
            supporting += sum(checked.get(m) is True for m in claim.markers)
            unresolved += sum(checked.get(m) is None for m in claim.markers)
            misattributed += claim.misattributed
    if with_marker == 0:
        return None
    return CitationFigures(
        coverage=rate(with_marker, judged),
        support=rate(supporting, marker_count),
        misattribution=rate(misattributed, with_marker),
        unresolved=unresolved,
    )
