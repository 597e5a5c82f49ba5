"""Map a judge's claims onto human labels: the labelled file and the overlap rule (pure but for reading).

The labelled file is JSONL in the shape of the dev set (``id``, ``unit``, ``answer``, ``labels``
with ``start``/``end``/``verdict``, ``verdict``, ``answer_label``; see ``docs/calibration.md``).

**The overlap rule** (claim level, ``unit == "answer"`` records). A judge claim covers the answer
characters ``[start, end)``; a human span covers ``[start, end)`` of the same answer text. They
overlap when they share at least one character (``span.start < claim.end and claim.start <
span.end``). A claim overlapping no labelled span is ``supported`` in the annotators' view (text
outside every span is supported); one overlapping any span is unsupported: ``contradicted`` if any
overlapping span says contradicted, else ``absent``. A labelled span that overlaps no judged claim
(it lies in a sentence the decomposer screened out, say) is counted as an unmapped span.

**Claim-unit records** (``unit == "claim"``: the record is one claim). The decomposer may still split
its text; the judge's verdict for the record is the worst of its claims' verdicts (contradicted,
then absent, then supported) and the human verdict is the record's ``verdict``: one item per record.

**Answer level**: the human verdict is the record's ``verdict`` (hallucinated iff not supported); the
judge's is the worst verdict among the answer's judged claims. An answer with no claim decided
unsupported but an ``unjudged`` one is *undecided* and unmapped (reason ``undecided``): the same rule
as the summary's "answers with an unsupported claim", which leaves undecided answers out of its
denominator, so the answer-level sensitivity and specificity describe exactly the figure
:mod:`auditor.calibration._correction` corrects. An answer with no judged or unjudged claim (a
refusal, or everything screened out) is unmapped too.

At claim level an ``unjudged`` claim is unmapped (there is no verdict to compare).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from auditor.calibration._agreement import Pair, Unmapped, Verdict3
from auditor.errors import UsageError
from auditor.results import AnswerOut
from auditor.trace import record_trace_id

JudgeVerdict = Literal["supported", "contradicted", "absent", "unjudged"]
_SEVERITY = {"supported": 0, "absent": 1, "unjudged": 1, "contradicted": 2}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class HumanSpan(_Model):
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    verdict: Literal["contradicted", "absent"]


class LabelledRecord(_Model):
    """One labelled record (extra keys such as ``sources`` or ``original`` are ignored here)."""

    id: str | None = None
    trace_id: str = ""  # set by :func:`load_labelled`: the id the records adapter gives its trace
    dataset: str = "-"
    task_type: str = "-"
    unit: Literal["answer", "claim"] = "answer"
    answer: str
    labels: tuple[HumanSpan, ...] = ()
    verdict: Verdict3 | None = None

    @model_validator(mode="after")
    def _derive_verdict(self) -> LabelledRecord:
        if self.verdict is None:
            if self.unit == "claim":
                raise ValueError("a claim-unit record needs a verdict (supported, contradicted or absent)")
            derived: Verdict3 = "supported"
            if self.labels:
                derived = (
                    "contradicted" if any(s.verdict == "contradicted" for s in self.labels) else "absent"
                )
            object.__setattr__(self, "verdict", derived)
        return self

    @property
    def human(self) -> Verdict3:
        return self.verdict or "supported"

    @property
    def segment(self) -> str:
        return f"{self.dataset}/{self.task_type}"


class JudgedClaim(_Model):
    """A judge claim located in the record's answer text."""

    start: int
    end: int
    verdict: JudgeVerdict


def load_labelled(path: Path) -> list[LabelledRecord]:
    """Read a labelled file; a bad line raises :class:`UsageError` naming the file and the line."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UsageError(f"{path}: cannot read the labelled file ({err}).") from err
    records: list[LabelledRecord] = []
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        if not raw.strip():
            continue
        where = f"{path}, line {number}"
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict):
                raise UsageError(f"{where}: expected a JSON object.")
            if isinstance(obj.get("id"), int):
                obj["id"] = str(obj["id"])
            record = LabelledRecord.model_validate(obj)
        except (ValueError, ValidationError) as err:
            raise UsageError(f"{where}: not a labelled record ({err}).") from err
        records.append(record.model_copy(update={"trace_id": record_trace_id(obj, number, raw)}))
    if not records:
        raise UsageError(f"{path}: holds no labelled record.")
    return records


def human_claim_verdict(start: int, end: int, spans: Sequence[HumanSpan]) -> Verdict3:
    """The annotators' verdict on the characters ``[start, end)`` under the overlap rule."""
    hits = [s for s in spans if s.start < end and start < s.end]
    if not hits:
        return "supported"
    return "contradicted" if any(s.verdict == "contradicted" for s in hits) else "absent"


def worst(verdicts: Sequence[JudgeVerdict]) -> Verdict3:
    """The most severe verdict (contradicted > absent, unjudged > supported); unjudged counts as absent."""
    top = max(verdicts, key=lambda v: _SEVERITY[v])
    return "absent" if top == "unjudged" else top


def judged_claims(answer: AnswerOut, record_answer: str) -> list[JudgedClaim] | str:
    """The answer's non-screened claims with offsets into ``record_answer``, or why that is impossible.

    Evidence reconstruction strips the answer's surrounding whitespace, so offsets are shifted by
    where the audited text starts in the record's answer.
    """
    shift = record_answer.find(answer.text)
    if shift < 0:
        return "answer text differs from the record"
    return [
        JudgedClaim(start=c.start + shift, end=c.end + shift, verdict=c.verdict or "unjudged")
        for c in answer.claims or []
        if not c.screened
    ]


def claim_pairs(
    record: LabelledRecord, claims: Sequence[JudgedClaim]
) -> tuple[list[Pair], Counter[str], int]:
    """Claim-level items of one record, the judge claims left out by reason, and the unmapped spans."""
    rid = record.trace_id
    dropped: Counter[str] = Counter()
    judged = [c for c in claims if c.verdict != "unjudged"]
    if len(claims) > len(judged):
        dropped["unjudged claim"] += len(claims) - len(judged)
    if record.unit == "claim":
        if not judged or len(judged) != len(claims):
            return [], dropped, 0
        return [Pair(record_id=rid, human=record.human, judge=worst([c.verdict for c in judged]))], dropped, 0
    pairs = [
        Pair(
            record_id=rid, human=human_claim_verdict(c.start, c.end, record.labels), judge=worst([c.verdict])
        )
        for c in judged
    ]
    lost = sum(not any(s.start < c.end and c.start < s.end for c in judged) for s in record.labels)
    return pairs, dropped, lost


def undecided(claims: Sequence[JudgedClaim]) -> bool:
    """No claim decided unsupported, but one unjudged: the summary's undecided answer."""
    verdicts = {c.verdict for c in claims}
    return "unjudged" in verdicts and not verdicts & {"absent", "contradicted"}


def answer_pair(record: LabelledRecord, claims: Sequence[JudgedClaim]) -> Pair | None:
    """The answer-level item of one record, None with no judged or unjudged claim or when undecided."""
    if not claims or undecided(claims):
        return None
    return Pair(record_id=record.trace_id, human=record.human, judge=worst([c.verdict for c in claims]))


def compare(
    records: Sequence[LabelledRecord], answers: Mapping[str, AnswerOut]
) -> tuple[dict[str, list[Pair]], Unmapped, dict[str, list[Pair]], Unmapped]:
    """Claim-level and answer-level items (by record) with what could not be mapped at each level.

    Args:
        records: the labelled records.
        answers: the audited answers by trace id (the records adapter's trace id of each record).
    """
    claim_items: dict[str, list[Pair]] = {}
    answer_items: dict[str, list[Pair]] = {}
    claim_records: Counter[str] = Counter()
    answer_records: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    lost_spans = 0
    for record in records:
        audited = answers.get(record.trace_id)
        if audited is None:
            claim_records["no answer found"] += 1
            answer_records["no answer found"] += 1
            continue
        located = judged_claims(audited, record.answer)
        if isinstance(located, str):
            claim_records[located] += 1
            answer_records[located] += 1
            lost_spans += len(record.labels)
            continue
        pairs, why, lost = claim_pairs(record, located)
        dropped.update(why)
        lost_spans += lost
        if pairs:
            claim_items[record.trace_id] = pairs
        else:
            claim_records["no judged claim" if not located else "unjudged claim"] += 1
        pair = answer_pair(record, located)
        if pair is None:
            answer_records["undecided" if located else "no judged claim"] += 1
        else:
            answer_items[record.trace_id] = [pair]
    return (
        claim_items,
        Unmapped(records=dict(claim_records), claims=dict(dropped), labelled_spans=lost_spans),
        answer_items,
        Unmapped(records=dict(answer_records)),
    )
