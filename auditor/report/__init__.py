"""The report: an audit result in, one self-contained HTML file out.

Jinja2 templates from ``reports_templates/`` (package data), autoescaped, strict undefined, CSS
and JS inline, no network fetches. :func:`render_stored_run` re-renders a run from the store.
"""

from __future__ import annotations

from auditor.report._context import ReportError
from auditor.report._render import render_report, write_report
from auditor.report._stored import list_runs, render_stored_run

__all__ = [
    "ReportError",
    "list_runs",
    "render_report",
    "render_stored_run",
    "write_report",
]
