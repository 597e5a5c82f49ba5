"""Conflicting admitted sources: both sides kept, every quote verified, the policy decides.

A conflict is one admitted item that supports a claim while another admitted item contradicts it
(two editions of a document, two tools that disagree). Picking a side silently would hide the one
thing a reviewer must see, so a verdict keeps both sides in ``conflicts`` and the policy's
``on_conflict`` decides what the verdict becomes. Each judge finds conflicts its own way:

- the offline judge checks the admitted items its verdict does not cite one by one
  (:mod:`auditor.judges.offline._rivals`): a rival figure in a window that covers the claim, or
  the claim's words with the opposite polarity, in an item naming the claim's entities;
- the LLM judge and the fused call cite the items on the other side in ``conflicting``
  (:mod:`auditor.judges.llm._prompts`), turned into the two sides by :func:`with_conflict`;
- for every judge alike, :func:`with_state_conflict` reads the admitted items for the opposite
  availability state, or another price, event date or status of the thing the claim names.

What every judge shares lives here too. :func:`verify_conflicts` checks each side as a verdict of
its own stance with the very check every verdict passes (``verify_quotes``: the quote is in the
item and carries the claim); a conflict stands only with a verified quote on both sides from
different items. :func:`settle_conflict` applies ``on_conflict`` (``flag``, ``contradicted``,
``prefer_newest``); the pipeline calls both, in one place, for every judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Literal

from auditor.judges._verdicts import Citation, ClaimVerdict, ConflictQuote, Label
from auditor.judges.reading import differing, opposing, states_claimed

OnConflict = Literal["flag", "contradicted", "prefer_newest"]

_MAX_STATE_ITEMS = 3  # items listed on the other side of a state conflict, as the offline judge lists
_STANCE_LABEL = {"supports": Label.SUPPORTED, "contradicts": Label.CONTRADICTED}


def with_conflict(verdict: ClaimVerdict, opposing: Sequence[Citation]) -> ClaimVerdict:
    """The verdict with ``conflicts`` built from its own citations and the ``opposing`` ones.

    A ``supported`` verdict's citations are the supporting side and ``opposing`` the contradicting
    one; for ``contradicted`` the other way round. Any other label, no opposing citation, or no
    citation of its own: no conflict. Opposing citations of an item the verdict itself cites are
    left out (one item cannot stand on both sides).
    """
    if verdict.label not in (Label.SUPPORTED, Label.CONTRADICTED) or not verdict.citations:
        return verdict
    own_ids = {c.evidence_id for c in verdict.citations}
    other = [c for c in opposing if c.evidence_id not in own_ids]
    if not other:
        return verdict
    own: Literal["supports", "contradicts"] = (
        "supports" if verdict.label is Label.SUPPORTED else "contradicts"
    )
    theirs: Literal["supports", "contradicts"] = "contradicts" if own == "supports" else "supports"
    sides = [ConflictQuote(evidence_id=c.evidence_id, quote=c.quote, stance=own) for c in verdict.citations]
    sides += [ConflictQuote(evidence_id=c.evidence_id, quote=c.quote, stance=theirs) for c in other]
    return verdict.model_copy(update={"conflicts": tuple(sides)})


def with_state_conflict(verdict: ClaimVerdict, claim_text: str, texts: Mapping[str, str]) -> ClaimVerdict:
    """A ``supported`` verdict with the admitted items (``texts``: evidence id to text) that state
    another state or value of the same attribute of the same thing as the other side of a
    conflict, for every judge alike; a verdict that already has a conflict, or another label, is
    returned as it is. Two readings, in this order:

    - the opposite availability state (:func:`auditor.judges.reading.opposing`: "Out of stock"
      beside "14 units in stock");
    - another price, date of the same event or status of the thing the claim names
      (:func:`auditor.judges.reading.differing`: "X200 price: $59.00" beside "The X200 costs $49"),
      only when an item the verdict cites states the claim's own value
      (:func:`auditor.judges.reading.states_claimed`), so that the support is one side.
    """
    if verdict.label is not Label.SUPPORTED or verdict.conflicts:
        return verdict
    cited = {c.evidence_id for c in verdict.citations}
    others = [(i, t) for i, t in texts.items() if i not in cited]
    found = [(i, s.quote) for i, s in opposing(claim_text, others)]
    if not found and any(states_claimed(claim_text, texts[i]) for i in cited if i in texts):
        found = [(i, v.quote) for i, v in differing(claim_text, others)]
    return with_conflict(verdict, [Citation(evidence_id=i, quote=q) for i, q in found[:_MAX_STATE_ITEMS]])


def verify_conflicts(verdict: ClaimVerdict, check: Callable[[ClaimVerdict], ClaimVerdict]) -> ClaimVerdict:
    """Verify both sides of the verdict's conflict with ``check`` (the pipeline's ``verify_quotes``).

    Each side is checked as a verdict of its stance (``supported`` for the supporting quotes,
    ``contradicted`` for the contradicting ones), so its quotes must be in their items and carry
    the claim like any verdict's. Quotes that fail are dropped and recorded in ``judge_errors``;
    the conflict stands only when both sides keep a quote, from different items, and the verdict
    itself is still ``supported`` or ``contradicted``.
    """
    if not verdict.conflicts:
        return verdict
    errors = list(verdict.judge_errors)
    if verdict.label not in (Label.SUPPORTED, Label.CONTRADICTED):
        errors.append(f"conflict dropped: the verdict is {verdict.label.value}")
        return verdict.model_copy(update={"conflicts": (), "judge_errors": tuple(errors)})
    kept: dict[str, list[ConflictQuote]] = {}
    for stance, label in _STANCE_LABEL.items():
        side = [c for c in verdict.conflicts if c.stance == stance]
        probe = ClaimVerdict(
            claim_id=verdict.claim_id,
            label=label,
            citations=tuple(Citation(evidence_id=c.evidence_id, quote=c.quote) for c in side),
        )
        checked = check(probe)
        errors += [f"conflict, {stance} side: {e}" for e in checked.judge_errors]
        verified = {(c.evidence_id, c.quote) for c in checked.citations} if checked.label is label else set()
        kept[stance] = [c for c in side if (c.evidence_id, c.quote) in verified]
    supporting = {c.evidence_id for c in kept["supports"]}
    contradicting = [c for c in kept["contradicts"] if c.evidence_id not in supporting]
    if not kept["supports"] or not contradicting:
        missing = "supporting" if not kept["supports"] else "contradicting"
        errors.append(f"conflict dropped: no verified quote on the {missing} side")
        return verdict.model_copy(update={"conflicts": (), "judge_errors": tuple(errors)})
    return verdict.model_copy(
        update={"conflicts": (*kept["supports"], *contradicting), "judge_errors": tuple(errors)}
    )


def settle_conflict(
    verdict: ClaimVerdict, on_conflict: OnConflict, dates: Mapping[str, datetime | None]
) -> ClaimVerdict:
    """What a verdict with a (verified) conflict becomes under the policy's ``on_conflict``.

    - ``flag``: the judge's verdict stands; the conflict is kept, counted and shown, and the answer
      cannot pass unless the policy's ``conflicts_allowed`` says so;
    - ``contradicted``: the verdict becomes ``contradicted``, citing the contradicting side;
    - ``prefer_newest``: the side holding the newest item wins (``supported`` or ``contradicted``,
      citing that side), by ``dates`` (each item's date under the freshness rule's date key); when
      an item of the conflict has no date, or the newest items of both sides are equally new, it
      falls back to ``flag`` and the rationale says why.

    ``conflict_resolution`` records the rule applied; the conflict itself is always kept.
    """
    if not verdict.conflicts:
        return verdict
    supports = [c for c in verdict.conflicts if c.stance == "supports"]
    contradicts = [c for c in verdict.conflicts if c.stance == "contradicts"]
    counted = (
        f"admitted sources disagree ({_items(supports)} support{'s' if _n(supports) == 1 else ''} it, "
        f"{_items(contradicts)} contradict{'s' if _n(contradicts) == 1 else ''} it)"
    )
    if on_conflict == "contradicted":
        return _resolved(
            verdict, Label.CONTRADICTED, contradicts, "contradicted", f"{counted}; on_conflict = contradicted"
        )
    rule = "the judge's verdict stands (on_conflict = flag)"
    if on_conflict == "prefer_newest":
        undated = [c.evidence_id for c in verdict.conflicts if dates.get(c.evidence_id) is None]
        newest_s = max((d for c in supports if (d := dates.get(c.evidence_id)) is not None), default=None)
        newest_c = max((d for c in contradicts if (d := dates.get(c.evidence_id)) is not None), default=None)
        if undated or newest_s is None or newest_c is None:
            why = f"{', '.join(dict.fromkeys(undated))} has no date"
        elif newest_s == newest_c:
            why = f"both sides are dated {newest_s.date().isoformat()}"
        else:
            label, side = (
                (Label.SUPPORTED, supports) if newest_s > newest_c else (Label.CONTRADICTED, contradicts)
            )
            newer, older = max(newest_s, newest_c), min(newest_s, newest_c)
            named = "supporting" if label is Label.SUPPORTED else "contradicting"
            return _resolved(
                verdict,
                label,
                side,
                "prefer_newest",
                f"{counted}; on_conflict = prefer_newest: the {named} side is newer "
                f"({newer.date().isoformat()} against {older.date().isoformat()})",
            )
        rule = f"prefer_newest fell back to flag ({why}): the judge's verdict stands"
    return verdict.model_copy(
        update={"conflict_resolution": "flag", "rationale": _joined(f"{counted}; {rule}", verdict.rationale)}
    )


def _resolved(
    verdict: ClaimVerdict,
    label: Label,
    side: Sequence[ConflictQuote],
    rule: Literal["contradicted", "prefer_newest"],
    why: str,
) -> ClaimVerdict:
    return verdict.model_copy(
        update={
            "label": label,
            "citations": tuple(
                dict.fromkeys(Citation(evidence_id=c.evidence_id, quote=c.quote) for c in side)
            ),
            "conflict_resolution": rule,
            "rationale": _joined(why, verdict.rationale),
        }
    )


def _n(side: Sequence[ConflictQuote]) -> int:
    return len({c.evidence_id for c in side})


def _items(side: Sequence[ConflictQuote]) -> str:
    return f"{_n(side)} item" + ("" if _n(side) == 1 else "s")


def _joined(note: str, rationale: str | None) -> str:
    return f"{note}; judge: {rationale}" if rationale else note
