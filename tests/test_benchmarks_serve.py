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
    results = serve.run(tmp_path, count=serve.CLIENTS, soak_seconds=0.5)
    assert results["requests"] == serve.CLIENTS and results["spans_per_second"] > 0
    assert results["soak_spans"] > 0 and results["rss_peak_mb"] >= results["rss_start_mb"] > 0
    assert "OTLP/HTTP receiver at saturation" in render({"serve": results})
