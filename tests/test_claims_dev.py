"""Property checks of the rule-based decomposition over every answer of the labelled dev set.

The dev set lives outside the repository (``../shared/data`` beside the checkout); the tests skip without it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auditor.claims import decompose_text

DEV = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "labelled" / "dev.jsonl"
)  # ../shared beside the checkout


def _records() -> list[dict[str, Any]]:
    if not DEV.is_file():
        return []
    with DEV.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


RECORDS = _records()
needs_dev = pytest.mark.skipif(not RECORDS, reason=f"labelled dev set not found at {DEV}")


@needs_dev
def test_every_claim_round_trips_and_claims_do_not_overlap() -> None:
    for r in RECORDS:
        text = r["answer"]
        d = decompose_text(r["id"], text, r["question"])
        end = 0
        for i, c in enumerate(d.claims):
            assert c.claim_id == f"{r['id']}:c{i}"
            assert text[c.start : c.end] == c.text, r["id"]
            assert c.text and c.text == c.text.strip(), (r["id"], c.text)
            assert c.start >= end, (r["id"], c.text)
            end = c.end


@needs_dev
def test_every_answer_with_words_yields_a_judgeable_claim_or_a_screen_reason() -> None:
    for r in RECORDS:
        d = decompose_text(r["id"], r["answer"], r["question"])
        assert d.claims, r["id"]


@needs_dev
def test_most_labelled_unsupported_spans_fall_inside_one_claim() -> None:
    """Atomicity proxy: an unsupported span should be judged as part of one claim, not smeared."""
    inside = total = 0
    for r in RECORDS:
        text = r["answer"]
        judged = [c for c in decompose_text(r["id"], text, r["question"]).claims if not c.screened]
        for label in r["labels"]:
            chars = [i for i in range(label["start"], label["end"]) if text[i].isalnum()]
            hits = [c for c in judged if sum(c.start <= i < c.end for i in chars) >= 3]
            total += 1
            inside += len(hits) == 1 and sum(hits[0].start <= i < hits[0].end for i in chars) >= 0.8 * len(
                chars
            )
    assert total > 100
    assert inside / total >= 0.85  # measured 0.92 when written
