"""Quote verification: every quote of every judge's verdict is in its item and carries the claim.

Every ``supported`` or ``contradicted`` verdict must cite evidence with a quote that is really in
that item's text, and the quotes must carry the claim (:func:`verify_quotes`, with
:mod:`auditor.judges.verify._carry`) and agree with it (:mod:`auditor.judges.verify._agree`); a
verdict whose quotes are not there, or do not state the claim, becomes ``absent`` and the judge
error is recorded. This is also the defence against evidence that tries to instruct the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from auditor.evidence import Evidence, EvidenceKind, without_call
from auditor.judges._verdicts import Citation, ClaimVerdict, Label, UnjudgedReason
from auditor.judges.reading import claimed, quoted_other, quoted_value, spoken
from auditor.judges.verify._agree import QUOTE_DISAGREES, Disagreement, disagreement, keyed_rival_quoted
from auditor.judges.verify._carry import (
    DOES_NOT_SUPPORT,
    Quoted,
    contradiction_shortfall,
    normalised,
    read_quotes,
    support_shortfall,
)
from auditor.text import normalise


def quote_in(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text``, ignoring case and runs of whitespace."""
    needle = normalise(quote)
    return bool(needle) and needle in normalised(text)  # an item's text is normalised once (cached)


def verify_quotes(
    verdict: ClaimVerdict, evidence: Mapping[str, Evidence], *, claim_text: str
) -> ClaimVerdict:
    """Check every citation against the item it names, then that the quotes carry ``claim_text``.

    A citation naming an unknown item, or quoting text that item does not contain, is dropped and
    recorded in ``judge_errors``. A ``supported`` or ``contradicted`` verdict left with no valid
    citation becomes ``absent``; so does one whose verified quotes, taken together, cannot state the
    claim (``supported``: its figures, dates, entities and enough of its words; ``contradicted``: a
    rival figure, date or entity, or its negation), with ``quote_does_not_support`` in
    ``judge_errors`` and the citations dropped. A common-knowledge verdict is counted apart from
    the rates, so only its quotes' presence is checked.
    """
    kept: list[Citation] = []
    errors = list(verdict.judge_errors)
    for citation in verdict.citations:
        item = evidence.get(citation.evidence_id)
        if item is None:
            errors.append(f"cited unknown or inadmissible evidence {citation.evidence_id!r}")
        elif not quote_in(citation.quote, item.text):
            errors.append(f"quote not found in {citation.evidence_id}: {citation.quote[:80]!r}")
        elif item.kind is EvidenceKind.TOOL_RESULT and not quote_in(citation.quote, without_call(item.text)):
            # the "(called as ...)" line is what the agent asked, not what the tool answered
            errors.append(f"quote only from the tool call of {citation.evidence_id}: {citation.quote[:80]!r}")
        else:
            kept.append(citation)
    label = verdict.label
    rationale = verdict.rationale
    reason = verdict.unjudged_reason
    judged = label in (Label.SUPPORTED, Label.CONTRADICTED)
    why = None
    if judged and not kept:
        why = "no verified quote"
    elif judged and not verdict.common_knowledge:
        triples = [(c.quote, c.evidence_id, evidence[c.evidence_id].text) for c in kept]
        quoted = read_quotes(triples)
        shortfall = (
            support_shortfall(claim_text, quoted)
            if label is Label.SUPPORTED
            else _contradiction_shortfall(claim_text, quoted, triples)
        )
        against = _against(claim_text, triples, shortfall) if label is Label.SUPPORTED else None
        if shortfall is not None and (against is None or not against.certain):
            why = f"{shortfall}, quoted {kept[0].quote[:80]!r}"
            errors.append(DOES_NOT_SUPPORT)
            kept = []
        elif against is not None:
            # the quote holds the claim's words but says otherwise: never support, whatever the
            # judge said (the mark of an obeyed instruction planted in the evidence)
            errors.append(QUOTE_DISAGREES)
            note = f"{against.why}: {against.quote[:80]!r}" + (f" ({rationale})" if rationale else "")
            if against.certain:
                label, rationale = Label.CONTRADICTED, f"the judge said supported, but {note}"
            else:
                label, reason = Label.UNJUDGED, UnjudgedReason.QUOTE_DISAGREES
                rationale = f"the judge said supported, but {note}"
    if why is not None:
        rationale = f"demoted from {label.value}: {why}" + (f" ({rationale})" if rationale else "")
        label = Label.ABSENT
    return verdict.model_copy(
        update={
            "label": label,
            "citations": tuple(kept),
            "judge_errors": tuple(errors),
            "rationale": rationale,
            "unjudged_reason": reason,
        }
    )


def _against(
    claim_text: str, triples: Sequence[tuple[str, str, str]], shortfall: str | None
) -> Disagreement | None:
    """How the quotes of a ``supported`` verdict disagree with the claim: :func:`disagreement`
    when they carry it, else (or when it is not certain) another price, event date or status of
    the claim's thing (:func:`quoted_value`), certain when surely about it and then found even
    where the quotes lack the claim's figure ("The X200 costs $59" quoted for "... costs $49")."""
    against = disagreement(claim_text, triples) if shortfall is None else None
    if against is not None and against.certain:
        return against
    other = quoted_value(claim_text, triples)
    c = claimed(claim_text)
    if other is None or c is None or (shortfall is not None and not other[1]):
        return against
    value, certain = other
    why = f"the quote says {spoken(value.value)} where the claim says {spoken(c.value)}"
    return Disagreement(why, certain, value.quote)


def _contradiction_shortfall(
    claim_text: str, quoted: Quoted, triples: Sequence[tuple[str, str, str]]
) -> str | None:
    """None when the quotes contradict the claim: by :func:`contradiction_shortfall`, by a
    certain disagreement (a supported verdict the check turned, checked again in the pipeline), or
    by another price, event date or status of the claim's thing (:func:`quoted_other`: the other
    side of a conflict by attribute)."""
    shortfall = contradiction_shortfall(claim_text, quoted)
    if shortfall is None:
        return None
    against = disagreement(claim_text, triples)
    if against is not None and against.certain:
        return None
    if keyed_rival_quoted(claim_text, triples) or quoted_other(claim_text, triples) is not None:
        return None
    return shortfall
