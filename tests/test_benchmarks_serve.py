"""A tiny run of the ``auditor serve`` benchmark's code path (no figure is asserted against a clock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import serve
from benchmarks.__main__ import render

pytestmark = pytest.mark.serve_live


def test_the_serve_benchmark_runs_on_small_inputs(tmp_path: Path) -> None:
    bodies = serve.requests(2)
    assert len(set(bodies)) == 2 and serve.spans_in(bodies[0]) == 17 * serve.TRACES_PER_REQUEST
    assert serve.file_rate(bodies, tmp_path)["spans"] == 2 * 17 * serve.TRACES_PER_REQUEST
    results = serve.run(tmp_path, count=4, soak_seconds=0.5, clients=(2, 4))
    assert set(results["stores"]) == {"sqlite", "postgresql"}, results["skipped"]
    for figures in results["stores"].values():
        loads = figures["loads"]
        assert [load["clients"] for load in loads] == [2, 4]
        assert all(load["requests"] == 4 and load["spans"] == 4 * 510 for load in loads)
        assert all(load["stored_seconds"] >= load["ack_seconds"] > 0 for load in loads)
        # Each client count at the target, then the first offered the file adapter's whole rate.
        assert [load["clients"] for load in figures["paced"]] == [2, 4, 2]
        offered = [load["offered_spans_per_second"] for load in figures["paced"]]
        assert offered[0] == offered[1] < offered[2]
        assert offered[2] / offered[0] == pytest.approx(serve.CAPACITY_SHARE / serve.PACED_SHARE)
        assert all(load["requests"] == 4 * serve.PACED_TIMES for load in figures["paced"])
        soak = figures["soak"]
        assert soak["spans"] > 0 and soak["rss_peak_mb"] >= soak["rss_start_mb"] > 0
        assert soak["rss_series_mb"][0] == round(soak["rss_start_mb"], 1)
        assert 1 <= len(soak["rss_series_mb"]) <= soak["rss_samples"]
    rendered = render({"serve": results})
    assert "OTLP/HTTP receiver" in rendered and "postgresql: 4 clients paced" in rendered
