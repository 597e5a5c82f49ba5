"""The offline judge never supports a claim from a near miss (issue 28): a record that has the
claim's property but not its value leaves it unsupported; an exact date in another form decides."""

from __future__ import annotations

import pytest

from auditor.judges import Label, OfflineJudge
from tests.test_offline_judge_score import claim
from tests.test_quote_agree import item

ORDERS = (
    '{"order": {"id": "10042", "total": "$240.00", "shipping": "standard", "status": "delivered"}}',
    '{"order_id": "10042", "shipping": {"method": "ground", "carrier": "UPS"}, "total": "$240.00"}',
    '{"order_id": "10042", "shipping": {"method": "ground", "cost": "$5.99"}, "total": "$240.00"}',
)


@pytest.mark.parametrize("record", ORDERS)
def test_a_shipping_field_does_not_make_shipping_free(record: str) -> None:
    [verdict] = OfflineJudge().judge_sync([claim("Shipping on this order was free.")], [item("e1", record)])
    assert verdict.label is not Label.SUPPORTED
    assert "nothing admitted says 'free'" in (verdict.rationale or "")


def test_a_zero_shipping_cost_still_reads_as_free() -> None:
    record = '{"order_id": "10042", "shipping": {"method": "ground", "cost": "$0.00"}}'
    [verdict] = OfflineJudge().judge_sync([claim("Shipping on this order was free.")], [item("e1", record)])
    assert "nothing admitted says" not in (verdict.rationale or "")


@pytest.mark.parametrize(
    "text", ["The order was delivered on March 24.", "The order was delivered on 24 March 2026."]
)
def test_an_iso_date_decides_a_date_in_words(text: str) -> None:
    record = '{"order_id": "10042", "status": "delivered", "delivered_at": "2026-03-24"}'
    [verdict] = OfflineJudge().judge_sync([claim(text)], [item("e1", record)])
    assert verdict.label is Label.SUPPORTED
    assert any("2026-03-24" in c.quote for c in verdict.citations)
