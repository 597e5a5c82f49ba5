"""Conflicts by attribute in prose and records (issue 28 item 5): two admitted items giving another
price, another date of the same event or another status of the same named thing are a conflict,
shown with both sides, for the offline judge and for an LLM judge alike (one pipeline step), and
the answer fails under the default policy. The same value written another way, another attribute
(a shipping fee is no price) or another thing is no conflict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.judges.reading import differing
from auditor.llm import run_sync
from auditor.results import AnswerOut, ClaimOut
from auditor.run import audit_async
from auditor.testing import NotGroundedError, assert_grounded
from tests.support.fake_openai import FakeOpenAI

# (claim, the supporting item, the contradicting item, the contradicting quote)
CONFLICTS = [
    ("The X200 costs $49.", "The X200 costs $49.", '{"sku": "X200", "price": 59}', '"price": 59'),
    ("The X200 costs $49.", "The X200 costs $49.", "X200 price: $59.00", "X200 price: $59.00"),
    ("The X200 costs $49.", '{"sku": "X200", "price": 49}', "The X200 now costs $59.", None),
    (
        "Order 1042 ships on March 24.",
        "Order 1042 ships on March 24.",
        "Order 1042 ships 2026-03-28.",
        "Order 1042 ships 2026-03-28.",
    ),
    (
        "Order 1042 ships on March 24.",
        "Order 1042 ships on March 24.",
        '{"order_id": 1042, "ship_date": "2026-03-28"}',
        '"ship_date": "2026-03-28"',
    ),
    (
        "Order 1042 is paid.",
        '{"order_id": 1042, "status": "paid"}',
        '{"order_id": 1042, "status": "refunded"}',
        '"status": "refunded"',
    ),
    ("Order 1042 is paid.", "Order 1042 is paid.", "Order 1042 was refunded on May 2.", None),
    ("Ticket 55 is closed.", "Ticket 55 is closed.", "Ticket 55 is open.", None),
    (
        "The Acme Pro subscription was cancelled.",
        "The Acme Pro subscription was cancelled.",
        "The Acme Pro subscription is active.",
        None,
    ),
    (
        "Claim 881 was approved.",
        "Claim 881 was approved.",
        '{"claim": 881, "status": "rejected"}',
        '"status": "rejected"',
    ),
    (
        "Order 77 has been shipped.",
        "Order 77 has been shipped.",
        '{"order": 77, "status": "unshipped"}',
        '"status": "unshipped"',
    ),
]
IDS = [f"{c[0][:24]} vs {c[2][:24]}" for c in CONFLICTS]


def only(answer: AnswerOut) -> ClaimOut:
    (claim,) = [c for c in answer.claims or [] if not c.screened]
    return claim


def assert_sides(judged: ClaimOut, supporting: str, quote: str) -> None:
    """Both sides shown: the supporting item's quotes, and the contradicting item's, apart."""
    assert judged.verdict == "supported" and judged.conflict_resolution == "flag"
    for_it = [c for c in judged.conflicts if c.stance == "supports"]
    assert for_it and all(c.quote in supporting for c in for_it)
    assert [c.quote for c in judged.conflicts if c.stance == "contradicts"] == [quote]
    assert len({c.evidence_id for c in judged.conflicts}) == 2


@pytest.mark.parametrize(("claim", "supporting", "contradicting", "quote"), CONFLICTS, ids=IDS)
def test_another_value_is_a_conflict_for_the_offline_judge(
    claim: str, supporting: str, contradicting: str, quote: str | None
) -> None:
    documents = [{"id": "a", "text": supporting}, {"id": "b", "text": contradicting}]
    with pytest.raises(NotGroundedError) as failed:  # a flagged conflict never passes
        assert_grounded(claim, documents)
    (answer,) = failed.value.answers
    assert_sides(only(answer), supporting, quote or contradicting)


@pytest.mark.parametrize(("claim", "supporting", "contradicting", "quote"), CONFLICTS, ids=IDS)
def test_another_value_is_a_conflict_for_an_llm_judge(
    tmp_path: Path, claim: str, supporting: str, contradicting: str, quote: str | None
) -> None:
    """An LLM judge that cites the supporting item and no other side: the pipeline finds it."""
    path = tmp_path / "values.jsonl"
    sources = [{"id": "src-a", "text": supporting}, {"id": "src-b", "text": contradicting}]
    path.write_text(json.dumps({"id": "r1", "sources": sources, "answer": claim}) + "\n", encoding="utf-8")
    with FakeOpenAI() as server:
        server.always_supported_closest_quote = True  # quotes the closest sentence, cites no conflict
        result, _ = run_sync(
            lambda: audit_async(
                [path],
                judge="openai:fake-judge",
                base_url=server.base_url,
                cascade=False,
                cache=False,
                format="records",
                store=False,
            )
        )
    assert server.by_kind["judge"] == 1
    (answer,) = result.answers
    judged = only(answer)
    assert judged.settled_by == "llm" and not answer.grounded
    assert_sides(judged, supporting, quote or contradicting)


@pytest.mark.parametrize(
    ("claim", "supporting", "other"),
    [
        # the same value written another way
        ("The X200 costs $49.", "The X200 costs $49.", '{"sku": "X200", "price": "49.00 USD"}'),
        ("Order 1042 ships on March 24.", "Order 1042 ships on March 24.", "Order 1042 ships 2026-03-24."),
        ("Order 1042 is paid.", "Order 1042 is paid.", '{"order_id": 1042, "status": "PAID"}'),
        # another attribute: a shipping fee, a delivery that is no shipment, a status of another kind
        ("The X200 costs $49.", "The X200 costs $49.", "The X200 shipping fee is $59."),
        ("Order 1042 is paid.", "Order 1042 is paid.", '{"order_id": 1042, "status": "shipped"}'),
        # another thing
        ("The X200 costs $49.", "The X200 costs $49.", "The X300 costs $59."),
        ("Order 1042 is paid.", "Order 1042 is paid.", "Order 1043 was refunded."),
        # a record of another id: another thing, not another value of the claim's figure
        (
            "Order 1042 is paid.",
            '{"order": "1042", "status": "paid"}',
            '{"order": "1043", "status": "refunded"}',
        ),
        ("Order 1042 has a total of $30.", '{"order": 1042, "total": 30}', '{"order": 1043, "total": 45}'),
        # "not paid" is at odds with "paid" only
        ("Order 1042 is not paid.", "Order 1042 is not paid.", "Order 1042 was refunded."),
    ],
)
def test_the_same_value_another_attribute_or_another_thing_is_no_conflict(
    claim: str, supporting: str, other: str
) -> None:
    (answer,) = assert_grounded(claim, [{"id": "a", "text": supporting}, {"id": "b", "text": other}])
    assert only(answer).verdict == "supported" and only(answer).conflicts == []


@pytest.mark.parametrize(
    ("claim", "other"),
    [
        ("Order 1042 ships on March 24.", "Order 1042 arrives on March 28."),  # another event
        ("Order 1042 ships on March 24.", "Order 1042 ships with its invoice due on March 28."),
        ("The X200 costs $49.", "The X200 costs €59."),  # another currency: perhaps another market
        ("The X200 costs $49.", "The X200 costs $59 per month."),  # a rate, not the price
        ("The order ships on March 24.", "The order ships on March 28."),  # no named thing
        ("Order 1042 is paid.", '{"order_id": 1042, "paid": true, "status": "shipped"}'),
    ],
)
def test_the_reading_takes_no_other_attribute_and_no_unnamed_thing(claim: str, other: str) -> None:
    """The attribute reading alone (the offline judge has its own checks of rival figures)."""
    assert differing(claim, [("b", other)]) == []
