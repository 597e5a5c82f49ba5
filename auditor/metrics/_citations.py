"""Citation coverage and citation support, apart: a marker is not support.

Coverage is the share of judged claims that carry a citation marker in the answer text. Support is
the share of those markers whose cited source is one the judge's verified quotes for a supported
claim come from. A marker is matched to an evidence item of its answer by its content (``[doc-3]``,
``[1, 2]``, ``(source: KB-7)``, a URL) against the item's ``evidence_id``, ``document_id`` or
``url``; a marker that names no item of the answer cannot be shown to support anything and counts
in the denominator only. See ``docs/metrics.md``, "Citations".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from auditor.metrics._model import CitationFigures
from auditor.metrics._rates import claim_status, rate
from auditor.results import AnswerOut, EvidenceOut

_PREFIX = re.compile(r"^(?:sources?|refs?|references?|citations?)\s*:\s*", re.IGNORECASE)
_JUDGED = ("supported", "contradicted", "absent")


def marker_names(marker: str) -> set[str]:
    """The names a marker cites, lower-cased: ``[1, 2]`` -> {1, 2}; ``(source: KB-7)`` -> {kb-7}."""
    text = marker.strip()
    if len(text) >= 2 and text[0] in "[(" and text[-1] in "])":
        text = _PREFIX.sub("", text[1:-1].strip())
    return {part.strip().rstrip(".,;").lower() for part in re.split(r"[,;]", text) if part.strip()}


def _item_names(item: EvidenceOut) -> set[str]:
    names = {item.evidence_id, item.document_id, item.url}
    return {n.lower() for n in names if n}


def citation_figures(
    answers: Sequence[AnswerOut], markers: Mapping[str, Sequence[str]]
) -> CitationFigures | None:
    """Coverage and support over judged claims of non-refusal answers, or None when no judged claim has a marker.

    Args:
        answers: the audited answers.
        markers: the raw citation markers written in the answer text, by claim id.
    """
    judged = with_marker = marker_count = supporting = 0
    for answer in answers:
        if answer.refusal is True:
            continue
        for claim in answer.claims or []:
            status = claim_status(claim)
            if status not in _JUDGED:
                continue
            judged += 1
            written = list(markers.get(claim.claim_id, ()))
            if not written:
                continue
            with_marker += 1
            marker_count += len(written)
            if status != "supported":
                continue
            quoted = {c.evidence_id for c in claim.citations}
            for marker in written:
                names = marker_names(marker)
                cited = {e.evidence_id for e in answer.evidence if _item_names(e) & names}
                supporting += bool(cited & quoted)
    if with_marker == 0:
        return None
    return CitationFigures(coverage=rate(with_marker, judged), support=rate(supporting, marker_count))
