"""A tiny run of the report benchmark's code path (no figure is asserted against a clock)."""

from __future__ import annotations

import pytest

from benchmarks import report
from benchmarks.tables import markdown_table
from tests.support.browser import require_browser


def test_the_report_benchmark_measures_the_fixed_before_and_this_checkout() -> None:
    require_browser()
    if not report.has_revision(report.BEFORE_REV):
        pytest.fail(f"the report benchmark's before ({report.BEFORE_REV}) is not in this clone's history")
    results = report.run(report.BEFORE_REV, sizes=(10,), repeats=1)
    before, after = results["codes"]["before"]["10"], results["codes"]["after"]["10"]
    for figures in (before, after):
        assert figures["bytes"] > 10_000 and figures["bytes_per_answer"] == figures["bytes"] / 10
        assert figures["first_render_ms"] > 0 and figures["render_seconds"] > 0
    # two different pages were measured: the older one draws every answer as markup
    assert before["bytes"] != after["bytes"]
    # (a / 10) / (b / 10) is a / b only to the last bit: compared as floats are
    assert results["ratio"]["10"]["bytes_per_answer"] == pytest.approx(after["bytes"] / before["bytes"])
    title, header, rows = report.table(results)
    assert [r[1] for r in rows] == ["before", "after"] and "bytes/answer" in header
    assert "HTML report at scale" in markdown_table(title, header, rows)
