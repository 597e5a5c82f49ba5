"""The Jinja2 environment for the report: templates, CSS and JS read from package data.

Autoescaped (trace content is untrusted and nothing from a trace is marked safe) and strict
(``StrictUndefined``: a missing figure fails the render instead of printing an empty cell); the
stylesheet and script are included inline, so the document makes no network request.

The environment is made once per process and keeps its compiled templates: compiling
``report.html.j2`` and its includes took about 0.2 s, paid by every report (``auditor serve``'s
attribution page renders one per request). The templates are package data, not edited at run time.
"""

from __future__ import annotations

import functools
from importlib import resources

from jinja2 import Environment, FunctionLoader, StrictUndefined, Template

from auditor.metrics import Interval, Rate


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=FunctionLoader(_load_template),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # the page's one JSON block: compact (it is most of a large report's bytes) and, as always,
    # with <, >, & and ' escaped so trace text cannot close the script element
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
    env.filters["pct"] = pct
    env.filters["ci"] = ci
    return env


def template() -> Template:
    return environment().get_template("report.html.j2")


def _load_template(name: str) -> str | None:
    item = resources.files("auditor.reports_templates").joinpath(name)
    return item.read_text(encoding="utf-8") if item.is_file() else None


def pct(value: float | Rate | None, digits: int = 1) -> str:
    number = value.value if isinstance(value, Rate) else value
    return "n/a" if number is None else f"{number * 100:.{digits}f}%"


def ci(interval: Interval | None) -> str:
    return "n/a" if interval is None else f"{interval.low * 100:.1f}\N{EN DASH}{interval.high * 100:.1f}%"
