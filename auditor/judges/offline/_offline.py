"""The offline judge: deterministic, no network, fast, and approximate.

It judges each claim against the admitted evidence with surface cues only:

1. **Entities** (proper nouns, acronyms, ids and codes such as ``X200``) must occur in the admitted
   evidence, else the claim is ``absent``.
2. **Quantities** (amounts, dates, percentages, units, number words) must match. A quantity found
   nowhere is ``absent``, unless the evidence window that best matches the claim's words states a
   comparable quantity (same kind and unit) with a different value: then ``contradicted``.
3. **Negation**: a window that covers the claim's words well but with the opposite polarity
   ("not refundable" against "refundable", or a JSON ``false``) is ``contradicted``.
4. **Lexical entailment**: a window (one or two adjacent sentences, or a JSON object's pairs) that
   covers at least :data:`~auditor.judges.offline._rules.SUPPORT_COVERAGE` of the claim's content stems and states all its
   quantities is ``supported``, quoting that window. Otherwise ``absent``.
5. **Aggregated claims** ("both reports say ...") need support from at least two items.
6. **Conflicts**: a ``supported`` verdict is checked against every admitted item it does not cite,
   one by one (:func:`auditor.judges.offline._rivals.contradicting_items`); an item that contradicts
   the claim on its own is kept beside the support in ``conflicts``, never silently outvoted.

7. **The support score** (:mod:`auditor.judges.offline._combiner`, over the cues of
   :mod:`auditor.judges.offline._features`) decides whether the rules' reading is decisive: ``supported``
   needs a score at or above the shipped ``supported`` threshold, ``absent`` from low coverage one
   at or below ``unsupported``; figures, names and polarity (``HARD_RULES``) decide whatever the
   score, except a prose negation flip in a long answer (``SOFT_IN_LONG_ANSWERS``); in a long
   answer a missing count in words is never decided absent (``UNDECIDED_IN_LONG_ANSWERS``). Anything else
   is ``unjudged: offline_undecided`` (fail closed), with the score in the rationale. The claims of a long answer (``answer_claims`` judged claims or more: a summary)
   are decided with the ``answer_supported`` / ``answer_unsupported`` pair instead, and one no
   window supports is ``supported`` at a score of at least ``answer_partial`` when a window, or two
   or three sentences of one item together, cover :data:`~auditor.judges.offline._rules.PARTIAL_COVERAGE`
   of it with all its figures (a paraphrase; :func:`~auditor.judges.offline._rules.partial_support`).

Quotes are always exact substrings of the evidence text and hold what the rule matched (for a JSON
record, the pairs stating the claim's figures and words), so they pass
:func:`auditor.judges.verify_quotes`. The judge never marks a claim as common knowledge, whatever
the policy allows: it cannot tell what is common knowledge. It is **approximate** and says so in its
identity (``approximate=True``); paraphrase, inference across sentences and world knowledge are
beyond it. :meth:`OfflineJudge.settle` is the strict subset used before an LLM judge
(:mod:`auditor.judges.offline._settle`): it answers only when the claim is stated verbatim in an admitted
item, or every content word, figure and name of it in one window.

It reads a bounded amount of evidence (:data:`~auditor.judges.reading._windows.ITEM_CHARS` per item,
:data:`~auditor.judges.reading._windows.CLAIM_CHARS` per claim), so hostile input cannot make it slow;
what it did not read never supports a claim, and an ``absent`` it cannot assert for that reason is
``unjudged: offline_undecided``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence
from auditor.judges._verdicts import Citation, ClaimVerdict, JudgeIdentity, Label, UnjudgedReason
from auditor.judges.offline import _settle
from auditor.judges.offline._combiner import Combiner, shipped
from auditor.judges.offline._features import FEATURES, Cue, features
from auditor.judges.offline._rivals import contradicting_items
from auditor.judges.offline._rules import (
    coverage,
    partial_support,
    quote,
    supporting_window,
)
from auditor.judges.offline._ruling import item_name, offline_verdict, rule_verdict
from auditor.judges.offline._settle import SETTLE_MIN_WORDS
from auditor.judges.reading import CLAIM_CHARS, ITEM_CHARS, Item, only_opposite, prepare, read_limits, said
from auditor.judges.verify import cached_claim_cues, with_conflict
from auditor.text import normalise

PROMPT_VERSION = "offline-2"  # 2: the support score and offline_undecided (issue 13)
_UNREAD_ADMITTED = (
    f"admitted evidence is longer than the offline judge reads ({ITEM_CHARS:,} characters an item, "
    f"{CLAIM_CHARS:,} a claim): absent in the part read; judge it with an LLM judge"
)
_UNREAD_EXCLUDED = (
    "excluded evidence is longer than the offline judge reads: inadmissible_support may be incomplete"
)


@dataclass(frozen=True)
class SupportScore:
    """A claim's support score in [0, 1], the rule-based reading, and the cues the score weighs."""

    claim_id: str
    score: float
    rule: str  # the rule behind ``label`` (see auditor.judges.offline._features.RULES)
    label: Label  # the rule-based verdict, before the score decides whether it is decisive
    cues: tuple[Cue, ...]


def _verbatim(text: str, items: Sequence[Item]) -> bool:
    """Whether the claim (trailing punctuation dropped, at least four words) occurs in one item."""
    core = normalise(text).rstrip(".!;:,").strip()
    return len(core.split()) >= SETTLE_MIN_WORDS and any(core in i.norm for i in items)


class OfflineJudge:
    """Deterministic, approximate judge over surface cues (see the module docstring for the rules).

    Satisfies :class:`auditor.judges.Judge`. Screened claims get no verdict. Never raises for odd
    text; never marks common knowledge (``allow_common_knowledge`` is accepted and ignored).
    """

    identity = JudgeIdentity(kind="offline", model=None, prompt_version=PROMPT_VERSION, approximate=True)

    def __init__(self, combiner: Combiner | None = None) -> None:
        self.combiner = combiner  # None: the shipped coefficients and thresholds

    async def judge(
        self,
        answer: Answer,
        claims: Sequence[Claim],
        admitted: Sequence[Evidence],
        excluded: Sequence[Evidence],
        allow_common_knowledge: bool = False,
    ) -> list[ClaimVerdict]:
        """Judge the non-screened ``claims`` of ``answer`` on ``admitted`` evidence."""
        return self.judge_sync(claims, admitted, excluded)

    def judge_sync(
        self, claims: Sequence[Claim], admitted: Sequence[Evidence], excluded: Sequence[Evidence] = ()
    ) -> list[ClaimVerdict]:
        """The same judgement without an event loop (the judge does no I/O).

        Evidence is read up to the limits of :mod:`auditor.judges.reading._windows`; when some admitted
        text was not read, ``absent`` cannot be asserted and becomes ``unjudged: offline_undecided``.
        """
        limits = read_limits([e.text for e in (*admitted, *excluded)])
        prepared = [
            prepare(e.evidence_id, e.text, n) for e, n in zip((*admitted, *excluded), limits, strict=True)
        ]
        items, out_items = prepared[: len(admitted)], prepared[len(admitted) :]
        names = {e.evidence_id: e.document_id or e.name or e.kind.value for e in (*admitted, *excluded)}
        verdicts = []
        judged = sum(not c.screened for c in claims)  # the answer's size picks the thresholds
        for claim in claims:
            if claim.screened:
                continue
            verdict = self._judge_one(claim, items, names, judged)
            verdict = _state_contradicted(claim, items, names) or verdict
            if verdict.label is Label.SUPPORTED:
                cited = {c.evidence_id for c in verdict.citations}
                verdict = with_conflict(
                    verdict, contradicting_items(cached_claim_cues(claim.text), cited, items)
                )
            if verdict.label is not Label.SUPPORTED and out_items:
                cues = cached_claim_cues(claim.text)
                inadmissible = tuple(
                    i.evidence_id for i in out_items if supporting_window(cues, i) is not None
                )
                if inadmissible:
                    verdict = verdict.model_copy(update={"inadmissible_support": inadmissible})
                if any(i.partial for i in out_items):
                    verdict = verdict.model_copy(
                        update={"judge_errors": (*verdict.judge_errors, _UNREAD_EXCLUDED)}
                    )
            if verdict.label is Label.ABSENT and any(i.partial for i in items):
                verdict = verdict.model_copy(
                    update={
                        "label": Label.UNJUDGED,
                        "unjudged_reason": UnjudgedReason.OFFLINE_UNDECIDED,
                        "rationale": f"in the part read: {verdict.rationale}",
                        "judge_errors": (*verdict.judge_errors, _UNREAD_ADMITTED),
                    }
                )
            verdicts.append(verdict)
        return verdicts

    def scores(self, claims: Sequence[Claim], admitted: Sequence[Evidence]) -> list[SupportScore]:
        """The support score of each non-screened claim with the cues behind it (no verdict).

        The score is the shipped combiner's (:mod:`auditor.judges.offline._combiner`) over
        :data:`~auditor.judges.offline._features.FEATURES`; ``rule`` is the rule-based verdict's rule.
        """
        limits = read_limits([e.text for e in admitted])
        items = [prepare(e.evidence_id, e.text, n) for e, n in zip(admitted, limits, strict=True)]
        names = {e.evidence_id: e.document_id or e.name or e.kind.value for e in admitted}
        return [self._assess(c, items, names)[1] for c in claims if not c.screened]

    def _assess(
        self, claim: Claim, items: Sequence[Item], names: dict[str, str]
    ) -> tuple[ClaimVerdict, SupportScore]:
        cues = cached_claim_cues(claim.text)
        verdict, rule = rule_verdict(claim, cues, items, names)
        x = features(cues, items, rule, _verbatim(claim.text, items))
        combiner = self.combiner or shipped()
        return verdict, SupportScore(
            claim.claim_id, combiner.score(x), rule, verdict.label, tuple(map(Cue, FEATURES, x))
        )

    def _judge_one(
        self, claim: Claim, items: Sequence[Item], names: dict[str, str], judged: int = 1
    ) -> ClaimVerdict:
        """The rule-based verdict where the support score agrees it is decisive, else undecided.

        ``judged``: the answer's judged claims; a long answer has thresholds of its own
        (:meth:`auditor.judges.offline._combiner.Combiner.thresholds`).
        """
        verdict, score = self._assess(claim, items, names)
        combiner = self.combiner or shipped()
        hi, lo = combiner.thresholds(judged)
        p = score.score
        decided = (verdict.label is Label.SUPPORTED and p >= hi) or (
            verdict.label in (Label.ABSENT, Label.CONTRADICTED)
            and p <= lo
            and combiner.low_decides(score.rule, judged)
        )
        decided = decided or combiner.hard(score.rule, judged)
        decided = decided or (score.rule == "nothing" and not items)
        if decided:
            return verdict
        partial = combiner.partial(judged)
        if score.rule == "coverage" and partial is not None and p >= partial:
            cues = cached_claim_cues(claim.text)
            found = partial_support(cues, items)
            if found is not None:
                item, windows = found
                if len(windows) == 1:
                    where, cov = item_name(item, names), coverage(cues, windows[0])
                else:  # sentences of one item (a summary merging them)
                    where = f"{len(windows)} sentences of {item_name(item, names)} together"
                    stated = cues.stems.intersection(frozenset().union(*(w.seg.stems for w in windows)))
                    cov = len(stated) / len(cues.stems)
                return offline_verdict(
                    claim,
                    Label.SUPPORTED,
                    f"mostly stated in {where} ({cov:.0%} of content words, all figures match; "
                    f"support score {p:.2f} in a long answer)",
                    tuple(c for w in windows for c in quote(item, w, cues)),
                )
        return verdict.model_copy(
            update={
                "label": Label.UNJUDGED,
                "unjudged_reason": UnjudgedReason.OFFLINE_UNDECIDED,
                "citations": (),
                "rationale": _undecided_why(verdict, p, hi, lo, combiner.low_decides(score.rule, judged)),
            }
        )

    def settle(self, claim: Claim, admitted: Sequence[Evidence]) -> ClaimVerdict | None:
        """A verdict only when the offline checks are certain, else None (for the LLM cascade).

        See :mod:`auditor.judges.offline._settle` for what certain means.
        """
        return _settle.settle(claim, admitted)


def _state_contradicted(claim: Claim, items: Sequence[Item], names: dict[str, str]) -> ClaimVerdict | None:
    """``contradicted`` when every admitted item stating an availability state about the claim's
    subject states the other one ("out of stock" against ``"stock": 14``), else None."""
    found = only_opposite(claim.text, [(i.evidence_id, i.text) for i in items])
    if not found:
        return None
    evidence_id, first = found[0]
    return offline_verdict(
        claim,
        Label.CONTRADICTED,
        f"{names.get(evidence_id) or evidence_id} says {said(first.state)} ({first.quote}) "
        f"where the claim says {said('in' if first.state == 'out' else 'out')}",
        tuple(Citation(evidence_id=i, quote=s.quote) for i, s in found),
    )


def _undecided_why(verdict: ClaimVerdict, p: float, hi: float, lo: float, low_decides: bool) -> str:
    """Why a claim is undecided, in words: what the rules read, and why the score did not settle it.

    The score decides ``supported`` at or above ``hi`` and ``absent`` / ``contradicted`` at or
    below ``lo``; an undecided claim's score is on the wrong side for the rules' reading (which
    is not "between" the two: ``hi`` may be below ``lo``).
    """
    reading = verdict.label.value
    if verdict.label is Label.SUPPORTED:
        short = f"its support score {p:.3f} is below {_figure(hi)}, the score that decides supported"
    elif p <= lo and not low_decides:
        short = f"a low support score ({p:.3f}) does not decide this rule's {reading} in a long answer"
    else:
        short = f"its support score {p:.3f} is above {_figure(lo)}, the highest that decides {reading}"
    because = f" ({verdict.rationale})" if verdict.rationale else ""
    return f"undecided: the rules read it as {reading}{because}, but {short}"


def _figure(x: float) -> str:
    """A threshold as written in the shipped parameters ("0.999", "0.16"), not rounded past them."""
    return f"{x:.3f}".rstrip("0").rstrip(".")
