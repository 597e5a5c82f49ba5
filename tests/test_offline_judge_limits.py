"""The offline judge on hostile or huge evidence: linear extraction, bounded reading, honest verdicts.

Quantity extraction is one pass per pattern (it used to rescan every earlier match per number: an
800 KB tool result took 18.8 s). The judge reads at most ``ITEM_CHARS`` of an item and
``CLAIM_CHARS`` of a claim's evidence; it says ``supported`` only on text it read whole, and a
claim it would call ``absent`` while some admitted text went unread is ``unjudged:
offline_undecided``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import pytest

from auditor.claims import Claim
from auditor.evidence import Evidence, EvidenceKind
from auditor.judges import ClaimVerdict, Label, OfflineJudge, UnjudgedReason, verify_quotes
from auditor.judges.reading._numbers import clear_cache, extract
from auditor.judges.reading._segments import json_pairs, segments_of
from auditor.judges.reading._windows import CLAIM_CHARS, ITEM_CHARS, prepare
from tests.conftest import ROOT

HANG_SECONDS = 30  # generous: the bounded judge needs about a second for the 2 MB item below
FILLER = "The warehouse log lists another routine entry here. "


def numbers(chars: int, seed: int = 1) -> str:
    """A tool result of random numbers, ``chars`` characters long or a little more."""
    rng = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < chars:
        out.append(str(rng.randint(0, 99_999)))
        total += len(out[-1]) + 1
    return " ".join(out)


def evidence(evidence_id: str, text: str, kind: EvidenceKind = EvidenceKind.TOOL_RESULT) -> Evidence:
    return Evidence(evidence_id=evidence_id, kind=kind, name="tool", text=text, trace_id="t1")


def judge(text: str, admitted: list[Evidence], excluded: list[Evidence] | None = None) -> ClaimVerdict:
    claim = Claim(claim_id="c1", answer_id="a1", text=text, start=0, end=len(text))
    [verdict] = OfflineJudge().judge_sync([claim], admitted, excluded or [])
    return verdict


def _best_time(text: str) -> float:
    best = float("inf")
    for _ in range(5):
        clear_cache()  # read the text again, not the cached reading
        started = time.thread_time()  # CPU time of this thread: a loaded machine barely moves it
        extract(text)
        best = min(best, time.thread_time() - started)
    return best


@pytest.mark.slow
def test_quantity_extraction_grows_linearly() -> None:
    # A growth test, not a speed test: 8x the text must not cost anywhere near 64x (quadratic).
    small, large = numbers(25_000), numbers(200_000)
    assert len(extract(large)) > 30_000  # every number is found, once
    ratio = _best_time(large) / _best_time(small)
    assert ratio < 24, f"8x the text took {ratio:.1f}x the CPU time (linear is about 8x, quadratic 64x)"


_JUDGE_SCRIPT = """
import json, sys
from auditor.claims import Claim
from auditor.evidence import Evidence, EvidenceKind
from auditor.judges import OfflineJudge
text = sys.stdin.read()
item = Evidence(evidence_id="big", kind=EvidenceKind.TOOL_RESULT, name="export", text=text, trace_id="t")
claims = ["Refund 10042 was $80.00 on 2025-03-03.", "The export lists 123456789.", "The fee was $15.00."]
claims = [Claim(claim_id=f"c{i}", answer_id="a", text=t, start=0, end=len(t)) for i, t in enumerate(claims)]
print(json.dumps([[v.label.value, v.unjudged_reason] for v in OfflineJudge().judge_sync(claims, [item])]))
"""


@pytest.mark.slow
def test_a_2_mb_tool_result_of_numbers_is_judged_within_a_hang_bound() -> None:
    text = "Refund 10042 was $80.00 on 2025-03-03. " + numbers(2_000_000)
    done = subprocess.run(
        [sys.executable, "-c", _JUDGE_SCRIPT],
        input=text,
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(done.stdout) == [
        ["supported", None],  # stated in the part read
        ["unjudged", "offline_undecided"],  # not in the part read: the rest might state it
        ["unjudged", "offline_undecided"],
    ]


def test_support_is_found_in_the_part_read_and_absence_is_not_asserted() -> None:
    text = "The refund of $80.00 was approved. " + FILLER * (ITEM_CHARS // len(FILLER) + 10)
    text += "The restocking fee was $15.00."
    item = evidence("ev-big", text)
    supported = judge("The refund of $80.00 was approved.", [item])
    assert supported.label is Label.SUPPORTED and supported.citations
    assert (
        verify_quotes(supported, {"ev-big": item}, claim_text="The refund of $80.00 was approved.")
        == supported
    )
    beyond = judge("The restocking fee was $15.00.", [item])
    assert beyond.label is Label.UNJUDGED and beyond.unjudged_reason is UnjudgedReason.OFFLINE_UNDECIDED
    assert "longer than the offline judge reads" in beyond.judge_errors[-1]
    assert prepare("ev-big", text).partial and len(prepare("ev-big", text).text) <= ITEM_CHARS


def test_a_number_cut_in_half_by_the_limit_is_never_read() -> None:
    head = FILLER * (ITEM_CHARS // len(FILLER) - 1)
    head += "x" * (ITEM_CHARS - len(head) - len("The refund was $80"))
    text = head + "The refund was $8000 in total."
    assert text[:ITEM_CHARS].endswith("The refund was $80")
    verdict = judge("The refund was $80.", [evidence("ev-cut", text)])
    assert verdict.label is Label.UNJUDGED and verdict.unjudged_reason is UnjudgedReason.OFFLINE_UNDECIDED
    assert not any("$80" in c.quote for c in verdict.citations)


def test_a_json_text_cut_inside_a_string_yields_no_pairs_from_the_string() -> None:
    cut = '{"refund": {"amount": 80, "note": "fee: 15, approved: true, days: 14'
    pairs = json_pairs(cut, cut=True)
    assert pairs is not None and [p[0] for p in pairs] == [("refund", "amount"), ("refund", "note")]
    assert [s.text for s in segments_of("e", cut, cut=True)] == ['"amount": 80']  # the cut pair is dropped
    whole = [s.text for s in segments_of("e", cut + '"}}')]
    assert whole == ['"amount": 80', '"note": "fee: 15, approved: true, days: 14"']


@pytest.mark.slow
def test_the_claim_budget_is_shared_by_the_items_in_order() -> None:
    block = FILLER * (ITEM_CHARS // len(FILLER) - 1)
    count = CLAIM_CHARS // len(block) + 1
    items = [evidence(f"ev-{i}", block) for i in range(count)]
    items.append(evidence("ev-last", "The warranty of the X200 lasts 24 months."))
    verdict = judge("The warranty of the X200 lasts 24 months.", items)
    assert verdict.label is Label.UNJUDGED and verdict.unjudged_reason is UnjudgedReason.OFFLINE_UNDECIDED
    # settle() is bounded the same way: a verbatim statement it did not read settles nothing
    claim = Claim(
        claim_id="c1", answer_id="a1", text="The warranty of the X200 lasts 24 months.", start=0, end=41
    )
    assert OfflineJudge().settle(claim, items) is None
    assert OfflineJudge().settle(claim, items[-1:]) is not None
    assert judge("The warranty of the X200 lasts 24 months.", items[-1:]).label is Label.SUPPORTED


def test_unread_excluded_evidence_is_said_to_limit_inadmissible_support() -> None:
    admitted = [evidence("ev-small", "The order shipped on Monday.")]
    excluded = [evidence("ev-user", FILLER * (ITEM_CHARS // len(FILLER) + 10), EvidenceKind.USER_MESSAGE)]
    verdict = judge("The refund was $80.", admitted, excluded)
    assert verdict.label is Label.ABSENT  # every admitted item was read whole
    assert any("inadmissible_support may be incomplete" in e for e in verdict.judge_errors)


def test_small_evidence_is_prepared_whole() -> None:
    item = prepare("ev-small", "The refund of $80.00 was approved. It took 14 days.")
    assert not item.partial and item.text.endswith("14 days.") and len(item.singles) == 2
