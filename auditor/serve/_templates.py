"""The web pages' Jinja2 environment: templates under ``reports_templates/serve/`` (package data).

Autoescaped and strict, as the report's: trace content is untrusted and is only ever printed
through autoescaping (nothing from a trace is marked safe), and a missing value fails the render
instead of printing an empty cell. The pages load nothing from elsewhere: the stylesheet is inline
and there is no script, so the Content-Security-Policy can forbid scripts outright.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from importlib import resources

from jinja2 import Environment, FunctionLoader, StrictUndefined

from auditor.judges import describe_unjudged
from auditor.metrics import Interval, Rate

#: The report's policy (no network, inline styles), tightened for pages a server sends: no
#: script at all, forms post only here, and no framing (clickjacking).
PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
#: For the report's own attribution view, which runs its inline script.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def _load(name: str) -> str | None:
    item = resources.files("auditor.reports_templates").joinpath("serve", name)
    return item.read_text(encoding="utf-8") if item.is_file() else None


def pct(value: float | Rate | None, digits: int = 1) -> str:
    number = value.value if isinstance(value, Rate) else value
    return "n/a" if number is None else f"{number * 100:.{digits}f}%"


def ci(interval: Interval | None) -> str:
    return "n/a" if interval is None else f"{interval.low * 100:.1f}\N{EN DASH}{interval.high * 100:.1f}%"


def when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


@cache
def environment() -> Environment:
    env = Environment(
        loader=FunctionLoader(_load),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=pct, ci=ci, when=when, unjudged=describe_unjudged)
    return env


def render(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)
