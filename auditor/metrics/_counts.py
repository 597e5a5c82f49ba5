"""The summary as a sum: each answer's counts, added up, give :func:`summarise`'s figures again.

:func:`answer_counts` turns one answer into a flat mapping of integers (``Counts``); counts of
several answers add key by key; :func:`summary_from_counts` turns a sum back into the
:class:`Summary` that :func:`summarise` computes on the same answers (without labels). This is what
lets the store keep figures per hour and day (its rollups) and still give, for any set of buckets,
exactly the figures of the answers in them: every rate's numerator and denominator, hence its
Wilson and Clopper-Pearson interval, is a sum over answers.

One figure is not a sum of per-answer counts: whether an answer passes *within a segment* depends
on the thresholds the summary is drawn with. Each answer therefore counts under a key naming what
that decision needs (supported, judged and contradicted claims, and whether a conflict was flagged;
an answer with an unjudged claim or none judged never passes), so any thresholds can be applied to
the sum afterwards. Keys are texts (``"status|supported"``, ``"class|judged|<name>"``, ...), so a sum
is plain JSON. ``tests/test_rollups.py`` checks the round trip against :func:`summarise`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from auditor.judges import QUOTE_DISAGREES
from auditor.metrics._conflicts import conflicted
from auditor.metrics._model import CitationFigures, ConflictFigures, Rate, Segment, Summary
from auditor.metrics._rates import claim_status, rate
from auditor.metrics._summary import NO_SOURCE, UNCLASSIFIED, UNSPECIFIED, Tally, claim_source_class
from auditor.policy import Thresholds
from auditor.results import AnswerOut

#: One answer's (or a sum of answers') counts, by key.
Counts = dict[str, int]

_JUDGED = ("supported", "contradicted", "absent")
_STATUSES = ("supported", "contradicted", "absent", "unjudged", "common_knowledge")
_SEGMENT_FIELDS = (
    "population",
    "refusals",
    "empty",
    "members",
    "decided",
    "unsupported",
    "judged",
    "supported",
    "conflicted",
    "members_conflicted",
)


def _segment(out: Counter[str], kind: str, name: str, tally: Tally) -> None:
    out[f"{kind}|population|{name}"] += 1
    out[f"{kind}|refusals|{name}"] += tally.refusal
    out[f"{kind}|empty|{name}"] += tally.empty
    if not tally.counted:
        return
    out[f"{kind}|members|{name}"] += 1
    out[f"{kind}|decided|{name}"] += tally.decided
    out[f"{kind}|unsupported|{name}"] += tally.decided and tally.has_unsupported
    out[f"{kind}|judged|{name}"] += tally.judged
    out[f"{kind}|supported|{name}"] += tally.supported
    out[f"{kind}|conflicted|{name}"] += tally.conflicted
    out[f"{kind}|members_conflicted|{name}"] += tally.conflicted > 0
    if tally.judged > 0 and tally.unjudged == 0:
        # What Tally.grounded needs beyond the thresholds; other members never pass.
        signature = f"{tally.supported},{tally.judged},{tally.contradicted},{int(tally.flagged > 0)}"
        out[f"{kind}|pass|{signature}|{name}"] += 1


def answer_counts(answer: AnswerOut) -> Counts:
    """One answer's counts (only the keys that are not zero)."""
    out: Counter[str] = Counter()
    claims = answer.claims or []
    out["answers"] += 1
    out["claims"] += len(claims)
    for claim in claims:
        if claim.screened:
            out[f"screened|{claim.screen_reason or 'unspecified'}"] += 1
    evidence = {e.evidence_id: e for e in answer.evidence}
    whole = Tally(refusal=answer.refusal is True)
    per_class: dict[str, Tally] = defaultdict(Tally)
    if whole.refusal:
        out["refusals"] += 1
    else:
        out["grounded"] += answer.grounded is True
        statuses = []
        for claim in claims:
            status = claim_status(claim)
            if status == "screened":
                continue
            statuses.append(status)
            out[f"status|{status}"] += 1
            out["disagreements"] += QUOTE_DISAGREES in claim.judge_errors
            if status == "unjudged":
                out[f"unjudged|{claim.unjudged_reason or 'unspecified'}"] += 1
            whole.add(status, claim)
            if status != "common_knowledge":
                per_class[claim_source_class(claim, evidence)].add(status, claim)
            if status in _JUDGED:
                out["citations|judged"] += 1
                if claim.markers:
                    out["citations|with_marker"] += 1
                    out["citations|markers"] += len(claim.markers)
                    checked = {m.marker: m.supports for m in claim.citation_markers}
                    out["citations|supporting"] += sum(checked.get(m) is True for m in claim.markers)
                    out["citations|unresolved"] += sum(checked.get(m) is None for m in claim.markers)
                    out["citations|misattributed"] += bool(claim.misattributed)
            if conflicted(claim):
                out[f"conflicts|resolution|{claim.conflict_resolution or 'flag'}"] += 1
        out["decided"] += whole.decided
        out["unsupported"] += whole.has_unsupported
        out["undecided"] += whole.undecided
        whole.empty = all(c.screened for c in claims)
        out["empty"] += whole.empty
        if any(s in (*_JUDGED, "unjudged") for s in statuses):
            out["conflicts|counted"] += 1
            out["conflicts|answers_with"] += any(conflicted(c) for c in claims)
    admitted = {e.source_class or UNCLASSIFIED for e in answer.evidence if e.admitted}
    for name in admitted or ({NO_SOURCE} if not per_class else set()):
        per_class.setdefault(name, Tally())
    for name, tally in per_class.items():
        tally.refusal, tally.empty = whole.refusal, whole.empty
        _segment(out, "class", name, tally)
    _segment(out, "type", answer.question_type or UNSPECIFIED, whole)
    return {k: v for k, v in out.items() if v}


def add_counts(total: Counter[str], counts: Mapping[str, int], sign: int = 1) -> None:
    """Add ``counts`` (times ``sign``) into ``total`` in place, dropping keys that fall to zero."""
    for key, value in counts.items():
        left = total.get(key, 0) + sign * value
        if left:
            total[key] = left
        else:
            total.pop(key, None)


def sum_counts(many: Iterable[Mapping[str, int]]) -> Counts:
    """The key-by-key sum of ``many``."""
    total: Counter[str] = Counter()
    for counts in many:
        add_counts(total, counts)
    return dict(total)


def _segments(counts: Mapping[str, int], kind: str, thresholds: Thresholds) -> list[Segment]:
    fields: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(_SEGMENT_FIELDS, 0))
    passed: dict[str, int] = defaultdict(int)
    prefix = f"{kind}|"
    for key, value in counts.items():
        if not key.startswith(prefix):
            continue
        field, rest = key[len(prefix) :].split("|", 1)
        if field == "pass":
            signature, name = rest.split("|", 1)
            supported, judged, contradicted, flagged = (int(x) for x in signature.split(","))
            tally = Tally(
                supported=supported, contradicted=contradicted, absent=judged - supported - contradicted
            )
            tally.flagged = flagged
            passed[name] += value if tally.grounded(thresholds) else 0
        else:
            fields[rest][field] += value
    out = []
    for name in sorted(fields):
        f = fields[name]
        members, decided, population = f["members"], f["decided"], f["population"]
        out.append(
            Segment(
                name=name,
                answers=members,
                judged_claims=f["judged"],
                groundedness_rate=rate(f["supported"], f["judged"]),
                answers_with_unsupported_claim=rate(f["unsupported"], decided, intervals=True),
                undecided_answers=members - decided,
                answer_pass_rate=rate(passed[name], members, intervals=True),
                answer_rate=rate(population - f["refusals"], population, intervals=True),
                refusals=f["refusals"],
                empty_answers=f["empty"],
                claims_with_conflict=rate(f["conflicted"], f["judged"]),
                answers_with_conflict=rate(f["members_conflicted"], members, intervals=True),
            )
        )
    return out


def _by_prefix(counts: Mapping[str, int], prefix: str) -> dict[str, int]:
    return dict(sorted((k[len(prefix) :], v) for k, v in counts.items() if k.startswith(prefix)))


@dataclass(frozen=True)
class Headline:
    """The figures a trend point shows: a :class:`Summary`'s headline counts and rates, nothing else.

    Drawn per bucket, so it is built without what a trend does not show (segments, citation and
    conflict figures): :func:`headline_from_counts` reads a handful of keys where
    :func:`summary_from_counts` builds about a hundred rates. Each field equals the
    :class:`Summary` field of the same name (:meth:`of`).
    """

    answers: int
    screened: int
    unjudged: int
    groundedness_rate: Rate
    answers_with_unsupported_claim: Rate
    answer_pass_rate: Rate

    @classmethod
    def of(cls, summary: Summary) -> Headline:
        """The headline of a summary computed some other way (from the answers themselves)."""
        return cls(
            answers=summary.answers,
            screened=summary.screened,
            unjudged=summary.unjudged,
            groundedness_rate=summary.groundedness_rate,
            answers_with_unsupported_claim=summary.answers_with_unsupported_claim,
            answer_pass_rate=summary.answer_pass_rate,
        )


def _judged(counts: Mapping[str, int]) -> int:
    return sum(counts.get(f"status|{s}", 0) for s in _JUDGED)


def headline_from_counts(counts: Mapping[str, int]) -> Headline:
    """The :class:`Headline` of the answers whose counts sum to ``counts`` (as :func:`summary_from_counts`'s)."""
    get = counts.get
    answers, refusals = get("answers", 0), get("refusals", 0)
    return Headline(
        answers=answers,
        screened=sum(v for k, v in counts.items() if k.startswith("screened|")),
        unjudged=get("status|unjudged", 0),
        groundedness_rate=rate(get("status|supported", 0), _judged(counts)),
        answers_with_unsupported_claim=rate(get("unsupported", 0), get("decided", 0), intervals=True),
        answer_pass_rate=rate(get("grounded", 0), answers - refusals, intervals=True),
    )


def summary_from_counts(counts: Mapping[str, int], thresholds: Thresholds | None = None) -> Summary:
    """The :class:`Summary` of the answers whose counts sum to ``counts`` (as :func:`summarise` without labels)."""
    limits = thresholds if thresholds is not None else Thresholds()
    head = headline_from_counts(counts)
    get = counts.get
    status = {s: get(f"status|{s}", 0) for s in _STATUSES}
    judged = status["supported"] + status["contradicted"] + status["absent"]
    answers, refusals = get("answers", 0), get("refusals", 0)
    screened = _by_prefix(counts, "screened|")
    resolutions = _by_prefix(counts, "conflicts|resolution|")
    with_marker = get("citations|with_marker", 0)
    citations = None
    if with_marker:
        citations = CitationFigures(
            coverage=rate(with_marker, get("citations|judged", 0)),
            support=rate(get("citations|supporting", 0), get("citations|markers", 0)),
            misattribution=rate(get("citations|misattributed", 0), with_marker),
            unresolved=get("citations|unresolved", 0),
        )
    return Summary(
        answers=answers,
        refusals=refusals,
        answer_rate=rate(answers - refusals, answers, intervals=True),
        claims=get("claims", 0),
        screened=head.screened,
        screened_by_reason=screened,
        judged_claims=judged,
        supported=status["supported"],
        contradicted=status["contradicted"],
        absent=status["absent"],
        unjudged=head.unjudged,
        unjudged_by_reason=_by_prefix(counts, "unjudged|"),
        undecided_answers=get("undecided", 0),
        quote_disagreements=get("disagreements", 0),
        common_knowledge=status["common_knowledge"],
        groundedness_rate=head.groundedness_rate,
        contradiction_rate=rate(status["contradicted"], judged),
        answers_with_unsupported_claim=head.answers_with_unsupported_claim,
        answer_pass_rate=head.answer_pass_rate,
        by_source_class=_segments(counts, "class", limits),
        by_question_type=_segments(counts, "type", limits),
        refusal=None,
        citations=citations,
        conflicts=ConflictFigures(
            claims_with_conflict=rate(sum(resolutions.values()), judged),
            answers_with_conflict=rate(
                get("conflicts|answers_with", 0), get("conflicts|counted", 0), intervals=True
            ),
            flagged=resolutions.get("flag", 0),
            by_resolution=resolutions,
        ),
        empty_answers=get("empty", 0),
    )
