"""The HTML audit report: one self-contained file rendered from the Jinja2 templates.

One job: build the :class:`~auditor.report._context.ReportContext` of an
:class:`~auditor.results.AuditResult`, render ``report.html.j2`` with it and, if asked, write it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from auditor.report._context import ReportContext, build_context
from auditor.report._data import page_data
from auditor.report._templates import template
from auditor.results import AuditResult


def render_report(result: AuditResult, *, policy_rationale: str | None = None) -> str:
    """Render the audit as one self-contained HTML document.

    Args:
        result: the audit's public result; its ``summary`` must be a dumped metrics ``Summary``.
        policy_rationale: the policy file's rationale, shown beside its name and hash.

    Returns:
        The HTML document as a string.

    Raises:
        ReportError: the result's summary is not a metrics ``Summary``.
    """
    context = build_context(result, policy_rationale=policy_rationale)
    conversations = {f"a{i}": a.conversation_id for i, a in enumerate(result.answers)}
    return render_context(replace(context, data=page_data(context.answers, conversations)))


def write_report(result: AuditResult, path: str | Path, *, policy_rationale: str | None = None) -> Path:
    """Render the report and write it to ``path`` (UTF-8); returns the path written."""
    target = Path(path)
    target.write_text(render_report(result, policy_rationale=policy_rationale), encoding="utf-8")
    return target


def render_context(context: ReportContext) -> str:
    return template().render(report=context)
