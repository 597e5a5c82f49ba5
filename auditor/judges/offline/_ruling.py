"""The rules' reading of one claim: the rule-based verdict and the name of the rule behind it.

:func:`rule_verdict` applies the offline judge's rules in order (an unknown or flipped record
attribute, a value the record leaves unstated, support by one window or several items, a missing
entity, a rival or missing figure, the opposite polarity, too little coverage) and names the rule
that gave the verdict (:data:`~auditor.judges.offline._features.RULES`). Whether that reading is
decisive is for the support score to say (:mod:`auditor.judges.offline._offline`).
"""

from __future__ import annotations

from collections.abc import Sequence

from auditor.claims import Claim
from auditor.judges._verdicts import Citation, ClaimVerdict, Label
from auditor.judges.offline._attributes import attribute_flip, unknown_attribute, value_unstated
from auditor.judges.offline._light import PRESENCE
from auditor.judges.offline._rules import (
    best_window,
    combined_support,
    coverage,
    polarity_conflict,
    quote,
    rival_figures,
    support_stands,
    supporting_window,
)
from auditor.judges.reading import ClaimCues, Item, stem, words
from auditor.judges.reading import entities as ent
from auditor.judges.reading import numbers as num
from auditor.judges.verify import with_conflict


def offline_verdict(
    claim: Claim,
    label: Label,
    rationale: str,
    citations: tuple[Citation, ...] = (),
    inadmissible: tuple[str, ...] = (),
) -> ClaimVerdict:
    return ClaimVerdict(
        claim_id=claim.claim_id,
        label=label,
        citations=citations,
        inadmissible_support=inadmissible,
        rationale=rationale,
        settled_by="offline",
    )


def item_name(item: Item, names: dict[str, str]) -> str:
    return names.get(item.evidence_id) or item.evidence_id


def rule_verdict(
    claim: Claim, cues: ClaimCues, items: Sequence[Item], names: dict[str, str]
) -> tuple[ClaimVerdict, str]:
    """The rule-based verdict and the name of the rule that gave it (one of ``RULES``)."""
    if not items:
        return offline_verdict(claim, Label.ABSENT, "no admitted evidence"), "nothing"
    if not cues.stems and not cues.quantities and not cues.entities:
        return offline_verdict(claim, Label.ABSENT, "nothing checkable in the claim"), "nothing"
    unknown = unknown_attribute(cues, claim.text, items)
    if unknown is not None:
        item, window = unknown
        return offline_verdict(
            claim,
            Label.ABSENT,
            f"{item_name(item, names)} leaves it unknown ({window.seg.text.strip()}: null is not 'no')",
        ), "attribute_unknown"
    flip = attribute_flip(cues, claim.text, items)
    if flip is not None:
        item, window = flip
        flipped = offline_verdict(
            claim,
            Label.CONTRADICTED,
            f"{item_name(item, names)} states the opposite ({window.seg.text.strip()})",
            quote(item, window, cues),
        )
        # another tool stating the claim ("stock": 14 beside "in_stock": false) is the other
        # side of a conflict, shown rather than outvoted by the flip
        backing = [
            c
            for i in items
            if i is not item and (w := supporting_window(cues, i)) is not None and support_stands(cues, i, w)
            for c in quote(i, w, cues)
        ]
        return with_conflict(flipped, backing), "attribute_flipped"
    unstated = value_unstated(cues, items, PRESENCE)
    if unstated is not None:
        item, window, word = unstated
        return offline_verdict(
            claim,
            Label.ABSENT,
            f"{item_name(item, names)} states {window.seg.text.strip()}, and nothing admitted says "
            f"{_said_word(claim.text, word)!r}",
        ), "coverage"  # weighed by the score, not decisive: on dev, decisive cost Data2txt accuracy
    support = [(i, w) for i in items if (w := supporting_window(cues, i)) is not None]
    if cues.aggregated and len({i.evidence_id for i, _ in support}) >= 2:
        cites = tuple(c for i, w in support for c in quote(i, w, cues))
        where = ", ".join(item_name(i, names) for i, _ in support)
        return offline_verdict(
            claim, Label.SUPPORTED, f"aggregated claim supported by {len(support)} items: {where}", cites
        ), "aggregate_supported"
    # the best supporting window whose own item does not undo it: an item stating the claim's
    # words with the other polarity does not shadow another item stating them as claimed
    ranked = sorted(support, key=lambda iw: (coverage(cues, iw[1]), -len(iw[1].parts)), reverse=True)
    standing = (
        None if cues.aggregated else next(((i, w) for i, w in ranked if support_stands(cues, i, w)), None)
    )
    if standing is not None:
        item, window = standing
        return offline_verdict(
            claim,
            Label.SUPPORTED,
            f"stated in {item_name(item, names)} "
            f"({coverage(cues, window):.0%} of content words, all figures match)",
            quote(item, window, cues),
        ), "supported"
    if not cues.aggregated and (combined := combined_support(cues, items)) is not None:
        return offline_verdict(
            claim,
            Label.SUPPORTED,
            "stated across " + " and ".join(item_name(i, names) for i, _ in combined) + " together",
            tuple(c for i, w in combined for c in quote(i, w, cues)),
        ), "combined"
    for e in cues.entities:
        if not any(ent.present(e, i.norm) for i in items):
            return offline_verdict(
                claim, Label.ABSENT, f"entity {e!r} not found in admitted evidence"
            ), "entity_missing"
    contradiction = _number_contradiction(claim, cues, items, names)
    if contradiction is not None:
        return contradiction, "number_contradicted"
    missing = [q for q in cues.quantities if not any(num.matches(q, e) for i in items for e in i.quantities)]
    if missing:
        # "two sisters", "three albums": a count in words is often stated by listing, so its
        # absence is weighed by the score rather than decisive
        counted = all(
            q.kind == "measure" and q.raw >= 2 and q.text[:1].isalpha() and not num.is_unit(q)
            for q in missing
        )
        return offline_verdict(
            claim, Label.ABSENT, f"{num.describe(missing[0])} found nowhere in admitted evidence"
        ), "count_missing" if counted else "number_missing"
    conflict = polarity_conflict(cues, items)
    if conflict is not None:
        item, window = conflict
        return offline_verdict(
            claim,
            Label.CONTRADICTED,
            f"{item_name(item, names)} states the opposite polarity",
            quote(item, window, cues),
        ), "polarity_contradicted"
    if cues.aggregated and support:
        return offline_verdict(
            claim,
            Label.ABSENT,
            f"aggregated claim supported by only one item ({item_name(support[0][0], names)})",
        ), "aggregate_one"
    best = best_window(cues, items, "windows")
    cov = best[2] if best else 0.0
    where = f" ({item_name(best[0], names)})" if best else ""
    return offline_verdict(
        claim, Label.ABSENT, f"best evidence match covers {cov:.0%} of the claim's content words{where}"
    ), "coverage"


def _number_contradiction(
    claim: Claim, cues: ClaimCues, items: Sequence[Item], names: dict[str, str]
) -> ClaimVerdict | None:
    for q in cues.quantities:
        if any(num.matches(q, e) for i in items for e in i.quantities):
            continue
        found = rival_figures(cues, q, items)
        if found is not None:
            item, w, rivals = found
            if w.contiguous:
                cites = quote(item, w, cues)
            else:
                cites = tuple(
                    Citation(evidence_id=item.evidence_id, quote=item.text[s:e])
                    for _, k in rivals[:3]
                    for s, e in w.parts[k].spans
                )
            return offline_verdict(
                claim,
                Label.CONTRADICTED,
                f"{num.describe(q)} differs from {num.describe(rivals[0][0])} in {item_name(item, names)}",
                cites,
            )
    return None


def _said_word(text: str, stemmed: str) -> str:
    """The claim's word behind a stem ("free" for "free"), for the rationale."""
    return next((w for w in words(text) if stem(w) == stemmed), stemmed)
